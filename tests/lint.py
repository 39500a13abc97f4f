"""`make lint`: ruff (lint, then the format check; ruff.toml) on every Python file, mypy on the package (mypy.ini),
scalafmt's check (.scalafmt.conf) on every Scala file, at most 120 characters per line of Scala, and that the
benchmarks' JVM project compiles: it builds the core's sources on its own, so a core change that reaches outside
the core breaks `make bench` otherwise unseen.

Runs every check even when one fails, so one run shows everything to fix, and ends with the closing line that
tests/lines.py counts (``<passed> passed, <failed> failed``). ``make format`` fixes what the format checks report.
"""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PYTHON_CHECKS = [
    ("ruff check", ["ruff", "check", "."]),
    ("ruff format --check", ["ruff", "format", "--check", "."]),
    ("mypy python/spark_suppress", ["mypy"]),
]
# Two lines' projects between them compile every Scala folder (jvm/src, every shim, the Connect plugin); bench
# holds the benchmarks' JVM code.
SCALAFMT = ["build/sbt", "spark43_213/scalafmtCheckAll", "spark35_212/scalafmtCheckAll", "bench/scalafmtCheckAll"]
SCALA_FOLDERS = ["jvm", "benchmarks/jvm"]
BENCH_COMPILE = ["build/sbt", "bench/compile"]
MAX_COLUMNS = 120


def long_scala_lines() -> list:
    """Scala lines longer than MAX_COLUMNS (scalafmt cannot break a string literal or a comment)."""
    found = []
    for folder in SCALA_FOLDERS:
        for directory, _, files in os.walk(os.path.join(ROOT, folder)):
            for name in files:
                if name.endswith(".scala"):
                    path = os.path.join(directory, name)
                    with open(path, encoding="utf-8") as f:
                        for number, line in enumerate(f, 1):
                            if len(line.rstrip("\n")) > MAX_COLUMNS:
                                found.append(f"{os.path.relpath(path, ROOT)}:{number}")
    return found


def main() -> int:
    failed = []
    checks = len(PYTHON_CHECKS) + 3
    for name, args in PYTHON_CHECKS:
        print(f"$ {name}", flush=True)
        if subprocess.run([sys.executable, "-m", *args], cwd=ROOT).returncode != 0:
            failed.append(name)
    print("$ scalafmt --check", flush=True)
    if subprocess.run(SCALAFMT, cwd=ROOT).returncode != 0:
        failed.append("scalafmt --check (make format fixes it)")
    print(f"$ Scala lines of at most {MAX_COLUMNS} characters", flush=True)
    long_lines = long_scala_lines()
    for where in long_lines:
        print(f"longer than {MAX_COLUMNS}: {where}")
    if long_lines:
        failed.append(f"Scala line length ({len(long_lines)} lines)")
    print("$ sbt bench/compile", flush=True)
    if subprocess.run(BENCH_COMPILE, cwd=ROOT).returncode != 0:
        failed.append("bench/compile (the benchmarks' JVM project, benchmarks/jvm)")
    for name in failed:
        print(f"FAIL {name}")
    print(f"{checks - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
