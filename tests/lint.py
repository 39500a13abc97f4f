"""`make lint`: ruff (lint, then the format check; ruff.toml) on every Python file, mypy on the package (mypy.ini).

Runs all three even when one fails, so one run shows everything to fix, and ends with the closing line that
tests/lines.py counts (``<passed> passed, <failed> failed``). ``ruff format .`` fixes what the format check reports.
"""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHECKS = [
    ("ruff check", ["ruff", "check", "."]),
    ("ruff format --check", ["ruff", "format", "--check", "."]),
    ("mypy python/spark_suppress", ["mypy"]),
]


def main() -> int:
    failed = []
    for name, args in CHECKS:
        print(f"$ {name}", flush=True)
        if subprocess.run([sys.executable, "-m", *args], cwd=ROOT).returncode != 0:
            failed.append(name)
    for name in failed:
        print(f"FAIL {name}")
    print(f"{len(CHECKS) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
