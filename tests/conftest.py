import os
import sys
import time

import pytest
from session_conf import quick

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# PySpark gives timestamps as naive datetimes in this process's local time zone, and the tests read them as UTC (the
# session's zone): pinned here, before any Spark starts (the JVMs inherit it), so that a machine in another zone
# reads the same instants. The driver's own conversions are tested under another zone too (test_suppress.py).
os.environ["TZ"] = "UTC"
time.tzset()


# SPARK_SUPPRESS_CONNECT=1 (make test-connect) runs the same tests on a Spark Connect session: an in-process local
# Connect server on loopback with the jar and the plugins, started once and stopped after the session.
CONNECT = os.environ.get("SPARK_SUPPRESS_CONNECT") == "1"
# test_connect.py needs a Connect session; the py4j-only tests (the facade itself, packaging) need a classic one.
collect_ignore = (
    ["test_packaging.py", "test_reliability.py", "test_wire.py"]
    if CONNECT
    else ["test_connect.py", "test_connect_fuzz.py"]
)


# The test settings (session_conf.quick) are added where a session starts: here for py4j, by connect_server for
# Connect; a run that starts none (the benchmark and README tests) compiles nothing for them.
CONF = {
    "spark.sql.shuffle.partitions": "2",
    "spark.ui.enabled": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.extraJavaOptions": "-Duser.timezone=UTC",
}


def _session():
    from pyspark.sql import SparkSession

    import spark_suppress as ss

    builder = SparkSession.builder.master("local[2]").appName("spark-suppress-tests").config(map=quick(CONF))
    return ss.configure(builder).getOrCreate()


@pytest.fixture(scope="session")
def spark():
    if CONNECT:
        import connect_server

        session, _ = connect_server.start("spark-suppress-tests", CONF)
        yield session
        connect_server.stop(session)
        return
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


@pytest.fixture(autouse=True)
def _no_query_outlives_its_test(request):
    """Fails the test that leaves a streaming query running, and stops it: such a query keeps the session's cores
    busy for every later test (with a processing-time trigger it runs a micro-batch every few milliseconds)."""
    yield
    if "spark" not in request.fixturenames:
        return
    left = request.getfixturevalue("spark").streams.active
    for query in left:
        query.stop()
    assert not left, f"streaming queries left running by the test: {[query.name or query.id for query in left]}"
