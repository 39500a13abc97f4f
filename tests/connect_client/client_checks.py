"""Run by run.py in a venv holding only pyspark-client and the spark-suppress wheel, against a Connect server with the
plugin (SPARK_SUPPRESS_REMOTE). Checks the wheel works without classic PySpark and never imports it."""

import importlib.metadata
import importlib.util
import os
import sys
from datetime import datetime, timedelta, timezone

import pytest

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    session = SparkSession.builder.remote(os.environ["SPARK_SUPPRESS_REMOTE"]).getOrCreate()
    yield session
    session.stop()


def test_only_the_connect_client_is_installed():
    import pyspark

    assert importlib.util.find_spec("pyspark.sql.classic") is None
    assert importlib.util.find_spec("py4j") is None
    # Installing the wheel pulled no classic PySpark: it requires protobuf alone (for its spec messages).
    with pytest.raises(importlib.metadata.PackageNotFoundError):
        importlib.metadata.distribution("pyspark")
    requires = importlib.metadata.distribution("spark-suppress").requires or []
    assert [r.split(">")[0].strip() for r in requires] == ["protobuf"], requires
    import spark_suppress

    assert "site-packages" in spark_suppress.__file__, spark_suppress.__file__
    print(f"client pyspark {pyspark.__version__}, server {os.environ['SPARK_SUPPRESS_SERVER_VERSION']}")


def test_every_operator_and_metrics_through_the_wheel(spark):
    from pyspark.errors import IllegalArgumentException
    from pyspark.sql import functions as F

    import spark_suppress as ss
    from spark_suppress.testing import TestDriver

    d = TestDriver(spark, "key STRING, ts TIMESTAMP, value STRING", timestamp="ts")
    with pytest.raises(IllegalArgumentException, match="key 'user' is not a column of the input"):
        ss.suppress(
            d.input,
            key="user",
            timestamp="ts",
            suppressed=ss.Suppressed.until_time_limit(1, ss.BufferConfig.unbounded()),
        )
    windowed = ss.aggregate_windowed(
        d.input,
        key="key",
        timestamp="ts",
        windows=ss.TimeWindows.of_size_with_no_grace(10),
        aggregations=[F.count("*").alias("n"), ss.string_fold("value").alias("trace")],
        emit=ss.EmitStrategy.on_window_close(),
        name="client-windows",
    )
    d.start(windowed.select("key", "n", "trace"))
    try:
        assert d.step([("a", T0, "x"), ("a", T0 + timedelta(milliseconds=3), "y")]) == []
        assert [tuple(r) for r in d.step([("b", T0 + timedelta(milliseconds=10), "z")])] == [("a", 2, "+x+y")]
        assert ss.metrics(d.query)["client-windows"]["window-aggregate-final-emit-total"] == 1.0
        d.restart()
        assert d.advance() == []
        assert [tuple(r) for r in d.step([("c", T0 + timedelta(milliseconds=20), "w")])] == [("b", 1, "+z")]
    finally:
        d.stop()

    j = TestDriver(spark)
    orders = j.add_input("orders", "customer STRING, order_ts TIMESTAMP, amount INT")
    tiers = j.add_input("tiers", "customer STRING, changed_at TIMESTAMP, tier STRING")
    j.start(
        ss.join_versioned(
            orders, tiers, on="customer", stream_timestamp="order_ts", table_timestamp="changed_at", how="left"
        )
    )
    try:
        j.step([("a", T0, "gold")], input="tiers")
        assert [(r["customer"], r["tier"]) for r in j.step([("a", T0 + timedelta(seconds=1), 5)], input="orders")] == [
            ("a", "gold")
        ]
    finally:
        j.stop()

    s = TestDriver(spark, "key STRING, ts TIMESTAMP, value STRING", timestamp="ts")
    s.start(
        ss.suppress(
            s.input,
            key="key",
            timestamp="ts",
            suppressed=ss.Suppressed.until_time_limit(5, ss.BufferConfig.unbounded()).with_name("client-suppress"),
        )
    )
    try:
        s.step([("a", T0, "1")])
        assert [r["value"] for r in s.step([("b", T0 + timedelta(milliseconds=5), "2")])] == ["1"]
        assert ss.metrics(s.query)["client-suppress"]["suppression-emit-total"] == 1.0
    finally:
        s.stop()
    assert not [m for m in sys.modules if m.startswith("pyspark.sql.classic") or m.startswith("py4j")]
