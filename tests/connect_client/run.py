"""The wheel with only ``pyspark-client`` (no classic PySpark, no JVM) against a Spark Connect server with the plugin.

Usage: python tests/connect_client/run.py CLIENT_PYTHON   (make test-connect-client builds that venv). This process,
in the project's venv, serves a local Spark Connect server on loopback with spark-suppress's jar and plugins; the
client venv's pytest runs client_checks.py against it. Exits with the client's status.
"""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(client_python: str) -> int:
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import connect_server

    spark, port = connect_server.start(
        "spark-suppress-connect-client",
        {"spark.sql.shuffle.partitions": "1", "spark.sql.session.timeZone": "UTC", "spark.ui.enabled": "false"},
    )
    try:
        env = dict(
            os.environ, SPARK_SUPPRESS_REMOTE=f"sc://127.0.0.1:{port}", SPARK_SUPPRESS_SERVER_VERSION=spark.version
        )
        env.pop("SPARK_REMOTE", None)
        env.pop("SPARK_CONNECT_MODE_ENABLED", None)
        here = os.path.dirname(os.path.abspath(__file__))
        # --confcutdir keeps tests/conftest.py (which builds full-PySpark sessions) out of the client's run; the
        # working directory keeps the checkout's python/ off the client's path, so the installed wheel is tested.
        return subprocess.call(
            [
                client_python,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--confcutdir",
                here,
                os.path.join(here, "client_checks.py"),
            ],
            env=env,
            cwd=here,
        )
    finally:
        connect_server.stop(spark)


if __name__ == "__main__":
    sys.exit(main(os.path.abspath(sys.argv[1])))
