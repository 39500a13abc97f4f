"""Chains of operators in ONE streaming query from Python: each operator applied to another's output."""

from datetime import datetime, timedelta, timezone

import pytest
from pyspark.errors import IllegalArgumentException
from pyspark.sql import functions as F

import spark_suppress as ss
from spark_suppress import BufferConfig, EmitStrategy, Suppressed, TimeWindows
from spark_suppress.testing import TestDriver

SCHEMA = "user STRING, ts TIMESTAMP, amount LONG"
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def rec(user, ms, amount=1):
    return (user, EPOCH + timedelta(milliseconds=ms), amount)


def view(rows, *columns):
    return sorted((r["user"], *(r[c] for c in columns)) for r in rows)


@pytest.fixture
def driver(spark):
    # One shard, as the Kafka examples run one task: a node's stream time is per shard (Kafka: per task).
    previous = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "1")
    d = TestDriver(spark, SCHEMA, timestamp="ts")
    yield d
    d.stop()
    spark.conf.set("spark.sql.shuffle.partitions", previous)


def test_aggregate_emits_one_update_per_record_with_kafkas_timestamp(driver):
    totals = ss.aggregate(driver.input, key="user", timestamp="ts", aggregations=[F.sum("amount").alias("total")])
    assert totals.columns == ["user", "total", "ts"]
    driver.start(totals.withColumn("ts_ms", F.unix_millis("ts")))
    assert view(driver.step([rec("a", 0, 2)]), "total", "ts_ms") == [("a", 2, 0)]
    assert view(driver.step([rec("a", 3, 1)]), "total", "ts_ms") == [("a", 3, 3)]
    # An out-of-order record updates the aggregate, which keeps the larger timestamp.
    assert view(driver.step([rec("a", 1, 4)]), "total", "ts_ms") == [("a", 7, 3)]


def test_aggregate_then_suppress_until_time_limit_run_as_one_query(driver):
    totals = ss.aggregate(driver.input, key="user", timestamp="ts", aggregations=[F.sum("amount").alias("total")])
    limited = ss.suppress(
        totals,
        key="user",
        timestamp="ts",
        suppressed=Suppressed.until_time_limit(timedelta(milliseconds=2), BufferConfig.unbounded()),
    )
    driver.start(limited.withColumn("ts_ms", F.unix_millis("ts")))
    assert driver.step([rec("a", 0, 2)]) == []
    assert driver.step([rec("b", 1, 3)]) == []
    # a was first buffered at 0; the suppress's stream time reaches 2: a leaves with its latest total and timestamp.
    assert view(driver.step([rec("a", 2, 5)]), "total", "ts_ms") == [("a", 7, 2)]
    assert view(driver.step([rec("c", 5, 1)]), "total", "ts_ms") == [("b", 3, 1)]


def test_windowed_count_then_final_results(driver):
    counts = ss.aggregate_windowed(
        driver.input,
        key="user",
        timestamp="ts",
        windows=TimeWindows.of_size_and_grace(timedelta(milliseconds=10), timedelta(milliseconds=2)),
        aggregations=[F.count("*").alias("n")],
        emit=EmitStrategy.on_window_update(),
    )
    finals = ss.suppress(
        counts, key="user", timestamp="ts", suppressed=Suppressed.until_window_closes(BufferConfig.unbounded())
    )
    driver.start(finals.withColumn("ws", F.unix_millis("window.start")))
    assert driver.step([rec("a", 1), rec("b", 3)]) == []
    assert driver.step([rec("a", 9)]) == []
    # Window [0, 10) closes at stream time 12: one final result per key, with the window's largest timestamp.
    assert view(driver.step([rec("b", 12)]), "ws", "n") == [("a", 0, 2), ("b", 0, 1)]


def _counts(df, **options):
    return ss.aggregate_windowed(
        df,
        key="user",
        timestamp="ts",
        windows=TimeWindows.of_size_and_grace(timedelta(milliseconds=10), timedelta(milliseconds=2)),
        aggregations=[F.count("*").alias("n")],
        emit=EmitStrategy.on_window_update(),
        **options,
    )


def test_late_records_of_an_aggregation_pass_the_suppress_after_it_by_flagged(driver):
    # Kafka drops a@3 at the aggregation ([0,10) closed at stream time 12), and the suppress never sees it; with
    # late="emit" it leaves as the aggregation's row counting it alone, flagged, and every other row has late=False.
    counts = _counts(driver.input, late="emit")
    finals = ss.suppress(
        counts, key="user", timestamp="ts", suppressed=Suppressed.until_window_closes(BufferConfig.unbounded())
    )
    driver.start(finals.withColumn("ws", F.unix_millis("window.start")))
    assert driver.step([rec("a", 0)]) == []
    assert view(driver.step([rec("a", 15)]), "ws", "n", "late") == [("a", 0, 1, False)]
    assert view(driver.step([rec("a", 3)]), "ws", "n", "late") == [("a", 0, 1, True)]


def test_a_where_after_an_operator_emitting_late_records_is_refused(driver):
    counts = _counts(driver.input, late="emit").where("n > 1")
    with pytest.raises(IllegalArgumentException, match="its emitted late records leave the chain as they are"):
        ss.suppress(
            counts, key="user", timestamp="ts", suppressed=Suppressed.until_window_closes(BufferConfig.unbounded())
        )


def test_an_idle_timeout_inside_a_chain_closes_the_last_windows_when_input_stops(driver):
    # The suppress's stream time stands at 9 after the step; with a 200 ms idle timeout it runs on with the wall
    # clock, passes [0,10)'s close time (12) and lets the final count out. Without input nothing else could.
    finals = ss.suppress(
        _counts(driver.input),
        key="user",
        timestamp="ts",
        suppressed=Suppressed.until_window_closes(BufferConfig.unbounded()),
        idle_timeout=timedelta(milliseconds=200),
    )
    driver.start(finals.withColumn("ws", F.unix_millis("window.start")))
    out = driver.step([rec("a", 9)]) + driver.idle(timedelta(milliseconds=600))
    assert view(out, "ws", "n") == [("a", 0, 1)]


def test_chain_steps_must_keep_the_key(driver):
    totals = ss.aggregate(driver.input, key="user", timestamp="ts", aggregations=[F.sum("amount").alias("total")])
    with pytest.raises(
        IllegalArgumentException, match="key is \\[total\\], but the operators it follows use \\[user\\]"
    ):
        ss.suppress(
            totals,
            key="total",
            timestamp="ts",
            suppressed=Suppressed.until_time_limit(timedelta(milliseconds=2), BufferConfig.unbounded()),
        )


def test_until_window_closes_after_a_non_windowed_aggregate_is_refused(driver):
    totals = ss.aggregate(driver.input, key="user", timestamp="ts", aggregations=[F.sum("amount").alias("total")])
    with pytest.raises(
        IllegalArgumentException,
        match="until_window_closes needs windowed input: Window close time is only defined for windowed computations",
    ):
        ss.suppress(
            totals, key="user", timestamp="ts", suppressed=Suppressed.until_window_closes(BufferConfig.unbounded())
        )


def test_aggregate_checks_its_arguments(driver):
    with pytest.raises(TypeError, match="aggregations must be a list"):
        ss.aggregate(driver.input, key="user", timestamp="ts", aggregations=F.count("*"))
    with pytest.raises(IllegalArgumentException, match="timestamp 'when' is not a column of the input"):
        ss.aggregate(driver.input, key="user", timestamp="when", aggregations=[F.count("*")])


def _latest_then_immediately(df):
    latest = ss.aggregate(df, key="user", timestamp="ts", aggregations=[ss.latest("amount").alias("amount")])
    return latest, Suppressed.until_time_limit(timedelta(0), BufferConfig.unbounded())


def test_where_on_a_table_before_suppress_forwards_tombstones_as_kafkas_ktable_filter(driver):
    # Kafka's KTable.filter with old values (a suppress asks for them): 7 passes; 3 fails after 7 passed, so a
    # tombstone leaves; 2 fails after 3 failed: nothing. Spark's filter after the operator would drop 3 silently.
    latest, now = _latest_then_immediately(driver.input)
    big = ss.suppress(latest.where(F.col("amount") >= 5), key="user", timestamp="ts", suppressed=now)
    assert big.columns == ["user", "amount", "ts", "retraction"]
    driver.start(big.withColumn("ts_ms", F.unix_millis("ts")))
    assert view(driver.step([rec("a", 1, 7)]), "amount", "retraction", "ts_ms") == [("a", 7, False, 1)]
    assert view(driver.step([rec("a", 2, 3)]), "amount", "retraction", "ts_ms") == [("a", None, True, 2)]
    assert driver.step([rec("a", 3, 2)]) == []


def test_with_column_between_operators_is_map_values(driver):
    latest, now = _latest_then_immediately(driver.input)
    doubled = ss.suppress(latest.withColumn("twice", F.col("amount") * 2), key="user", timestamp="ts", suppressed=now)
    driver.start(doubled)
    assert view(driver.step([rec("a", 1, 7)]), "amount", "twice") == [("a", 7, 14)]


def test_rekeying_between_operators_is_refused_with_the_two_query_way(driver):
    latest, now = _latest_then_immediately(driver.input)
    with pytest.raises(IllegalArgumentException, match="replaces column 'user', the key.*second query"):
        ss.suppress(latest.withColumn("user", F.upper("user")), key="user", timestamp="ts", suppressed=now)


def test_a_python_udf_between_operators_is_refused_naming_the_fix(driver):
    latest, now = _latest_then_immediately(driver.input)
    big = F.udf(lambda a: a >= 5, "boolean")
    with pytest.raises(IllegalArgumentException, match="cannot evaluate row by row.*Python UDFs"):
        ss.suppress(latest.where(big("amount")), key="user", timestamp="ts", suppressed=now)


def test_metrics_report_every_node_of_a_chain_by_name_also_after_a_restart(spark):
    # join -> windowed count -> final results, each named; Kafka's metrics per node, as each operator on its own
    # reports them. Window [0, 1000) (grace 0) closes when the order at 1100 reaches the aggregation.
    d = TestDriver(spark)
    try:
        orders = d.add_input("orders", "user STRING, ts TIMESTAMP", timestamp="ts")
        tiers = d.add_input("tiers", "user STRING, changed_at TIMESTAMP, tier STRING")
        joined = ss.join_versioned(
            orders, tiers, on="user", stream_timestamp="ts", table_timestamp="changed_at", name="j"
        )
        counts = ss.aggregate_windowed(
            joined,
            key="user",
            timestamp="ts",
            windows=TimeWindows.of_size_with_no_grace(timedelta(seconds=1)),
            aggregations=[F.count("*").alias("n")],
            emit=EmitStrategy.on_window_update(),
            name="w",
        )
        finals = ss.suppress(
            counts,
            key="user",
            timestamp="ts",
            suppressed=Suppressed.until_window_closes(BufferConfig.unbounded()).with_name("f"),
        )
        d.start(finals)
        d.step([("a", EPOCH, "gold")], input="tiers")
        for ms in (100, 200):
            assert d.step([("a", EPOCH + timedelta(milliseconds=ms))], input="orders") == []
        assert [r["n"] for r in d.step([("a", EPOCH + timedelta(milliseconds=1100))], input="orders")] == [2]
        # Too late for [0, 1000): the join joins it, the aggregation drops it.
        assert d.step([("a", EPOCH + timedelta(milliseconds=50))], input="orders") == []
        m = ss.metrics(d.query)
        assert set(m) == {"j", "w", "f"}
        assert m["j"]["join-emit-total"] == 4
        assert m["w"]["dropped-records-total"] == 1
        assert m["w"]["record-lateness-max"] == 1050
        assert m["f"]["suppression-emit-total"] == 1
        assert m["f"]["suppression-buffer-count-current"] == 1  # [1000, 2000) waits
        d.restart()
        assert [r["n"] for r in d.step([("a", EPOCH + timedelta(milliseconds=2100))], input="orders")] == [1]
        after = ss.metrics(d.query)
        assert set(after) == {"j", "w", "f"}
        assert after["f"]["suppression-emit-total"] >= 1
        assert after["f"]["suppression-buffer-count-current"] == 1  # [2000, 3000) waits
    finally:
        d.stop()


def test_where_on_a_changelog_before_its_suppress_deletes_keys_that_stop_passing(spark):
    # Kafka's builder.table(...).filter(...).suppress(...): a=7 passes, a=3 deletes a (its previous value passed).
    d = TestDriver(spark, "user STRING, ts TIMESTAMP, amount LONG, deleted BOOLEAN", timestamp="ts")
    try:
        now = Suppressed.until_time_limit(timedelta(0), BufferConfig.unbounded())
        big = ss.suppress(
            d.input.where(F.col("amount") >= 5), key="user", timestamp="ts", suppressed=now, tombstone="deleted"
        )
        d.start(big)
        assert view(d.step([("a", EPOCH + timedelta(milliseconds=1), 7, False)]), "deleted") == [("a", False)]
        assert view(d.step([("a", EPOCH + timedelta(milliseconds=2), 3, False)]), "deleted") == [("a", True)]
        assert d.step([("a", EPOCH + timedelta(milliseconds=3), 2, False)]) == []
    finally:
        d.stop()


def test_a_join_with_initial_versions_starts_a_chain(spark):
    tiers_schema = "user STRING, changed_at TIMESTAMP, tier STRING"
    initial = spark.createDataFrame([("a", EPOCH, "gold")], tiers_schema)
    d = TestDriver(spark)
    try:
        orders = d.add_input("orders", "user STRING, ts TIMESTAMP", timestamp="ts")
        tiers = d.add_input("tiers", tiers_schema)
        joined = ss.join_versioned(
            orders, tiers, on="user", stream_timestamp="ts", table_timestamp="changed_at", initial_versions=initial
        )
        counts = ss.aggregate(joined, key="user", timestamp="ts", aggregations=[F.count("*").alias("n")])
        d.start(counts)
        # The first order joins the initial version (an inner join would drop it without one).
        assert view(d.step([("a", EPOCH + timedelta(milliseconds=5))], input="orders"), "n") == [("a", 1)]
    finally:
        d.stop()
