"""A local Spark Connect server with spark-suppress's plugins, in this process, on loopback and a free port, and a
Connect client session on it (the Connect test runs: conftest, the conformance runner, the pyspark-client check).

PySpark's ``builder.remote("local[2]")`` starts the same in-process server but always on port 15002 (it looks up an
ephemeral port only under SPARK_TESTING, which also switches Spark's JVM into its own test mode); other runs on a
shared machine may hold 15002. So the server is started here, as PySpark does it, and the client is pointed at it.
"""

from __future__ import annotations

import os
from typing import Dict, Tuple


def start(app_name: str, conf: Dict[str, str]) -> Tuple[object, int]:
    """Start the server with ``conf`` (plus the plugins) and return (a Connect session on it, the server's port)."""
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession as ClassicSession
    from session_conf import quick

    import spark_suppress as ss

    plugin_conf = ss.connect_server_conf()
    # Spark 3.5's Connect server is a separate jar, which the Makefile fetches (SPARK_SUPPRESS_SERVER_JARS).
    extra_jars = os.environ.get("SPARK_SUPPRESS_SERVER_JARS", "")
    if extra_jars:
        plugin_conf["spark.jars"] = ",".join([plugin_conf["spark.jars"], extra_jars])
    server_conf = (
        SparkConf()
        .setMaster("local[2]")
        .setAppName(app_name)
        .setAll(list(quick(conf).items()))
        .setAll(list(plugin_conf.items()))
        .set("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
        .set("spark.ui.showConsoleProgress", "false")
        .set("spark.connect.grpc.binding.address", "127.0.0.1")
        .set("spark.connect.grpc.binding.port", "0")
    )
    server = ClassicSession(SparkContext.getOrCreate(server_conf))
    service = getattr(server._jvm, "org.apache.spark.sql.connect.service.SparkConnectService$")
    port = getattr(service, "MODULE$").localPort()
    # What PySpark sets for its own local Connect sessions: functions such as F.col build Connect columns.
    os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    return ConnectSession.builder.remote(f"sc://127.0.0.1:{port}").getOrCreate(), port


def stop(client) -> None:
    from pyspark.sql import SparkSession as ClassicSession

    client.stop()
    os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)
    server = ClassicSession._instantiatedSession
    if server is not None:
        server.stop()


def server_session():
    """The classic session behind the in-process server (for its log level)."""
    from pyspark.sql import SparkSession as ClassicSession

    return ClassicSession._instantiatedSession


def another_client():
    """A second Connect client session on the running server: to the server, another user's session. Built with the
    constructor, not the builder, so that the tests' own session stays PySpark's default and active one."""
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    service = getattr(server_session()._jvm, "org.apache.spark.sql.connect.service.SparkConnectService$")
    return ConnectSession(connection=f"sc://127.0.0.1:{getattr(service, 'MODULE$').localPort()}")
