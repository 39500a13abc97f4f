"""Shared helpers of the deployment checks (`make reliability`): real processes, no test harness in between."""

import glob
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "reliability", "scripts")
VERSION = open(os.path.join(ROOT, "VERSION")).read().strip()
# The fault tests import the job script they submit (its input generator is their reference's input too).
sys.path.insert(0, SCRIPTS)


def _line_jar() -> tuple:
    """The jar name of the installed PySpark's line (the build writes it to target/<project>/)."""
    from spark_suppress._jars import jar_name, spark_line

    line, scala = spark_line()
    return f"spark{line.replace('.', '')}_{scala.replace('.', '')}", jar_name(line, scala), scala


_PROJECT, _JAR_NAME, _SCALA = _line_jar()
JAR = os.path.join(ROOT, "target", _PROJECT, f"scala-{_SCALA}", _JAR_NAME)
BUNDLED_JAR = os.path.join(ROOT, "python", "spark_suppress", "jars", _JAR_NAME)


def pyspark_home() -> str:
    import pyspark

    return os.path.dirname(pyspark.__file__)


def spark_submit() -> str:
    """PySpark's pip package ships Spark's launcher scripts."""
    return os.path.join(pyspark_home(), "bin", "spark-submit")


@pytest.fixture(scope="session")
def jar() -> str:
    if not os.path.isfile(JAR):
        pytest.fail(f"{JAR} is missing: build it first (make jar, which `make reliability` depends on)")
    return JAR


def run(cmd, timeout: int, env_extra=None, cwd=None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd or ROOT)


def result_of(proc: subprocess.CompletedProcess) -> dict:
    """The JSON a script printed after ``RESULT``; fails with its output if there is none."""
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, f"exit {proc.returncode}\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-6000:]}"
    return json.loads(lines[-1][len("RESULT ") :])


def python_env() -> dict:
    """Environment for spark-submit: this interpreter for the driver and the Python workers."""
    return {
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "PYTHONPATH": os.path.join(ROOT, "python"),
    }


def cached_pyspark_wheel():
    """The pyspark wheel pip built and cached when the project's venv was made, if there is one."""
    found = sorted(glob.glob(os.path.expanduser("~/.cache/pip/wheels/**/pyspark-4.3.0-*.whl"), recursive=True))
    return found[-1] if found else None
