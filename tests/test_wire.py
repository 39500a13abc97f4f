"""The one wire contract (proto/spark_suppress/spec.proto): each operator's spec, built by the Python package, decoded
by the JVM's one decoder into the same configuration a Scala user would build; JSON specs are refused everywhere.

py4j only (the messages a Connect client sends are the same bytes: test_connect.py checks them, test_connect_fuzz.py
spoils them).
"""

from __future__ import annotations

import re
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from google.protobuf.message import Message
from pyspark.errors import IllegalArgumentException
from pyspark.sql import functions as F

import spark_suppress as ss
from spark_suppress import _jvm, _spec
from spark_suppress.proto import spec_pb2
from spark_suppress.testing import TestDriver

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def captured(monkeypatch):
    """The spec messages the operators hand the py4j transport, which returns its input instead of building."""
    specs = []

    def keep(name):
        def capture(*args):
            specs.append(next(a for a in args if isinstance(a, Message)))
            return args[0]

        monkeypatch.setattr(_jvm, name, capture)

    for name in ("suppress", "aggregate_windowed", "aggregate", "join_versioned"):
        keep(name)
    return specs


def _decoder(spark):
    return spark.sparkContext._jvm.io.github.sparksuppress.wire.SpecDecoder


def _api(spark):
    return spark.sparkContext._jvm.io.github.sparksuppress.api


def _ms(spark, n):
    return spark.sparkContext._jvm.java.time.Duration.ofMillis(n)


def _module(package, name):
    """The instance of Scala object ``name`` (e.g. ``LateRecords$Emit``) of a py4j package."""
    return getattr(getattr(package, name + "$"), "MODULE$")


def _fields(config):
    """A configuration's fields as text (the operators are functions, whose toString says nothing)."""
    return [str(config.productElement(i)) for i in range(config.productArity())]


def _same(decoded, expected):
    """Case-class equality on the JVM, every field compared; the fields shown when they differ."""
    assert [a.equals(b) for a, b in zip(decoded, expected)] == [True] * len(expected), [
        (_fields(a), _fields(b)) for a, b in zip(decoded, expected)
    ]
    assert len(decoded) == len(expected)


def _nil(spark):
    return _module(spark.sparkContext._jvm.scala.collection.immutable, "Nil")


def _some(spark, value):
    return spark.sparkContext._jvm.scala.Some(value)


def test_suppress_specs_decode_to_the_configuration_the_scala_api_builds(spark, captured):
    d = TestDriver(spark, "user STRING, ts TIMESTAMP, w_start TIMESTAMP, w_end TIMESTAMP, del BOOLEAN", timestamp="ts")
    limit = (
        ss.Suppressed.until_time_limit(
            timedelta(seconds=3), ss.BufferConfig.max_bytes(4096).with_size_model("value_bytes"), clock="processing"
        )
        .with_timer_reset()
        .with_name("limit")
    )
    ss.suppress(d.input, key=["user"], timestamp="ts", suppressed=limit, tombstone="del")
    final = ss.Suppressed.until_window_closes(ss.BufferConfig.max_records(7).spill_to_disk())
    ss.suppress(
        d.input,
        key="user",
        timestamp="ts",
        suppressed=final,
        window=("w_start", "w_end"),
        grace=timedelta(milliseconds=5),
        late="emit",
        idle_timeout=timedelta(seconds=2),
    )
    decoded = [_decoder(spark).suppress(s.SerializeToString()) for s in captured]

    api, core = _api(spark), spark.sparkContext._jvm.io.github.sparksuppress.core
    buffer = _module(api, "BufferConfig").maxBytes(4096).withSizeModel(_module(core, "EntrySizeModel$ValueBytes"))
    scala_limit = (
        _module(api, "Suppressed")
        .untilTimeLimit(_ms(spark, 3000), buffer)
        .withClock(_module(core, "SuppressionClock$ProcessingTime"))
        .withTimerReset()
        .withName("limit")
    )
    first = _module(api, "Suppress").apply("user", "ts", scala_limit).withTombstone("del")
    scala_final = _module(api, "Suppressed").untilWindowCloses(_module(api, "BufferConfig").maxRecords(7).spillToDisk())
    second = (
        _module(api, "Suppress")
        .apply("user", "ts", scala_final)
        .withWindow(_module(api, "WindowColumns").startEnd("w_start", "w_end"))
        .withGrace(_ms(spark, 5))
        .withLateRecords(_module(api, "LateRecords$Emit"))
        .withIdleTimeout(_ms(spark, 2000))
    )
    _same(decoded, [first, second])
    d.stop()


def test_aggregation_specs_decode_to_the_configuration_the_scala_api_builds(spark, captured):
    d = TestDriver(spark, "user STRING, ts TIMESTAMP, n INT", timestamp="ts")
    windows = [
        ss.TimeWindows.of_size_and_grace(10, 2).advance_by(5),
        ss.SlidingWindows.of_time_difference_and_grace(7, 1),
        ss.SessionWindows.of_inactivity_gap_with_no_grace(30),
    ]
    for w in windows:
        ss.aggregate_windowed(
            d.input,
            key="user",
            timestamp="ts",
            windows=w,
            aggregations=[F.sum("n")],
            emit=ss.EmitStrategy.on_window_close(),
            name="agg",
            late="emit",
            idle_timeout=100,
        )
    ss.aggregate(d.input, key=["user"], timestamp="ts", aggregations=[F.sum("n")], name="totals")
    ss.aggregate(d.input, key="user", timestamp="ts", aggregations=[F.sum("n")])
    api = _api(spark)
    no_columns = _nil(spark)
    decoded = [_decoder(spark).aggregateWindowed(s.SerializeToString(), no_columns) for s in captured[:3]]
    decoded += [_decoder(spark).aggregate(s.SerializeToString(), no_columns) for s in captured[3:]]

    scala_windows = [
        _module(api, "TimeWindows").ofSizeAndGrace(_ms(spark, 10), _ms(spark, 2)).advanceBy(_ms(spark, 5)),
        _module(api, "SlidingWindows").ofTimeDifferenceAndGrace(_ms(spark, 7), _ms(spark, 1)),
        _module(api, "SessionWindows").ofInactivityGapAndGrace(_ms(spark, 30), _ms(spark, 0)),
    ]
    expected = [
        _module(api, "AggregateWindowed")
        .apply("user", "ts", w, no_columns, _module(api, "EmitStrategy").onWindowClose())
        .withName("agg")
        .withLateRecords(_module(api, "LateRecords$Emit"))
        .withIdleTimeout(_ms(spark, 100))
        for w in scala_windows
    ]
    expected += [
        _module(api, "Aggregate").apply("user", "ts", no_columns).withName("totals"),
        _module(api, "Aggregate").apply("user", "ts", no_columns),
    ]
    _same(decoded, expected)
    d.stop()


def test_join_specs_decode_to_the_configuration_the_scala_api_builds(spark, captured):
    d = TestDriver(spark)
    stream = d.add_input("orders", "customer STRING, order_ts TIMESTAMP", timestamp="order_ts")
    table = d.add_input("tiers", "customer STRING, changed_at TIMESTAMP, tier STRING, gone BOOLEAN")
    initial = spark.createDataFrame([], "customer STRING, changed_at TIMESTAMP, tier STRING, gone BOOLEAN")
    common = dict(on="customer", stream_timestamp="order_ts", table_timestamp="changed_at")
    ss.join_versioned(
        stream,
        table,
        **common,
        grace=5,
        history_retention=timedelta(seconds=1),
        how="left",
        tombstone="gone",
        initial_versions=initial,
        name="enrich",
        release_on_watermark=False,
        idle_timeout=300,
    )
    ss.join_versioned(stream, table, **common)
    decoded = [
        _decoder(spark).joinVersioned(captured[0].SerializeToString(), table._jdf, _some(spark, initial._jdf)),
        _decoder(spark).joinVersioned(
            captured[1].SerializeToString(), table._jdf, _module(spark.sparkContext._jvm.scala, "None")
        ),
    ]
    api = _api(spark)
    changelog = (
        _module(api, "ChangelogTable")
        .nonVersioned(table._jdf, "changed_at")
        .withHistoryRetention(_ms(spark, 1000))
        .withTombstone("gone")
        .withInitialVersions(initial._jdf)
    )
    joined = (
        _module(api, "Joined")
        .left()
        .withGracePeriod(_ms(spark, 5))
        .withName("enrich")
        .withIdleTimeout(_ms(spark, 300))
        .withoutWatermarkRelease()
    )
    expected = [
        _module(api, "StreamTableJoin").apply("customer", "order_ts", changelog, joined),
        _module(api, "StreamTableJoin").apply(
            "customer",
            "order_ts",
            _module(api, "ChangelogTable").nonVersioned(table._jdf, "changed_at"),
            _module(api, "Joined").inner(),
        ),
    ]
    # The DataFrames in the configurations are the same objects, so case-class equality compares every field.
    _same(decoded, expected)
    d.stop()


def test_a_json_spec_is_refused_by_every_entry_point(spark):
    d = TestDriver(spark, "key STRING, ts TIMESTAMP", timestamp="ts")
    facade = _jvm.facade(spark)
    text = '{"key": ["key"], "timestamp": "ts", "suppressed": {"mode": "untilTimeLimit", "timeLimitMs": 10}}'
    columns = spark.sparkContext._jvm.java.util.ArrayList()
    calls = {
        "SuppressSpec": lambda spec: facade.suppress(d.input._jdf, spec),
        "AggregateWindowedSpec": lambda spec: facade.aggregateWindowed(d.input._jdf, spec, columns),
        "AggregateSpec": lambda spec: facade.aggregate(d.input._jdf, spec, columns),
        "JoinVersionedSpec": lambda spec: facade.joinVersioned(d.input._jdf, d.input._jdf, None, spec),
    }
    for kind, call in calls.items():
        with pytest.raises(Exception) as e:
            call(text.encode())
        assert f"malformed operator spec: the bytes are not a {kind} message" in str(e.value), str(e.value)
        # The text itself (a Java String, as earlier releases passed it) reaches no entry point.
        with pytest.raises(Exception, match=r"Method \w+\(\[.*class java.lang.String.*\]\) does not exist"):
            call(text)
    d.stop()


def test_unknown_and_unset_choices_are_refused_naming_the_field(spark):
    d = TestDriver(spark, "key STRING, ts TIMESTAMP", timestamp="ts")
    facade = _jvm.facade(spark)
    suppressed = ss.Suppressed.until_time_limit(10, ss.BufferConfig.unbounded())._to_wire()
    spec = spec_pb2.SuppressSpec(key=["key"], timestamp="ts", suppressed=suppressed, late=spec_pb2.LATE_RECORDS_DROP)
    spec.suppressed.buffer.when_full = 17
    with pytest.raises(IllegalArgumentException, match=r"`SuppressSpec.suppressed.buffer.when_full` is 17, a value"):
        facade.suppress(d.input._jdf, spec.SerializeToString())
    spec.suppressed.buffer.when_full = spec_pb2.WHEN_FULL_UNBOUNDED
    spec.ClearField("late")
    with pytest.raises(IllegalArgumentException, match=r"`SuppressSpec.late` is not set"):
        facade.suppress(d.input._jdf, spec.SerializeToString())
    d.stop()


def test_a_choice_outside_the_vocabulary_is_refused_in_python_naming_parameter_value_and_choices():
    with pytest.raises(IllegalArgumentException, match="size_model must be 'kafka' or 'value_bytes', got 'bits'"):
        _spec.choice(spec_pb2.SizeModel, "bits", "size_model")
    assert _spec.choice(spec_pb2.Clock, "processing", "clock") == spec_pb2.CLOCK_PROCESSING


def test_a_missing_protobuf_package_is_an_import_error_naming_the_fix(monkeypatch):
    from spark_suppress import proto

    monkeypatch.setitem(sys.modules, "spark_suppress.proto.spec_pb2", None)
    monkeypatch.delattr(proto, "spec_pb2", raising=False)
    with pytest.raises(ImportError, match=re.escape("pip install 'protobuf>=6.33.5'")):
        _spec.messages()


def test_the_wheel_declares_the_protobuf_the_generated_code_checks_for():
    pyproject = (ROOT / "python" / "pyproject.toml").read_text()
    assert f'dependencies = ["{_spec.PROTOBUF_REQUIREMENT}"]' in pyproject
    gencode = (ROOT / "python" / "spark_suppress" / "proto" / "spec_pb2.py").read_text()
    version = re.search(r"Protobuf Python Version: (\S+)", gencode)
    assert version is not None and _spec.PROTOBUF_REQUIREMENT == f"protobuf>={version.group(1)}"
