"""spark_suppress.join_versioned: the stream-table join with a grace period against a versioned table."""

from contextlib import contextmanager
from datetime import datetime, timedelta, timezone

import pytest
from pyspark.errors import IllegalArgumentException
from pyspark.sql import functions as F

import spark_suppress as ss
from spark_suppress.testing import TestDriver

ORDERS = "customer STRING, order_ts TIMESTAMP, amount LONG"
TIERS = "customer STRING, changed_at TIMESTAMP, tier STRING, deleted BOOLEAN"
EPOCH = datetime(2024, 1, 1, tzinfo=timezone.utc)


def at(ms):
    return EPOCH + timedelta(milliseconds=ms)


def order(customer, ms, amount=1):
    return (customer, at(ms), amount)


def tier(customer, ms, name):
    return (customer, at(ms), name, False)


def deletion(customer, ms):
    return (customer, at(ms), None, True)


class Join:
    """Orders joined with tier changes, one micro-batch per call; rows as (customer, ms, amount, tier)."""

    def __init__(self, spark, **options):
        self.driver = TestDriver(spark)
        orders = self.driver.add_input("orders", ORDERS)
        tiers = self.driver.add_input("tiers", TIERS)
        options.setdefault("tombstone", "deleted")
        self.driver.start(
            ss.join_versioned(
                orders, tiers, on="customer", stream_timestamp="order_ts", table_timestamp="changed_at", **options
            )
        )

    @staticmethod
    def rows(emitted):
        # PySpark returns naive local datetimes; .timestamp() reads them back as local time.
        return [
            (r["customer"], round((r["order_ts"].timestamp() - EPOCH.timestamp()) * 1000), r["amount"], r["tier"])
            for r in emitted
        ]

    def orders(self, *rows):
        return self.rows(self.driver.step(rows, input="orders"))

    def tiers(self, *rows):
        return self.rows(self.driver.step(rows, input="tiers"))

    def metrics(self, name):
        return ss.metrics(self.driver.query)[name]


@pytest.fixture
def one_partition(spark):
    """Stream time is per shard (Kafka: per task); with one shard it spans all keys, as in a one-partition topic."""
    spark.conf.set("spark.sql.shuffle.partitions", "1")
    yield
    spark.conf.set("spark.sql.shuffle.partitions", "2")


@contextmanager
def running(spark, **options):
    j = Join(spark, **options)
    try:
        yield j
    finally:
        j.driver.stop()


def test_grace_period_joins_the_tier_valid_at_order_time_even_when_the_change_arrives_late(spark, one_partition):
    with running(spark, grace=timedelta(milliseconds=30), history_retention=timedelta(minutes=1), how="left") as j:
        assert j.tiers(tier("alice", 0, "silver")) == []
        assert j.orders(order("alice", 100, 7)) == []
        assert j.tiers(tier("alice", 90, "gold")) == []
        assert j.orders(order("bob", 120)) == []
        assert j.orders(order("bob", 130)) == [("alice", 100, 7, "gold")]
        assert j.orders(order("carol", 200)) == [("bob", 120, 1, None), ("bob", 130, 1, None)]


def test_without_grace_the_order_joins_at_once_with_the_tier_known_then(spark):
    with running(spark, history_retention=60_000, how="left") as j:
        j.tiers(tier("alice", 0, "silver"))
        assert j.orders(order("alice", 100, 7)) == [("alice", 100, 7, "silver")]
        j.tiers(tier("alice", 90, "gold"))
        assert j.orders(order("alice", 95, 8)) == [("alice", 95, 8, "gold")]


def test_records_leave_in_timestamp_order_and_a_record_later_than_the_grace_is_joined_at_once(spark, one_partition):
    with running(spark, grace=10, history_retention=1000, name="ordered") as j:
        j.tiers(tier("a", 0, "t0"))
        assert j.orders(order("a", 20, 1), order("a", 15, 2), order("a", 18, 3)) == []
        assert j.orders(order("a", 5, 4)) == [("a", 5, 4, "t0")]
        assert j.orders(order("a", 28, 5)) == [("a", 15, 2, "t0"), ("a", 18, 3, "t0")]
        m = j.metrics("ordered")
        assert m["late-records-joined-total"] == 1.0
        assert m["grace-buffer-count-current"] == 2.0
        assert m["grace-buffer-count-max"] == 4.0


@pytest.mark.parametrize("how, expected", [("inner", []), ("left", [("a", 12, 1, None)])])
def test_a_tombstone_hides_older_versions(spark, how, expected):
    with running(spark, history_retention=1000, how=how) as j:
        j.tiers(tier("a", 0, "t0"))
        j.tiers(deletion("a", 10))
        assert j.orders(order("a", 12)) == expected
        assert j.orders(order("a", 8)) == [("a", 8, 1, "t0")]


def test_history_retention_rejects_old_writes_across_keys_and_expires_old_lookups(spark, one_partition):
    with running(spark, history_retention=5, how="left", name="retention") as j:
        j.tiers(tier("k", 0, "a"))
        j.tiers(tier("k", 10, "b"))
        j.tiers(tier("k2", 3, "x"))
        assert j.orders(order("k2", 12)) == [("k2", 12, 1, None)]
        assert j.orders(order("k", 5)) == [("k", 5, 1, "a")]
        assert j.orders(order("k", 4)) == [("k", 4, 1, None)]
        m = j.metrics("retention")
        assert m["expired-table-writes-total"] == 1.0
        assert m["dropped-records-total"] == 1.0


def test_null_key_or_value_records_are_dropped_and_counted(spark):
    with running(spark, history_retention=100, name="nulls") as j:
        j.tiers(tier("a", 0, "t"))
        assert j.orders(("a", at(1), 1), (None, at(2), 2), ("a", at(3), None)) == [("a", 1, 1, "t")]
        assert j.metrics("nulls")["dropped-null-key-or-value-total"] == 2.0


def test_buffered_records_survive_a_restart_and_are_emitted_once(spark):
    with running(spark, grace=10, history_retention=1000, how="left", name="restart") as j:
        j.tiers(tier("a", 0, "t0"), tier("b", 0, "u0"))
        assert j.orders(order("a", 1, 1), order("b", 2, 2), order("a", 3, 3)) == []
        j.tiers(tier("a", 2, "t2"))
        j.driver.restart()
        assert j.driver.advance() == []
        released = j.orders(order("a", 40, 4), order("b", 40, 5))
        assert sorted(released, key=lambda r: (r[1], r[0])) == [("a", 1, 1, "t0"), ("b", 2, 2, "u0"), ("a", 3, 3, "t2")]
        assert sorted(r[2] for r in j.orders(order("a", 60, 6), order("b", 60, 7))) == [4, 5]


def test_a_starved_shard_releases_its_order_once_the_watermark_passes_it(spark):
    # Two shards: alice's and bob's keys hash to different ones (the second assertion fails if they did not).
    driver = TestDriver(spark)
    orders = driver.add_input("orders", ORDERS, timestamp="order_ts")
    tiers = driver.add_input("tiers", TIERS)
    joined = ss.join_versioned(
        orders,
        tiers,
        on="customer",
        stream_timestamp="order_ts",
        table_timestamp="changed_at",
        grace=10,
        history_retention=60_000,
        how="left",
        tombstone="deleted",
    )
    driver.start(joined)
    try:

        def step(rows, input):
            return Join.rows(driver.step(rows, input=input))

        assert step([tier("alice", 0, "silver")], "tiers") == []
        assert step([order("alice", 100, 7)], "orders") == []
        assert step([order("bob", 200)], "orders") == [], "Kafka's rule: stream time 200 is in bob's shard only"
        # Alice's shard never gets another order; the next micro-batch sees the watermark of 200 and releases it.
        assert step([tier("zed", 0, "bronze")], "tiers") == [("alice", 100, 7, "silver")]
        assert step([order("bob", 300)], "orders") == [("bob", 200, 1, None)], "alice's order is not joined twice"
    finally:
        driver.stop()


def test_initial_versions_seed_the_table(spark):
    seed = spark.createDataFrame([tier("a", 0, "seed-a0"), tier("a", 100, "seed-a100")], TIERS)
    with running(spark, history_retention=1000, initial_versions=seed) as j:
        assert j.orders(order("a", 50)) == [("a", 50, 1, "seed-a0")]
        assert j.orders(order("a", 150)) == [("a", 150, 1, "seed-a100")]


def test_a_non_versioned_table_joins_its_latest_write(spark):
    with running(spark) as j:
        j.tiers(tier("a", 1000, "new"))
        j.tiers(tier("a", 0, "later-arrival"))
        assert j.orders(order("a", 5)) == [("a", 5, 1, "later-arrival")]


@pytest.fixture
def inputs(spark):
    driver = TestDriver(spark)
    yield driver.add_input("orders", ORDERS), driver.add_input("tiers", TIERS)
    driver.stop()


def join(inputs, **options):
    orders, tiers = options.pop("frames", inputs)
    args = dict(on="customer", stream_timestamp="order_ts", table_timestamp="changed_at")
    args.update(options)
    return ss.join_versioned(orders, tiers, **args)


@pytest.mark.parametrize(
    "options, error, message",
    [
        (
            dict(grace=6, history_retention=5),
            IllegalArgumentException,
            "History retention must be at least grace period. The grace period is 6 ms but the table's history "
            "retention is 5 ms",
        ),
        (
            dict(grace=6),
            IllegalArgumentException,
            "KTable must be versioned to use a grace period in a stream table join. The grace period is 6 ms but the "
            "table is not versioned: pass history_retention (at least as long as grace), or drop grace.",
        ),
        (
            dict(grace=-1, history_retention=5),
            IllegalArgumentException,
            "grace must be >= 0, got timedelta(milliseconds=-1)",
        ),
        (dict(history_retention=timedelta(seconds=-1)), IllegalArgumentException, "history_retention must be >= 0"),
        (dict(grace="5s", history_retention=5), TypeError, "grace must be a datetime.timedelta or an int"),
        (dict(how="outer"), IllegalArgumentException, "how must be 'inner' or 'left', got 'outer'"),
        (dict(on=[]), IllegalArgumentException, "on must name at least one column"),
        (dict(name=" "), IllegalArgumentException, "name must be a non-empty string"),
        (dict(initial_versions="table"), TypeError, "initial_versions must be a static DataFrame"),
    ],
)
def test_validation_types_in_python_values_on_the_jvm(inputs, options, error, message):
    with pytest.raises(error) as e:
        join(inputs, **options)
    assert message in str(e.value)


def test_jvm_side_validation(spark, inputs):
    orders, tiers = inputs

    def fails(message, **options):
        with pytest.raises(IllegalArgumentException) as e:
            join(inputs, **options)
        assert message in str(e.value)

    fails("key (on, stream side) 'user' is not a column", on="user")
    fails("stream timestamp column 'amount' must be a timestamp", stream_timestamp="amount")
    fails("tombstone column 'tier' must be a boolean", tombstone="tier")
    fails(
        "tombstone 'TIER' is ambiguous",
        frames=(orders, tiers.select("*", F.col("tier").alias("Tier"))),
        tombstone="TIER",
    )
    fails(
        "key column 'customer' is string on the stream side but int on the table side",
        frames=(orders, tiers.withColumn("customer", F.col("customer").cast("int"))),
    )
    fails("two columns named 'amount'", frames=(orders, tiers.withColumn("amount", F.col("tier"))))
    fails("is not a streaming DataFrame", frames=(spark.createDataFrame([order("a", 1)], ORDERS), tiers))
    # equal grace and retention are allowed; the output is the stream's columns then the table's value columns
    out = join(inputs, grace=5, history_retention=5, tombstone="deleted")
    assert out.columns == ["customer", "order_ts", "amount", "tier"]


def test_release_on_watermark_is_a_bool(spark):
    driver = TestDriver(spark)
    stream = driver.add_input("orders", "customer STRING, order_ts TIMESTAMP, amount LONG")
    table = driver.add_input("tiers", "customer STRING, changed_at TIMESTAMP, tier STRING")
    common = dict(on="customer", stream_timestamp="order_ts", table_timestamp="changed_at", history_retention=1000)
    with pytest.raises(TypeError, match="release_on_watermark must be True or False"):
        ss.join_versioned(stream, table, grace=10, release_on_watermark="yes", **common)
    # Without a grace period or a watermark on the stream there is nothing to release on: the join builds.
    assert ss.join_versioned(stream, table, release_on_watermark=True, **common).isStreaming


@pytest.mark.parametrize("idle", [timedelta(milliseconds=200), None])
def test_idle_timeout_releases_waiting_records_when_the_stream_stops(spark, idle):
    d = TestDriver(spark)
    stream = d.add_input("orders", "customer STRING, order_ts TIMESTAMP, amount LONG", timestamp="order_ts")
    table = d.add_input("tiers", "customer STRING, changed_at TIMESTAMP, tier STRING")
    d.start(
        ss.join_versioned(
            stream,
            table,
            on="customer",
            stream_timestamp="order_ts",
            table_timestamp="changed_at",
            grace=1000,
            history_retention=60000,
            how="left",
            idle_timeout=idle,
        )
    )
    try:
        d.step([("alice", at(0), "silver")], input="tiers")
        assert d.step([("alice", at(1500), 1)], input="orders") == []
        # The idle clock runs stream time on from 1500 with the wall clock, from the batch that moved it: the order
        # leaves at 1500 + 1000, after 1 s of idle time; the driver waits at least 1.1 s past that batch.
        out = [(r["customer"], r["tier"]) for r in d.idle(timedelta(milliseconds=1100))]
        assert out == ([("alice", "silver")] if idle else []), "1500 + 1000 <= 1500 + at least 1100 ms of idle time"
    finally:
        d.stop()


def test_idle_timeout_needs_a_grace_period(spark):
    d = TestDriver(spark)
    stream = d.add_input("orders", "customer STRING, order_ts TIMESTAMP, amount LONG", timestamp="order_ts")
    table = d.add_input("tiers", "customer STRING, changed_at TIMESTAMP, tier STRING")
    with pytest.raises(TypeError, match="idle_timeout must be a datetime.timedelta"):
        ss.join_versioned(
            stream, table, on="customer", stream_timestamp="order_ts", table_timestamp="changed_at", idle_timeout="soon"
        )
    with pytest.raises(
        IllegalArgumentException,
        match=r"idle_timeout=timedelta\(milliseconds=200\) moves .*no grace period.*pass grace",
    ):
        ss.join_versioned(
            stream,
            table,
            on="customer",
            stream_timestamp="order_ts",
            table_timestamp="changed_at",
            idle_timeout=timedelta(milliseconds=200),
        )
    d.stop()
