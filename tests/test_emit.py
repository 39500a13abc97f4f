"""Windowed aggregation with grace periods and emit strategies (KIP-825) from Python, one micro-batch per step."""

from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone

import pytest
from conftest import CONNECT
from pyspark.errors import IllegalArgumentException
from pyspark.sql import functions as F

import spark_suppress as ss
from spark_suppress import EmitStrategy, SessionWindows, SlidingWindows, TimeWindows
from spark_suppress.testing import TestDriver

SCHEMA = "user STRING, ts TIMESTAMP, amount LONG, label STRING"
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
CLOSE = EmitStrategy.on_window_close()
UPDATE = EmitStrategy.on_window_update()


def at(ms):
    return EPOCH + timedelta(milliseconds=ms)


def rec(user, ms, amount=1, label="x"):
    return (user, at(ms), amount, label)


def view(rows, *columns):
    """(user, window start ms, window end ms, the named columns...) sorted by user (steps emit keys in any order)."""
    return sorted(((r["user"], r["ws"], r["we"], *(r[c] for c in columns)) for r in rows), key=lambda t: t[0])


@pytest.fixture
def start(spark):
    drivers = []

    def _start(windows, emit, aggregations, name=None, late="drop", idle_timeout=None):
        driver = TestDriver(spark, SCHEMA, timestamp="ts")
        drivers.append(driver)
        out = ss.aggregate_windowed(
            driver.input,
            key="user",
            timestamp="ts",
            windows=windows,
            aggregations=aggregations,
            emit=emit,
            name=name,
            late=late,
            idle_timeout=idle_timeout,
        )
        driver.output_columns = out.columns
        # Times as epoch milliseconds, whatever the Python process's time zone.
        return driver.start(
            out.withColumn("ws", F.unix_millis("window.start"))
            .withColumn("we", F.unix_millis("window.end"))
            .withColumn("ts_ms", F.unix_millis("ts"))
        )

    yield _start
    for d in drivers:
        d.stop()


def test_tumbling_on_window_close_emits_final_results_and_drops_late_records(start):
    d = start(
        TimeWindows.of_size_and_grace(timedelta(milliseconds=10), timedelta(milliseconds=5)),
        CLOSE,
        [F.count("*").alias("n"), F.sum("amount").alias("total")],
        name="py-tumbling",
    )
    assert d.step([rec("a", 1, 2), rec("a", 4, 3), rec("b", 9)]) == []
    assert view(d.step([rec("c", 15)]), "n", "total", "ts_ms") == [("a", 0, 10, 2, 5, 4), ("b", 0, 10, 1, 1, 9)]
    assert d.step([rec("a", 2, 100)]) == []
    metrics = ss.metrics(d.query)["py-tumbling"]
    assert metrics["dropped-records-total"] == 1.0
    assert metrics["window-aggregate-final-emit-total"] == 2.0
    assert metrics["record-lateness-max"] == 13.0


def test_tumbling_grace_zero_closes_at_the_window_end(start):
    d = start(TimeWindows.of_size_with_no_grace(500), CLOSE, [F.count("*").alias("n")])
    assert d.step([rec("1", 10), rec("1", 15)]) == []
    assert view(d.step([rec("1", 500)]), "n") == [("1", 0, 500, 2)]


def test_hopping_on_window_update_updates_every_overlapping_window_in_start_order(start):
    d = start(
        TimeWindows.of_size_and_grace(10, 100).advance_by(5), UPDATE, [ss.string_fold("label", "0").alias("trace")]
    )
    assert view(d.step([rec("a", 3, label="p")]), "trace") == [("a", 0, 10, "0+p")]
    out = d.step([rec("a", 7, label="q")])
    assert [(r["ws"], r["trace"]) for r in out] == [(0, "0+p+q"), (5, "0+q")]


def test_string_fold_built_in_a_thread_without_an_active_session(start):
    """A worker thread (a thread pool's, as the conformance runner's) has no active session of its own: string_fold
    uses the process's default one there, as PySpark's own functions work in any thread."""
    from pyspark.sql import SparkSession

    def build():
        return SparkSession.getActiveSession(), ss.string_fold("label", "0").alias("trace")

    with ThreadPoolExecutor(max_workers=1) as pool:
        active, trace = pool.submit(build).result()
    if not CONNECT:
        assert active is None  # the case under test: the thread has no active session
    d = start(TimeWindows.of_size_with_no_grace(10), UPDATE, [trace])
    assert view(d.step([rec("a", 3, label="p")]), "trace") == [("a", 0, 10, "0+p")]
    assert view(d.step([rec("a", 4, label="q")]), "trace") == [("a", 0, 10, "0+p+q")]


def test_hopping_on_window_close_emits_each_overlapping_window_once(start):
    d = start(TimeWindows.of_size_with_no_grace(10).advance_by(5), CLOSE, [F.count("*").alias("n")])
    d.step([rec("a", 7)])
    assert view(d.step([rec("b", 10)]), "n") == [("a", 0, 10, 1)]
    assert view(d.step([rec("b", 15)]), "n") == [("a", 5, 15, 1), ("b", 5, 15, 1)]


def test_sessions_on_window_update_retract_what_a_merge_removes(start):
    d = start(
        SessionWindows.of_inactivity_gap_and_grace(timedelta(seconds=1), timedelta(0)),
        UPDATE,
        [F.count("*").alias("n")],
    )
    assert d.output_columns == ["user", "window", "n", "ts", "retraction"]
    assert view(d.step([rec("a", 0)]), "n", "retraction") == [("a", 0, 1000, 1, False)]
    merged = d.step([rec("a", 400)])
    assert [(r["we"], r["n"], r["retraction"]) for r in merged] == [(1000, 1, True), (1400, 2, False)]


def test_sessions_on_window_close_emit_final_sessions_once(start):
    d = start(
        SessionWindows.of_inactivity_gap_with_no_grace(500),
        CLOSE,
        [F.count("*").alias("n"), F.max("amount").alias("top")],
    )
    assert d.step([rec("u", 10, 3)]) == []
    assert d.step([rec("u", 15, 7)]) == []
    assert view(d.step([rec("v", 600)]), "n", "top", "ts_ms") == [("u", 10, 515, 2, 7, 15)]
    assert d.output_columns == ["user", "window", "n", "top", "ts"]


def test_sliding_windows_in_both_strategies(start):
    sliding = SlidingWindows.of_time_difference_and_grace(10, 0)
    u = start(sliding, UPDATE, [F.count("*").alias("n")])
    assert view(u.step([rec("a", 10)]), "n") == [("a", 0, 11, 1)]
    assert u.output_columns == ["user", "window", "n", "ts"]
    assert [(r["ws"], r["n"]) for r in u.step([rec("a", 15)])] == [(11, 1), (5, 2)]
    c = start(sliding, CLOSE, [F.count("*").alias("n")])
    c.step([rec("a", 10)])
    assert view(c.step([rec("a", 15)]), "n") == [("a", 0, 11, 1)]


def test_a_restart_keeps_open_windows_without_duplicates(start):
    d = start(TimeWindows.of_size_with_no_grace(10), CLOSE, [F.count("*").alias("n")], name="py-restart")
    assert d.step([rec("a", 1), rec("b", 2)]) == []
    d.restart()
    assert d.advance() == []
    assert d.step([rec("a", 5)]) == []
    assert view(d.step([rec("z", 10)]), "n") == [("a", 0, 10, 2), ("b", 0, 10, 1)]
    d.restart()
    assert d.advance() == []
    assert view(d.step([rec("z", 30)]), "n") == [("z", 10, 20, 1)]


def test_window_values_are_checked_on_the_jvm_in_python_spelling(spark):
    d = TestDriver(spark, SCHEMA, timestamp="ts")

    def fails(windows, message):
        with pytest.raises(IllegalArgumentException, match=message) as e:
            ss.aggregate_windowed(
                d.input, key="user", timestamp="ts", windows=windows, aggregations=[F.count("*")], emit=CLOSE
            )
        message = str(e.value).splitlines()[0]  # Spark Connect appends the JVM's stack trace
        assert "PT" not in message and "Duration" not in message

    fails(TimeWindows.of_size_and_grace(0, 1), r"TimeWindows size must be > 0, got timedelta\(milliseconds=0\)")
    fails(TimeWindows.of_size_and_grace(10, timedelta(milliseconds=-1)), "TimeWindows grace must be >= 0")
    fails(TimeWindows.of_size_with_no_grace(10).advance_by(11), r"advance must be > 0 and <= the window size")
    fails(TimeWindows.of_size_with_no_grace(10).advance_by(0), "advance must be > 0")
    fails(SlidingWindows.of_time_difference_with_no_grace(-1), "SlidingWindows time_difference must be >= 0")
    fails(SessionWindows.of_inactivity_gap_and_grace(0, 0), "SessionWindows inactivity_gap must be > 0")
    fails(SessionWindows.of_inactivity_gap_and_grace(10, -1), "SessionWindows grace must be >= 0")
    fails(SlidingWindows.of_time_difference_and_grace(10, -1), "SlidingWindows grace must be >= 0")


def test_python_checks_window_argument_types():
    with pytest.raises(TypeError, match="TimeWindows size must be a datetime.timedelta or an int"):
        TimeWindows.of_size_with_no_grace("5 minutes")


def test_operator_validation(spark):
    d = TestDriver(spark, SCHEMA, timestamp="ts")
    tumbling = TimeWindows.of_size_with_no_grace(10)

    def build(**overrides):
        args = dict(key="user", timestamp="ts", windows=tumbling, aggregations=[F.count("*")], emit=CLOSE)
        args.update(overrides)
        return ss.aggregate_windowed(d.input, **args)

    with pytest.raises(TypeError, match="windows must be TimeWindows, SlidingWindows or SessionWindows"):
        build(windows=timedelta(minutes=5))
    with pytest.raises(TypeError, match="emit must be EmitStrategy"):
        build(emit="close")
    with pytest.raises(IllegalArgumentException, match="aggregations must list at least one"):
        build(aggregations=[])
    # A bare column is no aggregate: Spark's analysis asks for a GROUP BY, the message says what to pass instead.
    with pytest.raises(IllegalArgumentException, match=r"Each aggregation is one aggregate function call.*supported"):
        build(aggregations=[F.col("user")])
    with pytest.raises(TypeError, match="aggregations must be a list"):
        build(aggregations=F.count("*"))
    with pytest.raises(TypeError, match="aggregations must be Spark Columns"):
        build(aggregations=["count"])
    with pytest.raises(IllegalArgumentException, match="name must be a non-empty string"):
        build(name=" ")
    with pytest.raises(TypeError, match="initial and separator must be strings"):
        ss.string_fold("label", initial=None)
    # The list names what a Python caller can pass; the typed Aggregator is marked as Scala's and Java's.
    with pytest.raises(
        IllegalArgumentException,
        match=r"is not supported; supported: count, sum, min, max, avg.*or, from Scala and Java, a typed Aggregator",
    ):
        build(aggregations=[F.collect_list("label").alias("all")])
    with pytest.raises(IllegalArgumentException, match="key 'nobody' is not a column of the input"):
        build(key="nobody")
    with pytest.raises(IllegalArgumentException, match="timestamp column 'label' must be a timestamp"):
        build(timestamp="label")
    with pytest.raises(IllegalArgumentException, match="two columns named 'n'"):
        build(aggregations=[F.count("*").alias("n"), F.sum("amount").alias("n")])
    with pytest.raises(IllegalArgumentException, match="has no event-time watermark"):
        raw = TestDriver(spark)
        ss.aggregate_windowed(
            raw.add_input("raw", SCHEMA),
            key="user",
            timestamp="ts",
            windows=tumbling,
            aggregations=[F.count("*")],
            emit=CLOSE,
        )
    with pytest.raises(IllegalArgumentException, match="is not a streaming DataFrame"):
        ss.aggregate_windowed(
            spark.createDataFrame([], SCHEMA),
            key="user",
            timestamp="ts",
            windows=tumbling,
            aggregations=[F.count("*")],
            emit=CLOSE,
        )


@pytest.mark.parametrize("late", ["drop", "emit"])
def test_late_records_are_counted_or_emitted_flagged_once_also_after_a_restart(start, late):
    d = start(
        TimeWindows.of_size_with_no_grace(timedelta(milliseconds=10)),
        CLOSE,
        [F.count("*").alias("n"), F.sum("amount").alias("total")],
        name=f"py-late-{late}",
        late=late,
    )
    flag = ("late",) if late == "emit" else ()
    assert ("late" in d.output_columns) == (late == "emit")
    assert d.step([rec("a", 1, 2)]) == []
    assert view(d.step([rec("a", 10, 3)]), "n", "total", "ts_ms", *flag) == [
        ("a", 0, 10, 1, 2, 1, *((False,) if flag else ()))
    ]
    missed = d.step([rec("a", 4, 100)])
    if late == "emit":
        assert view(missed, "n", "total", "ts_ms", "late") == [("a", 0, 10, 1, 100, 4, True)]
    else:
        assert missed == []
    assert ss.metrics(d.query)[f"py-late-{late}"]["dropped-records-total"] == 1.0
    d.restart()
    assert d.advance() == [], "nothing emitted twice"
    assert view(d.step([rec("b", 20)]), "n", "ts_ms", *flag) == [("a", 10, 20, 1, 10, *((False,) if flag else ()))]


def test_late_must_be_drop_or_emit(spark):
    driver = TestDriver(spark, SCHEMA, timestamp="ts")
    windows = TimeWindows.of_size_with_no_grace(timedelta(milliseconds=10))
    with pytest.raises(TypeError, match="late must be"):
        ss.aggregate_windowed(
            driver.input, key="user", timestamp="ts", windows=windows, aggregations=[F.count("*")], late=True
        )
    with pytest.raises(IllegalArgumentException, match="late must be 'drop' or 'emit', got 'keep'"):
        ss.aggregate_windowed(
            driver.input, key="user", timestamp="ts", windows=windows, aggregations=[F.count("*")], late="keep"
        )


@pytest.mark.parametrize("idle", [timedelta(milliseconds=200), None])
def test_idle_timeout_closes_the_last_windows_when_input_stops_and_survives_a_restart(start, idle):
    # Hopping windows of 2 s every 1 s: a record at 1500 is in [0,2000) (closes at 2000) and [1000,3000).
    d = start(
        TimeWindows.of_size_with_no_grace(2000).advance_by(1000), CLOSE, [F.count("*").alias("n")], idle_timeout=idle
    )
    assert d.step([rec("u", 1500)]) == []
    first = view(d.idle(timedelta(milliseconds=600)), "n")
    if idle is None:
        assert first == [], "Kafka's behaviour: without records stream time stands still"
        return
    assert first[:1] == [("u", 0, 2000, 1)], "closed on the idle clock"
    d.restart()  # [1000,3000) needs 1.5 s of idle time
    # Spark runs no micro-batch after a restart until input arrives: a record of another key behind the watermark
    # moves no stream time; its own window [0,2000) is open at the watermark and closes on its own idle clock.
    second = view(d.advance() + d.step([rec("w", 0)]) + d.idle(1600), "n")
    assert sorted(first + second) == [("u", 0, 2000, 1), ("u", 1000, 3000, 1), ("w", 0, 2000, 1)], "each window once"


def test_idle_timeout_must_be_a_duration(spark):
    driver = TestDriver(spark, SCHEMA, timestamp="ts")
    with pytest.raises(TypeError, match="idle_timeout must be a datetime.timedelta"):
        ss.aggregate_windowed(
            driver.input,
            key="user",
            timestamp="ts",
            windows=TimeWindows.of_size_with_no_grace(10),
            aggregations=[F.count("*")],
            idle_timeout=1.5,
        )


def test_latest_keeps_the_latest_arrival_where_last_keeps_the_latest_event_time(start):
    # Kafka's reduce((v1, v2) -> v2): a later micro-batch arrives later, whatever its event time; last() does not.
    d = start(
        TimeWindows.of_size_and_grace(100, 1000),
        UPDATE,
        [ss.latest("label").alias("latest"), F.last("label").alias("last")],
    )
    assert view(d.step([rec("a", 50, label="first")]), "latest", "last") == [("a", 0, 100, "first", "first")]
    assert view(d.step([rec("a", 10, label="second")]), "latest", "last") == [("a", 0, 100, "second", "first")]
    # A null value is skipped, as Kafka's reduce never sees one.
    assert view(d.step([rec("a", 20, label=None)]), "latest", "last") == [("a", 0, 100, "second", "first")]


def test_latest_orders_one_micro_batch_by_order_by(start):
    d = start(TimeWindows.of_size_and_grace(100, 1000), UPDATE, [ss.latest("label", order_by="amount").alias("v")])
    out = d.step([rec("a", 5, amount=3, label="offset 3"), rec("a", 6, amount=1, label="offset 1")])
    # Both updates of the batch leave; the window's value after the batch is the greatest offset's.
    assert view(out, "v")[-1] == ("a", 0, 100, "offset 3")
    d.restart()
    d.advance()
    # Stored before the restart, so anything arriving now is later, whatever its offset.
    assert view(d.step([rec("a", 7, amount=0, label="after restart")]), "v") == [("a", 0, 100, "after restart")]


def test_latest_checks_its_arguments(spark):
    with pytest.raises(TypeError, match="order_by must be a column name or a Column"):
        ss.latest("label", order_by=3)
    driver = TestDriver(spark, SCHEMA, timestamp="ts")
    with pytest.raises(Exception, match="order column must be one of"):
        ss.aggregate(
            driver.input,
            key="user",
            timestamp="ts",
            aggregations=[ss.latest("label", order_by=F.array("amount")).alias("v")],
        ).columns
