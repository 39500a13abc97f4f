import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _session():
    from pyspark.sql import SparkSession

    import spark_suppress as ss

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("spark-suppress-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
    )
    return ss.configure(builder).getOrCreate()


@pytest.fixture(scope="session")
def spark():
    session = _session()
    yield session
    session.stop()


def run_python(code: str, env_extra: dict | None = None, timeout: int = 300):
    """Run a Python snippet in a fresh interpreter (a fresh JVM), returning the completed process."""
    import subprocess

    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT
    )
