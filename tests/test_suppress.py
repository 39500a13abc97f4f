"""The Python suppress API: behaviour through the real operator, and every validation error."""

import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone

import pytest
from conftest import run_python
from pyspark.errors import IllegalArgumentException
from pyspark.sql import functions as F

import spark_suppress as ss
from spark_suppress.testing import TestDriver

SCHEMA = "key STRING, ts TIMESTAMP, value STRING, deleted BOOLEAN"
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def at(ms: int) -> datetime:
    return T0 + timedelta(milliseconds=ms)


def ms_of(dt: datetime) -> int:
    if dt.tzinfo is None:  # PySpark returns naive datetimes in the local time zone (UTC: conftest.py pins it)
        dt = dt.replace(tzinfo=timezone.utc)
    return int((dt - T0) / timedelta(milliseconds=1))


def kvt(rows):
    return [(r["key"], r["value"], ms_of(r["ts"])) for r in rows]


@contextmanager
def driver_for(spark, build, schema=SCHEMA):
    d = TestDriver(spark, schema, timestamp="ts")
    d.start(build(d.input))
    try:
        yield d
    finally:
        d.stop()


@contextmanager
def one_partition(spark):
    """Buffer bounds hold per state partition; one partition reproduces Kafka's single-task tests."""
    spark.conf.set("spark.sql.shuffle.partitions", "1")
    try:
        yield
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", "2")


def test_until_time_limit_is_non_resetting_and_emits_the_latest_update(spark):
    s = ss.Suppressed.until_time_limit(timedelta(milliseconds=2), ss.BufferConfig.unbounded())
    with driver_for(spark, lambda df: ss.suppress(df, key="key", timestamp="ts", suppressed=s)) as d:
        assert d.step([("v1", at(0), "1", False)]) == []
        assert d.step([("v1", at(1), "0", False)]) == []
        assert d.step([("v2", at(1), "1", False)]) == []
        assert kvt(d.step([("v1", at(2), "1", False)])) == [("v1", "1", 2)]
        assert kvt(d.step([("tick", at(3), "1", False)])) == [("v2", "1", 1)]


def test_with_timer_reset_debounces(spark):
    s = ss.Suppressed.until_time_limit(2, ss.BufferConfig.unbounded()).with_timer_reset()
    with driver_for(spark, lambda df: ss.suppress(df, key=["key"], timestamp="ts", suppressed=s)) as d:
        d.step([("A", at(0), "w", False)])
        d.step([("A", at(1), "x", False)])
        assert d.step([("B", at(2), "y", False)]) == []
        assert kvt(d.step([("C", at(3), "z", False)])) == [("A", "x", 1)]


def test_tombstones_are_forwarded_by_until_time_limit(spark):
    s = ss.Suppressed.until_time_limit(0, ss.BufferConfig.unbounded())
    with driver_for(
        spark, lambda df: ss.suppress(df, key="key", timestamp="ts", suppressed=s, tombstone="deleted")
    ) as d:
        out = d.step([("A", at(5), None, True)])
        assert [(r["key"], r["deleted"]) for r in out] == [("A", True)]


def test_until_window_closes_with_a_window_struct(spark):
    schema = SCHEMA + ", window STRUCT<start: TIMESTAMP, end: TIMESTAMP>"
    s = ss.Suppressed.until_window_closes(ss.BufferConfig.unbounded()).with_name("final-windows")

    def build(df):
        return ss.suppress(df, key="key", timestamp="ts", suppressed=s, window="window", grace=1, tombstone="deleted")

    with driver_for(spark, build, schema) as d:
        assert d.step([("hey", at(99), "7", False, (at(99), at(100)))]) == []
        assert d.step([("d1", at(100), "7", False, (at(100), at(101)))]) == []
        out = d.step([("d2", at(101), "7", False, (at(101), at(102)))])
        assert [(r["key"], ms_of(r["window"]["end"])) for r in out] == [("hey", 100)]


@pytest.mark.parametrize("late", ["drop", "emit"])
def test_until_window_closes_lets_an_update_for_a_closed_window_out_flagged_when_asked(spark, late):
    schema = SCHEMA + ", window STRUCT<start: TIMESTAMP, end: TIMESTAMP>"
    s = ss.Suppressed.until_window_closes(ss.BufferConfig.unbounded()).with_name(f"late-{late}")

    def build(df):
        return ss.suppress(df, key="key", timestamp="ts", suppressed=s, window="window", grace=1, late=late)

    def seen(rows):
        return [(r["key"], r["value"], r["late"] if late == "emit" else None) for r in rows]

    flag = (lambda f: f) if late == "emit" else (lambda f: None)
    with driver_for(spark, build, schema) as d:
        assert d.step([("hey", at(99), "7", False, (at(99), at(100)))]) == []
        assert seen(d.step([("d2", at(101), "7", False, (at(101), at(102)))])) == [("hey", "7", flag(False))]
        # Kafka lets the update out at once, like a second final result; flagged, it says what it is.
        assert seen(d.step([("hey", at(99), "8", False, (at(99), at(100)))])) == [("hey", "8", flag(True))]
        d.restart()
        assert d.advance() == []
        assert seen(d.step([("x", at(103), "1", False, (at(103), at(104)))])) == [("d2", "7", flag(False))]


def test_late_emit_is_refused_for_until_time_limit(spark):
    s = ss.Suppressed.until_time_limit(timedelta(milliseconds=10), ss.BufferConfig.unbounded())
    with driver_for(spark, lambda df: df) as d:
        with pytest.raises(
            IllegalArgumentException, match='late="emit" applies to until_window_closes only.*Drop the late argument'
        ):
            ss.suppress(d.input, key="key", timestamp="ts", suppressed=s, late="emit")


def test_until_window_closes_with_start_and_end_columns(spark):
    schema = SCHEMA + ", wstart TIMESTAMP, wend TIMESTAMP"
    s = ss.Suppressed.until_window_closes(ss.BufferConfig.unbounded())

    def build(df):
        return ss.suppress(df, key="key", timestamp="ts", suppressed=s, window=("wstart", "wend"), grace=timedelta(0))

    with driver_for(spark, build, schema) as d:
        assert d.step([("hey", at(5), "7", False, at(0), at(100))]) == []
        assert kvt(d.step([("other", at(100), "7", False, at(100), at(200))])) == [("hey", "7", 5)]


def test_max_records_emit_early_evicts_the_oldest(spark):
    s = ss.Suppressed.until_time_limit(ss._durations.FOREVER_MS, ss.BufferConfig.max_records(2).emit_early_when_full())
    with (
        one_partition(spark),
        driver_for(spark, lambda df: ss.suppress(df, key="key", timestamp="ts", suppressed=s)) as d,
    ):
        d.step([("A", at(0), "w", False)])
        d.step([("A", at(1), "x", False)])
        d.step([("B", at(2), "y", False)])
        assert kvt(d.step([("C", at(3), "z", False)])) == [("A", "x", 1)]


def test_max_bytes_counts_kafka_sizes(spark):
    # Kafka's estimate: 28 + key + value columns ("value" and the boolean "deleted"): 28 + 1 + 2 + 1 = 32 per entry.
    s = ss.Suppressed.until_time_limit(ss._durations.FOREVER_MS, ss.BufferConfig.max_bytes(64).emit_early_when_full())
    with (
        one_partition(spark),
        driver_for(spark, lambda df: ss.suppress(df, key="key", timestamp="ts", suppressed=s)) as d,
    ):
        assert d.step([("A", at(0), "xx", False)]) == []
        assert d.step([("B", at(1), "yy", False)]) == []
        assert kvt(d.step([("C", at(2), "zz", False)])) == [("A", "xx", 0)]


def test_a_stopped_test_driver_has_deleted_its_checkpoint_and_refuses_a_restart(spark):
    with driver_for(spark, lambda df: df) as d:
        assert kvt(d.step([("A", at(0), "x", False)])) == [("A", "x", 0)]
    with pytest.raises(Exception, match="the driver is stopped and its checkpoint deleted"):
        d.restart()


EVERY_TYPE = (
    "key STRING, ts TIMESTAMP, n LONG, i INT, x DOUBLE, price DECIMAL(10,2), day DATE, ok BOOLEAN, raw BINARY, "
    "ntz TIMESTAMP_NTZ, local TIMESTAMP, xs ARRAY<INT>, m MAP<STRING,LONG>, s STRUCT<a: INT, b: STRING>"
)


@contextmanager
def local_time_zone(name):
    """This process's local time zone, in which PySpark reads and gives naive datetimes (conftest.py pins UTC);
    the zone found is restored after."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = name
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = before
        time.tzset()


@pytest.mark.parametrize("zone", ["UTC", "America/New_York"])
def test_a_test_driver_reads_rows_of_every_column_type_as_create_data_frame_does(spark, zone):
    from datetime import date
    from decimal import Decimal

    from pyspark.sql import Row

    rows = [
        ("A", at(1), 2**40, 7, 0.5, Decimal("12.34"), date(2024, 2, 29), True, b"\x00\xff", datetime(2024, 1, 1, 2),
         datetime(2024, 7, 1, 12), [1, None, 3], {"k": 1}, (1, "one")),
        {"key": "B", "ts": at(2), "n": None, "i": None, "x": None, "price": None, "day": None, "ok": None, "raw": None,
         "ntz": None, "local": None, "xs": None, "m": None, "s": None},
        Row(key="C", ts=at(3), n=-1, i=-2, x=-0.25, price=Decimal("-0.01"), day=date(1969, 12, 31), ok=False,
            raw=bytearray(b"ab"), ntz=datetime(1970, 1, 1), local=datetime(2024, 1, 1), xs=[], m={},
            s=Row(a=None, b="")),
    ]  # fmt: skip
    with local_time_zone(zone):
        # PySpark's own conversion of the same rows is the reference the driver's must match, naive datetimes
        # (`local`) read in the local zone included.
        expected = spark.createDataFrame(rows, EVERY_TYPE).collect()
        with driver_for(spark, lambda df: df, schema=EVERY_TYPE) as d:
            got = d.step(rows)
    assert [r.asDict(recursive=True) for r in got] == [r.asDict(recursive=True) for r in expected]


def test_a_test_driver_refuses_a_row_of_the_wrong_type_giving_the_row_and_the_schema(spark):
    with driver_for(spark, lambda df: df) as d:
        with pytest.raises(
            TypeError,
            match=r"row 0 of the step, .*'not a timestamp'.* does not fit the input "
            r"struct<key:string,ts:timestamp,",
        ):
            d.step([("A", "not a timestamp", "x", False)])
        assert kvt(d.step([("A", at(0), "x", False)])) == [("A", "x", 0)]


def test_shut_down_when_full_stops_the_query_naming_the_operator(spark):
    s = ss.Suppressed.until_time_limit(
        ss._durations.FOREVER_MS, ss.BufferConfig.max_records(1).shut_down_when_full()
    ).with_name("alerts")
    with (
        one_partition(spark),
        driver_for(spark, lambda df: ss.suppress(df, key="key", timestamp="ts", suppressed=s)) as d,
    ):
        d.step([("v1", at(0), "1", False)])
        with pytest.raises(Exception, match=r"alerts buffer exceeded its max capacity. Currently \[2/1\] records"):
            d.step([("v2", at(1), "1", False)])


def test_buffered_records_survive_a_restart(spark):
    s = ss.Suppressed.until_time_limit(10, ss.BufferConfig.unbounded()).with_name("durable-py")
    with driver_for(spark, lambda df: ss.suppress(df, key="key", timestamp="ts", suppressed=s)) as d:
        d.step([("a", at(0), "1", False), ("b", at(1), "1", False)])
        d.restart()
        assert d.advance() == []
        assert sorted(kvt(d.step([("c", at(11), "1", False)]))) == [("a", "1", 0), ("b", "1", 1)]


def test_processing_time_clock(spark):
    # Wall-clock limits are not deterministic, so only their two certain outcomes are asserted: a zero limit lets
    # every update out in its own batch, and a one-day limit holds everything for the length of this test.
    zero = ss.Suppressed.until_time_limit(0, ss.BufferConfig.unbounded(), clock="processing")
    with driver_for(spark, lambda df: ss.suppress(df, key="key", timestamp="ts", suppressed=zero)) as d:
        assert kvt(d.step([("a", at(0), "1", False)])) == [("a", "1", 0)]
    day = ss.Suppressed.until_time_limit(timedelta(days=1), ss.BufferConfig.unbounded(), clock="processing")
    with driver_for(spark, lambda df: ss.suppress(df, key="key", timestamp="ts", suppressed=day)) as d:
        assert d.step([("a", at(0), "1", False)]) == []
        assert d.step([("a", at(10**9), "2", False)]) == []


def test_metrics_report_kafka_names(spark):
    s = ss.Suppressed.until_time_limit(2, ss.BufferConfig.unbounded()).with_name("metered-py")
    with driver_for(spark, lambda df: ss.suppress(df, key="key", timestamp="ts", suppressed=s)) as d:
        d.step([("a", at(0), "1", False)])
        d.step([("b", at(1), "1", False)])
        d.step([("c", at(2), "1", False)])
        m = ss.metrics(d.query)["metered-py"]
        assert m["suppression-emit-total"] == 1.0
        # From a worker thread too, which has no active session (the process's default one answers).
        with ThreadPoolExecutor(max_workers=1) as pool:
            assert pool.submit(lambda: ss.metrics(d.query)["metered-py"]["suppression-emit-total"]).result() == 1.0
        assert m["suppression-buffer-count-current"] == 2.0
        assert set(m) >= {
            "suppression-buffer-count-avg",
            "suppression-buffer-count-max",
            "suppression-buffer-size-current",
            "suppression-buffer-size-avg",
            "suppression-buffer-size-max",
        }
        # Restarted from its checkpoint (a new run of the same DataFrame), the operator still reports: b leaves at 3.
        d.restart()
        d.step([("d", at(3), "1", False)])
        after = ss.metrics(d.query)["metered-py"]
        assert after["suppression-emit-total"] == 2.0
        assert after["suppression-buffer-count-current"] == 2.0


# Validation: Python checks types; the JVM checks values, in Python's spelling


def test_python_checks_argument_types():
    with pytest.raises(TypeError, match="time_to_wait_for_more_events must be a datetime.timedelta or an int"):
        ss.Suppressed.until_time_limit("1s", ss.BufferConfig.unbounded())
    with pytest.raises(TypeError, match="buffer_config must be a BufferConfig"):
        ss.Suppressed.until_time_limit(1, 5)
    with pytest.raises(TypeError, match="max_bytes must be an int"):
        ss.BufferConfig.max_bytes(1.5)
    with pytest.raises(TypeError, match="name must be a string"):
        ss.Suppressed.until_window_closes(ss.BufferConfig.unbounded()).with_name(3)


def test_wire_fields_are_private_so_configs_come_from_the_factories():
    with pytest.raises(TypeError):
        ss.Suppressed("bogus", ss.BufferConfig.unbounded())
    with pytest.raises(TypeError):
        ss.BufferConfig(None, None, "sometimes")
    with pytest.raises(TypeError):
        ss.EmitStrategy("sometimes")


def _bad_values():
    unbounded = ss.BufferConfig.unbounded()
    return [
        # (suppressed, other arguments, the JVM's message in Python's spelling)
        (
            ss.Suppressed.until_time_limit(timedelta(seconds=-1), unbounded),
            {},
            r"time_to_wait_for_more_events must be >= 0, got timedelta\(milliseconds=-1000\)",
        ),
        (
            ss.Suppressed.until_time_limit(1, unbounded, clock="wall"),
            {},
            "clock must be 'event' or 'processing', got 'wall'",
        ),
        (ss.Suppressed.until_time_limit(1, ss.BufferConfig.max_records(-1)), {}, "max_records must be >= 0, got -1"),
        (
            ss.Suppressed.until_time_limit(1, ss.BufferConfig.max_bytes(10).with_size_model("bits")),
            {},
            "size_model must be 'kafka' or 'value_bytes', got 'bits'",
        ),
        (
            ss.Suppressed.until_window_closes(ss.BufferConfig.max_records(10).emit_early_when_full()),
            {"window": "w", "grace": 0},
            "until_window_closes accepts only strict buffer configs",
        ),
        (
            ss.Suppressed.until_window_closes(unbounded).with_name(" "),
            {"window": "w", "grace": 0},
            "name must be a non-empty string, got ' '",
        ),
        (
            ss.Suppressed.until_window_closes(unbounded).with_timer_reset(),
            {"window": "w", "grace": 0},
            "with_timer_reset\\(\\) applies to until_time_limit only",
        ),
        (
            ss.Suppressed.until_window_closes(unbounded),
            {"window": "w", "grace": -1},
            "grace must be >= 0, got timedelta\\(milliseconds=-1\\)",
        ),
        (
            ss.Suppressed.until_window_closes(unbounded),
            {"window": "w"},
            "until_window_closes needs grace.*timedelta\\(0\\) for none",
        ),
    ]


@pytest.mark.parametrize("case", range(len(_bad_values())))
def test_bad_values_raise_one_exception_class_with_python_spelling(stream, case):
    suppressed, kwargs, message = _bad_values()[case]
    with pytest.raises(IllegalArgumentException, match=message) as e:
        ss.suppress(stream, key="key", timestamp="ts", suppressed=suppressed, **kwargs)
    # Scala's spelling never reaches a Python user (Spark Connect appends the JVM's stack trace: the message is line 1).
    message = str(e.value).splitlines()[0]
    for scala in ("untilWindowCloses", "timeToWaitForMoreEvents", "maxRecords", "sizeModel", "Duration.ZERO", "PT-"):
        assert scala not in message


def test_buffer_configs_are_immutable_and_typed():
    eager = ss.BufferConfig.max_records(5)
    assert isinstance(eager, ss.EagerBufferConfig)
    strict = eager.shut_down_when_full()
    assert isinstance(strict, ss.StrictBufferConfig) and strict.max_records_bound == 5
    assert eager.when_full == "emitEarly"  # unchanged by the copy
    assert isinstance(ss.BufferConfig.unbounded().with_max_bytes(10), ss.StrictBufferConfig)
    assert isinstance(strict.with_max_bytes(3), ss.StrictBufferConfig)
    assert isinstance(ss.BufferConfig.max_bytes(3).with_no_bound(), ss.StrictBufferConfig)
    # a strict config is accepted for final results
    ss.Suppressed.until_window_closes(ss.BufferConfig.max_records(3).shut_down_when_full())


# Validation: JVM side, at build time


@pytest.fixture
def stream(spark):
    d = TestDriver(spark, SCHEMA, timestamp="ts")
    return d.input


LIMIT = ss.Suppressed.until_time_limit(1, ss.BufferConfig.unbounded())


def test_missing_and_mistyped_columns(stream):
    with pytest.raises(IllegalArgumentException, match="key 'user' is not a column of the input"):
        ss.suppress(stream, key="user", timestamp="ts", suppressed=LIMIT)
    with pytest.raises(IllegalArgumentException, match="timestamp column 'value' must be a timestamp"):
        ss.suppress(stream, key="key", timestamp="value", suppressed=LIMIT)
    with pytest.raises(IllegalArgumentException, match="tombstone column 'value' must be a boolean"):
        ss.suppress(stream, key="key", timestamp="ts", suppressed=LIMIT, tombstone="value")
    with pytest.raises(TypeError, match="key must be a column name or a list of column names"):
        ss.suppress(stream, key=3, timestamp="ts", suppressed=LIMIT)
    with pytest.raises(TypeError, match="window must be a struct column name"):
        ss.suppress(stream, key="key", timestamp="ts", suppressed=LIMIT, window=("a",))


def test_mode_specific_arguments(stream):
    with pytest.raises(IllegalArgumentException, match="grace applies to until_window_closes only"):
        ss.suppress(stream, key="key", timestamp="ts", suppressed=LIMIT, grace=5)
    final = ss.Suppressed.until_window_closes(ss.BufferConfig.unbounded())
    with pytest.raises(IllegalArgumentException, match="until_window_closes needs windowed input"):
        ss.suppress(stream, key="key", timestamp="ts", suppressed=final, grace=0)
    with pytest.raises(TypeError, match="suppressed must be a Suppressed"):
        ss.suppress(stream, key="key", timestamp="ts", suppressed=ss.BufferConfig.unbounded())


def test_spill_to_disk_requires_rocksdb(stream):
    spill = ss.Suppressed.until_time_limit(1, ss.BufferConfig.unbounded().spill_to_disk())
    with pytest.raises(IllegalArgumentException, match="RocksDBStateStoreProvider"):
        ss.suppress(stream, key="key", timestamp="ts", suppressed=spill)


def test_input_must_be_streaming_and_watermarked(spark):
    batch = spark.range(1).select(F.col("id").cast("string").alias("key"), F.current_timestamp().alias("ts"))
    with pytest.raises(IllegalArgumentException, match="is not a streaming DataFrame"):
        ss.suppress(batch, key="key", timestamp="ts", suppressed=LIMIT)
    unwatermarked = (
        spark.readStream.format("rate").load().select(F.col("value").cast("string").alias("key"), "timestamp")
    )
    with pytest.raises(IllegalArgumentException, match=r'has no event-time watermark.*withWatermark\("timestamp"'):
        ss.suppress(unwatermarked, key="key", timestamp="timestamp", suppressed=LIMIT)


def test_a_spark_connect_server_without_the_plugin_gets_a_clear_error():
    result = run_python(
        "from pyspark.sql import SparkSession\n"
        "import spark_suppress as ss\n"
        "import os\n"
        # Spark 3.5's Connect server jar (the Makefile fetches it); later lines' PySpark carries the server.
        "spark = SparkSession.builder.remote('local[1]')\n"
        "spark = spark.config('spark.jars', os.environ.get('SPARK_SUPPRESS_SERVER_JARS', ''))\n"
        "spark = spark.getOrCreate()\n"
        "try:\n"
        "    ss.suppress(spark.range(1), key='id', timestamp='id',\n"
        "                suppressed=ss.Suppressed.until_time_limit(0, ss.BufferConfig.unbounded()))\n"
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


WINDOWED = SCHEMA + ", window STRUCT<start: TIMESTAMP, end: TIMESTAMP>"


def final(key, ms, start, end):
    return (key, at(ms), "v", False, (at(start), at(end)))


def key_end(rows):
    return sorted((r["key"], ms_of(r["window"]["end"])) for r in rows)


@pytest.mark.parametrize("idle", [timedelta(milliseconds=200), None])
def test_idle_timeout_closes_the_last_windows_when_input_stops_and_survives_a_restart(spark, idle):
    s = ss.Suppressed.until_window_closes(ss.BufferConfig.unbounded()).with_name(f"idle-{idle is not None}")

    def build(df):
        return ss.suppress(df, key="key", timestamp="ts", suppressed=s, window="window", grace=0, idle_timeout=idle)

    with driver_for(spark, build, WINDOWED) as d:
        stepped = d.step([final("a", 100, 0, 1000), final("b", 1500, 1000, 2000), final("c", 1500, 1000, 5500)])
        first = key_end(stepped + d.idle(timedelta(milliseconds=600)))
        if idle is None:
            assert first == [("a", 1000)], "Kafka's behaviour: only what the watermark closed; then time stands still"
            return
        assert ("a", 1000) in first, "closed by the watermark the step moved"
        assert ("b", 2000) in first, "closed by the idle clock: 1500 + at least 600 ms"
        d.restart()  # c needs 4 s of idle time: the restart falls in the middle of it
        # Spark runs no micro-batch after a restart until input arrives: an old update of another key moves no stream
        # time (and leaves at once, its window long closed), and lets the idle period go on.
        second = key_end(d.advance() + d.step([final("z", 0, 0, 1)]) + d.idle(4100))
        assert sorted(first + second) == [("a", 1000), ("b", 2000), ("c", 5500), ("z", 1)], "each result once"


def test_idle_timeout_resumes_from_the_larger_stream_time(spark):
    s = ss.Suppressed.until_window_closes(ss.BufferConfig.unbounded())

    def build(df):
        return ss.suppress(
            df,
            key="key",
            timestamp="ts",
            suppressed=s,
            window="window",
            grace=0,
            idle_timeout=timedelta(milliseconds=200),
        )

    with driver_for(spark, build, WINDOWED) as d:
        assert d.step([final("b", 1500, 1000, 2000)]) == []
        assert key_end(d.idle(600)) == [("b", 2000)]
        # The watermark is still 1500, but the window's stream time passed 2000: Kafka's rule for a closed window.
        assert key_end(d.step([final("b", 1900, 1000, 2000)])) == [("b", 2000)]


def test_idle_timeout_values_are_checked_on_the_jvm_in_python_spelling(spark):
    limit = ss.Suppressed.until_time_limit(timedelta(milliseconds=10), ss.BufferConfig.unbounded())
    with driver_for(spark, lambda df: df) as d:
        with pytest.raises(TypeError, match="idle_timeout must be a datetime.timedelta"):
            ss.suppress(d.input, key="key", timestamp="ts", suppressed=limit, idle_timeout="1s")
        with pytest.raises(
            IllegalArgumentException, match=r"idle_timeout must be > 0, got timedelta\(milliseconds=0\)"
        ):
            ss.suppress(d.input, key="key", timestamp="ts", suppressed=limit, idle_timeout=timedelta(0))
        wall = ss.Suppressed.until_time_limit(
            timedelta(milliseconds=10), ss.BufferConfig.unbounded(), clock="processing"
        )
        with pytest.raises(
            IllegalArgumentException,
            match=r'idle_timeout=timedelta\(milliseconds=200\) has no use .*clock="processing".*'
            r"Drop the idle_timeout argument",
        ):
            ss.suppress(d.input, key="key", timestamp="ts", suppressed=wall, idle_timeout=timedelta(milliseconds=200))
