"""Bad input through the Python API (the quick part of the reliability checks; the rest is in docs/reliability.md)."""

import re
from datetime import timedelta

import pytest
from conftest import run_python
from pyspark.errors import IllegalArgumentException
from pyspark.sql import functions as F

import spark_suppress as ss
from spark_suppress.testing import TestDriver

LIMIT = ss.Suppressed.until_time_limit(timedelta(seconds=1), ss.BufferConfig.unbounded())


@pytest.fixture
def driver(spark):
    d = TestDriver(spark)
    yield d
    d.stop()


def test_columns_named_like_internal_ones_are_refused(driver):
    updates = driver.add_input("updates", "key STRING, ts TIMESTAMP, __spark_suppress_seq LONG", timestamp="ts")
    with pytest.raises(IllegalArgumentException, match="names starting with '__spark_suppress_' are reserved"):
        ss.suppress(updates, key="key", timestamp="ts", suppressed=LIMIT)


def test_a_static_dataframe_is_refused_by_both_operators(spark, driver):
    static = spark.createDataFrame([("a", 1)], "key STRING, n LONG").withColumn("ts", F.current_timestamp())
    with pytest.raises(IllegalArgumentException, match="the input is not a streaming DataFrame"):
        ss.suppress(static, key="key", timestamp="ts", suppressed=LIMIT)
    table = driver.add_input("table", "key STRING, at TIMESTAMP, tier STRING")
    with pytest.raises(IllegalArgumentException, match="the stream is not a streaming DataFrame"):
        ss.join_versioned(static, table, on="key", stream_timestamp="ts", table_timestamp="at")


def test_pre_1970_event_times_stop_suppress_with_the_reason(spark):
    d = TestDriver(spark, "key STRING, ts TIMESTAMP, n LONG", timestamp="ts")
    d.start(ss.suppress(d.input, key="key", timestamp="ts", suppressed=LIMIT.with_name("old-times")))
    try:
        from datetime import datetime

        with pytest.raises(
            Exception, match="suppress 'old-times': an input row has the event time .*before 1970-01-01"
        ):
            d.step([("a", datetime(1960, 1, 1), 1)])
    finally:
        d.stop()


def test_zero_durations_are_accepted_and_negative_ones_refused(spark):
    d = TestDriver(spark, "key STRING, ts TIMESTAMP, n LONG", timestamp="ts")
    for zero in (0, timedelta(0)):
        ss.suppress(
            d.input,
            key="key",
            timestamp="ts",
            suppressed=ss.Suppressed.until_time_limit(zero, ss.BufferConfig.unbounded()),
        )
    with pytest.raises(IllegalArgumentException, match="must be >= 0"):
        ss.suppress(
            d.input,
            key="key",
            timestamp="ts",
            suppressed=ss.Suppressed.until_time_limit(timedelta(milliseconds=-1), ss.BufferConfig.unbounded()),
        )


def test_the_join_on_a_spark_connect_server_without_the_plugin_gets_a_clear_error():
    result = run_python(
        "from pyspark.sql import SparkSession\n"
        "import spark_suppress as ss\n"
        "import os\n"
        # Spark 3.5's Connect server jar (the Makefile fetches it); later lines' PySpark carries the server.
        "spark = SparkSession.builder.remote('local[1]')\n"
        "spark = spark.config('spark.jars', os.environ.get('SPARK_SUPPRESS_SERVER_JARS', ''))\n"
        "spark = spark.getOrCreate()\n"
        "try:\n"
        "    ss.join_versioned(spark.range(1), spark.range(1), on='id', stream_timestamp='id', table_timestamp='id')\n"
        "except ss.ConnectPluginMissingError as e:\n"
        "    print('ERR:' + str(e))\n"
        "spark.stop()\n",
        # PySpark connects to a local server's ephemeral port only under SPARK_TESTING; 15002 may be taken here.
        env_extra={"SPARK_TESTING": "1"},
    )
    # A Connect server without the plugin: the error names the jar and the setting, not Spark's "No handler found".
    assert (
        "ERR:the Spark Connect server cannot run this: spark-suppress's operators need its relation plugin"
        in result.stdout
    ), result.stderr[-3000:]
    assert (
        "--conf spark.connect.extensions.relation.classes=io.github.sparksuppress.connect.SparkSuppressRelationPlugin"
        in result.stdout
    )
    assert "--jars " in result.stdout and re.search(r"spark-suppress_\d\.\d_2\.1\d-", result.stdout)


def test_a_damaged_state_file_is_named_with_its_operator(spark, tmp_path):
    import glob
    import os
    import shutil

    from pyspark.errors import StreamingQueryException

    source = tmp_path / "in"
    source.mkdir()
    (source / "0.json").write_text('{"key": "a", "ts": "2024-01-01T00:00:00Z", "n": 1}\n')

    def start(checkpoint):
        events = spark.readStream.schema("key STRING, ts TIMESTAMP, n LONG").json(str(source))
        out = ss.suppress(
            events.withWatermark("ts", "0 seconds"),
            key="key",
            timestamp="ts",
            suppressed=LIMIT.with_name("damaged-state"),
        )
        return out.writeStream.format("noop").option("checkpointLocation", checkpoint).start()

    query = start(str(tmp_path / "checkpoint"))
    query.processAllAvailable()
    query.stop()
    # A copy of the checkpoint: its state is read from the files, not from the state stores this JVM keeps loaded.
    shutil.copytree(tmp_path / "checkpoint", tmp_path / "copy")
    damaged = max(glob.glob(str(tmp_path / "copy" / "state" / "0" / "*" / "1.delta")), key=os.path.getsize)
    os.truncate(damaged, os.path.getsize(damaged) // 2)
    (source / "1.json").write_text('{"key": "b", "ts": "2024-01-01T00:00:05Z", "n": 2}\n')

    query = start(str(tmp_path / "copy"))
    with pytest.raises(StreamingQueryException):
        query.processAllAvailable()
    explained = ss.explain_state_failure(query)
    assert explained is not None and damaged in explained and "spark-suppress operator 'damaged-state'" in explained
