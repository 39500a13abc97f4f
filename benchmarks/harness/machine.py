"""Where and with what a run was made: machine, load and versions."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from typing import Any, Dict


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gb() -> float:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return 0.0


def java_version() -> str:
    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()
        return " / ".join(s.strip() for s in out[:2])
    except OSError:
        return "unknown"


def load_average() -> float:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return -1.0


def machine() -> Dict[str, Any]:
    return {
        "cores": os.cpu_count(),
        "memory_gb": _memory_gb(),
        "cpu_model": _cpu_model(),
        "os": platform.platform(),
        "java": java_version(),
        "python": sys.version.split()[0],
    }


def versions(root: str, spark=None) -> Dict[str, Any]:
    with open(os.path.join(root, "VERSION")) as fh:
        v: Dict[str, Any] = {"spark-suppress": fh.read().strip(), "python": sys.version.split()[0]}
    try:
        import pyspark

        v["pyspark"] = pyspark.__version__
    except ImportError:
        pass
    if spark is not None:
        v["spark"] = spark.version
        v["scala"] = spark.sparkContext._jvm.scala.util.Properties.versionNumberString()
        import spark_suppress

        v["spark-suppress-python"] = spark_suppress.__version__
        v["spark-suppress-jar"] = spark_suppress.jar_path()
    for module in ("pandas", "pyarrow", "numpy"):
        try:
            v[module] = __import__(module).__version__
        except ImportError:
            pass
    return v


def git_commit(root: str) -> str:
    try:
        return (
            subprocess.run(
                ["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
            ).stdout.strip()
            or "unknown"
        )
    except OSError:
        return "unknown"


def write_results(results_dir: str, kind: str, stamp, script: str, argv, root: str, fields: Dict[str, Any]) -> str:
    """Writes a stand-alone script's results file, ``<results_dir>/<UTC stamp>-<kind>.json``: when, the command,
    the commit and the machine, then ``fields``. Returns its path."""
    out = {
        "date": stamp.isoformat(timespec="seconds"),
        "command": f"benchmarks/{script} " + " ".join(argv if argv is not None else sys.argv[1:]),
        "git_commit": git_commit(root),
        "machine": machine(),
        **fields,
    }
    os.makedirs(results_dir, exist_ok=True)
    path = os.path.join(results_dir, f"{stamp.strftime('%Y%m%dT%H%M%SZ')}-{kind}.json")
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1, default=str)
    return path
