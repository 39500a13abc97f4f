"""What only the Spark Connect transport has: Connect DataFrames in and out, the wire messages, version and setting
checks. Runs with SPARK_SUPPRESS_CONNECT=1 (make test-connect), where test_suppress/test_emit/test_join also run
every operator, validation error, restart and metric over Connect."""

import json
from datetime import datetime, timedelta, timezone

import pytest
from pyspark.errors import IllegalArgumentException
from pyspark.sql import functions as F

import spark_suppress as ss
from spark_suppress import _connect, _jars, _transport
from spark_suppress.proto import connect_pb2, spec_pb2
from spark_suppress.testing import TestDriver

SCHEMA = "key STRING, ts TIMESTAMP, value STRING"
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
LIMIT = ss.Suppressed.until_time_limit(10, ss.BufferConfig.unbounded())


def test_the_session_is_a_connect_session(spark):
    assert type(spark).__module__.startswith("pyspark.sql.connect")


def test_every_operator_takes_and_returns_connect_dataframes(spark):
    d = TestDriver(spark)
    stream = d.add_input("orders", "customer STRING, order_ts TIMESTAMP, amount INT", timestamp="order_ts")
    table = d.add_input("tiers", "customer STRING, changed_at TIMESTAMP, tier STRING")
    initial = spark.createDataFrame([("a", T0, "gold")], "customer STRING, changed_at TIMESTAMP, tier STRING")
    outs = [
        ss.suppress(stream, key="customer", timestamp="order_ts", suppressed=LIMIT),
        ss.aggregate_windowed(
            stream,
            key="customer",
            timestamp="order_ts",
            windows=ss.TimeWindows.of_size_with_no_grace(10),
            aggregations=[F.sum("amount").alias("total"), ss.string_fold("amount").alias("trace")],
        ),
        ss.join_versioned(
            stream,
            table,
            on="customer",
            stream_timestamp="order_ts",
            table_timestamp="changed_at",
            grace=5,
            history_retention=10,
            initial_versions=initial,
        ),
    ]
    for out in outs:
        assert type(out).__module__ == "pyspark.sql.connect.dataframe"
        assert out.isStreaming
    assert outs[1].columns == ["customer", "window", "total", "trace", "order_ts"]
    assert outs[2].columns == ["customer", "order_ts", "amount", "tier"]


def test_string_fold_traces_arrival_order_over_connect(spark):
    d = TestDriver(spark, SCHEMA, timestamp="ts")
    out = ss.aggregate_windowed(
        d.input,
        key="key",
        timestamp="ts",
        windows=ss.TimeWindows.of_size_with_no_grace(10),
        aggregations=[ss.string_fold("value", initial="0", separator="+").alias("trace")],
        emit=ss.EmitStrategy.on_window_close(),
    )
    d.start(out.select("key", "trace"))
    try:
        assert d.step([("a", T0, "x")]) == []
        assert d.step([("a", T0 + timedelta(milliseconds=5), "y")]) == []
        assert [tuple(r) for r in d.step([("b", T0 + timedelta(milliseconds=10), "z")])] == [("a", "0+x+y")]
    finally:
        d.stop()


def test_the_message_carries_the_facade_spec_and_the_input_plan(spark):
    # One translation: the spec on the wire is the bytes py4j passes the facade, and the input is the Connect plan.
    d = TestDriver(spark, SCHEMA, timestamp="ts")
    out = ss.suppress(d.input, key="key", timestamp="ts", suppressed=LIMIT.with_name("wire"), tombstone=None)
    relation = out._plan.plan(spark.client)
    message = connect_pb2.Suppress()
    assert relation.extension.Unpack(message)
    assert message.client_version == ss.__version__
    spec = spec_pb2.SuppressSpec.FromString(message.spec)
    assert list(spec.key) == ["key"] and spec.suppressed.name == "wire" and not spec.HasField("tombstone")
    assert message.input == d.input._plan.plan(spark.client).SerializeToString()


def test_validation_errors_are_connect_exceptions_with_the_jvm_message(spark):
    d = TestDriver(spark, SCHEMA, timestamp="ts")
    with pytest.raises(IllegalArgumentException) as e:
        ss.suppress(d.input, key="user", timestamp="ts", suppressed=LIMIT)
    assert type(e.value).__module__ == "pyspark.errors.exceptions.connect"
    assert str(e.value).startswith("suppress 'suppress-")
    assert "key 'user' is not a column of the input; columns are ['key', 'ts', 'value']." in str(e.value)


def test_a_client_of_another_version_is_refused_naming_both_versions(spark, monkeypatch):
    d = TestDriver(spark, SCHEMA, timestamp="ts")
    monkeypatch.setattr(_jars, "__version__", "9.9.9")
    with pytest.raises(ss.VersionMismatchError) as e:
        ss.suppress(d.input, key="key", timestamp="ts", suppressed=LIMIT)
    assert (
        "the Python package is version 9.9.9 but the Spark Connect server runs the spark-suppress jar version"
        in str(e.value)
    )


def test_metrics_of_a_query_started_by_the_user(spark, tmp_path):
    rows = [(f"k{i % 3}", T0 + timedelta(milliseconds=i), str(i)) for i in range(7)]
    spark.createDataFrame(rows, SCHEMA).write.parquet(str(tmp_path / "in"))
    src = spark.readStream.schema(spark.read.parquet(str(tmp_path / "in")).schema).parquet(str(tmp_path / "in"))
    out = ss.suppress(
        src.withWatermark("ts", "0 seconds"),
        key="key",
        timestamp="ts",
        suppressed=ss.Suppressed.until_time_limit(timedelta(days=1), ss.BufferConfig.unbounded()).with_name(
            "users-query"
        ),
    )
    q = out.writeStream.format("noop").option("checkpointLocation", str(tmp_path / "ckpt")).start()
    try:
        q.processAllAvailable()
        m = ss.metrics(q)["users-query"]
        assert m["suppression-emit-total"] == 0.0  # a day-long limit holds everything
        assert m["suppression-buffer-count-current"] == 3.0  # the latest update of each key
    finally:
        q.stop()
    # A stopped query still names its operators through its progress reports.
    assert ss.metrics(q)["users-query"]["suppression-buffer-count-current"] == 3.0


def _metrics_of(session, observation_names):
    """What a client asking for these observation names gets: ss.metrics(query) sends the names it read in the
    query's progress reports, so a client can send any names."""
    message = _connect._message("Metrics", observation_names=observation_names)
    return json.loads(_connect._dataframe(_connect._extension_plan(message, []), session).collect()[0][0])


def _held_query(session, path, name):
    rows = [(f"k{i % 3}", T0 + timedelta(milliseconds=i), str(i)) for i in range(7)]
    session.createDataFrame(rows, SCHEMA).write.parquet(str(path / "in"))
    src = session.readStream.schema(SCHEMA).parquet(str(path / "in"))
    held = ss.Suppressed.until_time_limit(timedelta(days=1), ss.BufferConfig.unbounded()).with_name(name)
    out = ss.suppress(src.withWatermark("ts", "0 seconds"), key="key", timestamp="ts", suppressed=held)
    q = out.writeStream.format("noop").option("checkpointLocation", str(path / "ckpt")).start()
    q.processAllAvailable()
    return q


def test_metrics_answer_only_the_session_that_runs_the_query(spark, tmp_path):
    import connect_server

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    mine = _held_query(spark, tmp_path / "a", "session-a")
    other = connect_server.another_client()
    try:
        names = sorted({n for p in mine.recentProgress for n in _connect.progress_field(p, "observedMetrics") or {}})
        assert any(n.startswith("spark_suppress:session-a#") for n in names), names
        # Another session that learns (or guesses) the names is refused, and learns nothing from the error.
        with pytest.raises(IllegalArgumentException) as stolen:
            _metrics_of(other, names)
        with pytest.raises(IllegalArgumentException) as guessed:
            _metrics_of(other, ["spark_suppress:session-a#999999"])
        for e in (stolen, guessed):
            assert "is not the observation of an operator of this session's streaming queries" in str(e.value)
            assert "only for the queries of the session that asks" in str(e.value)
            assert "suppression-buffer-count" not in str(e.value)
        # The other session reads its own query's metrics, and the owner still reads its own.
        theirs = _held_query(other, tmp_path / "b", "session-b")
        try:
            assert ss.metrics(theirs)["session-b"]["suppression-buffer-count-current"] == 3.0
            their_names = [
                n for p in theirs.recentProgress for n in _connect.progress_field(p, "observedMetrics") or {}
            ]
            with pytest.raises(IllegalArgumentException):
                _metrics_of(spark, their_names)
        finally:
            theirs.stop()
        assert ss.metrics(mine)["session-a"]["suppression-buffer-count-current"] == 3.0
        assert _metrics_of(spark, names + ["a-users-own-observation"])["session-a"]["suppression-emit-total"] == 0.0
    finally:
        mine.stop()
        other.stop()


def test_an_ordinary_deep_plan_passes_and_nesting_past_the_limit_is_refused(spark):
    from pyspark.sql.connect import proto as sp

    d = TestDriver(spark, SCHEMA, timestamp="ts")
    deep = d.input
    for i in range(60):  # deeper than protobuf's default recursion limit (100), well within Spark's (1024)
        deep = deep.withColumn(f"c{i % 3}", F.lit(i))
    assert ss.suppress(deep, key="key", timestamp="ts", suppressed=LIMIT).columns[:3] == ["key", "ts", "value"]

    relation = ss.suppress(d.input, key="key", timestamp="ts", suppressed=LIMIT)._plan.plan(spark.client)
    for _ in range(70):
        message = connect_pb2.Suppress()
        relation.extension.Unpack(message)
        message.input = relation.SerializeToString()
        relation = sp.Relation()
        relation.extension.Pack(message)
    with pytest.raises(IllegalArgumentException, match="the client's plan nests more than 64 spark-suppress operators"):
        _connect._dataframe(_Raw(relation), spark).schema


def test_malformed_messages_and_specs_are_refused_naming_the_field(spark):
    d = TestDriver(spark, SCHEMA, timestamp="ts")
    relation = ss.suppress(d.input, key="key", timestamp="ts", suppressed=LIMIT)._plan.plan(spark.client)
    message = connect_pb2.Suppress()
    relation.extension.Unpack(message)

    def refused(**fields):
        spoiled = connect_pb2.Suppress()
        spoiled.CopyFrom(message)
        for k, v in fields.items():
            setattr(spoiled, k, v)
        relation.extension.Pack(spoiled)
        with pytest.raises(IllegalArgumentException) as e:
            _connect._dataframe(_Raw(relation), spark).schema
        return str(e.value)

    assert "the client's Suppress.input (a spark.connect.Relation) is not a valid protobuf message" in refused(
        input=message.input[:-3]
    )
    spec = spec_pb2.SuppressSpec.FromString(message.spec)
    spec.suppressed.clock = 9
    assert "malformed operator spec: `SuppressSpec.suppressed.clock` is 9, a value this release does not know" in (
        refused(spec=spec.SerializeToString())
    )
    spec.suppressed.clock = spec_pb2.CLOCK_EVENT
    spec.ClearField("timestamp")
    assert "malformed operator spec: `SuppressSpec.timestamp` is not set" in refused(spec=spec.SerializeToString())
    assert "malformed operator spec: the bytes are not a SuppressSpec message" in refused(spec=b"{" * 5000)
    assert "malformed operator spec: the client sent no SuppressSpec" in refused(spec=b"")
    assert "version mismatch: the Python package is version xxxxxxxxxx" in refused(client_version="x" * 100_000)
    assert len(refused(client_version="x" * 100_000).split("JVM stacktrace")[0]) < 2000
    # proto3 sends no empty string: this is a message without the field, which must not skip the version check.
    assert "the client's Suppress message has no client_version" in refused(client_version="")


def test_a_json_spec_of_earlier_releases_is_refused(spark):
    # Earlier releases sent the spec as JSON text in field 2 (spec_json, now reserved): a client still doing so sends
    # no spec; the same text as the spec's bytes is no spec message.
    d = TestDriver(spark, SCHEMA, timestamp="ts")
    relation = ss.suppress(d.input, key="key", timestamp="ts", suppressed=LIMIT)._plan.plan(spark.client)
    message = connect_pb2.Suppress()
    relation.extension.Unpack(message)
    text = json.dumps({"key": ["key"], "timestamp": "ts", "suppressed": {"mode": "untilTimeLimit"}}).encode()
    message.ClearField("spec")
    old = message.SerializeToString() + b"\x12" + bytes([len(text)]) + text
    for value, expected in [
        (old, "malformed operator spec: the client sent no SuppressSpec"),
        (connect_pb2.Suppress(input=message.input, spec=text, client_version=ss.__version__).SerializeToString(), None),
    ]:
        relation.extension.value = value
        with pytest.raises(IllegalArgumentException) as e:
            _connect._dataframe(_Raw(relation), spark).schema
        assert (expected or "malformed operator spec: ") in str(e.value), str(e.value)


class _Raw:
    """A Connect plan of one relation built by hand (what a client other than this package may send)."""

    def __new__(cls, relation):
        from pyspark.sql.connect.plan import LogicalPlan

        class Raw(LogicalPlan):
            def __init__(self) -> None:
                super().__init__(None)

            def plan(self, session):
                return relation

        return Raw()


def test_mixing_transports_is_refused_naming_each_dataframe():
    class Classic:  # stands in for a classic DataFrame: the check reads only the type's module
        __module__ = "pyspark.sql.classic.dataframe"

    class Remote:
        __module__ = "pyspark.sql.connect.dataframe"

    with pytest.raises(TypeError, match="stream_df is a Spark Connect DataFrame, table_df is a classic DataFrame"):
        _transport.of(stream_df=Remote(), table_df=Classic(), initial_versions=None)


def test_server_settings_and_the_no_plugin_message_name_jar_and_classes():
    conf = ss.connect_server_conf()
    assert conf["spark.jars"] == ss.jar_path()
    assert (
        conf["spark.connect.extensions.relation.classes"]
        == "io.github.sparksuppress.connect.SparkSuppressRelationPlugin"
    )
    assert (
        conf["spark.connect.extensions.expression.classes"]
        == "io.github.sparksuppress.connect.StringFoldExpressionPlugin"
    )
    message = _connect.missing_plugin_message(expression=True)
    assert f"--jars {ss.jar_path()} --conf spark.connect.extensions.expression.classes=" in message


def test_configure_registers_the_plugins_for_a_local_connect_server_only():
    class Builder:
        def __init__(self, options):
            self._options = dict(options)

        def config(self, key, value):
            return Builder({**self._options, key: value})

    local = ss.configure(Builder({"spark.remote": "local[2]", "spark.jars": "/x.jar"}))._options
    assert local["spark.jars"] == f"/x.jar,{ss.jar_path()}"
    assert (
        local["spark.connect.extensions.relation.classes"]
        == "io.github.sparksuppress.connect.SparkSuppressRelationPlugin"
    )
    remote = Builder({"spark.remote": "sc://somewhere:15002"})
    assert ss.configure(remote) is remote  # a remote server is configured where it starts
    classic = ss.configure(Builder({}))._options
    assert set(classic) == {"spark.jars"}


def test_configure_makes_a_local_connect_session_one_line():
    from conftest import run_python

    result = run_python(
        "from pyspark.sql import SparkSession, functions as F\n"
        "import spark_suppress as ss\n"
        "import os\n"
        "builder = SparkSession.builder.remote('local[1]')\n"
        # Spark 3.5's Connect server jar, which the Makefile fetches: configure() would add its package otherwise.
        "if os.environ.get('SPARK_SUPPRESS_SERVER_JARS'):\n"
        "    builder = builder.config('spark.jars', os.environ['SPARK_SUPPRESS_SERVER_JARS'])\n"
        "spark = ss.configure(builder).getOrCreate()\n"
        "src = spark.readStream.format('rate').load().withWatermark('timestamp', '0 seconds')\n"
        "out = ss.aggregate_windowed(src, key='value', timestamp='timestamp',\n"
        "    windows=ss.TimeWindows.of_size_with_no_grace(10), aggregations=[ss.string_fold('value').alias('trace')])\n"
        "print('COLUMNS:' + ','.join(out.columns) + ':' + type(out).__module__)\n"
        "spark.stop()\n",
        # PySpark connects to a local server's ephemeral port only under SPARK_TESTING; 15002 may be taken here.
        env_extra={"SPARK_TESTING": "1", "SPARK_SUPPRESS_CONNECT": ""},
    )
    assert "COLUMNS:value,window,trace,timestamp:pyspark.sql.connect.dataframe" in result.stdout, result.stderr[-3000:]


def test_a_server_without_the_expression_plugin_names_that_setting_for_string_fold():
    from conftest import run_python

    result = run_python(
        "from pyspark.sql import SparkSession, functions as F\n"
        "import spark_suppress as ss\n"
        "import os\n"
        "jars = ','.join(j for j in [ss.jar_path(), os.environ.get('SPARK_SUPPRESS_SERVER_JARS')] if j)\n"
        "spark = (SparkSession.builder.remote('local[1]').config('spark.jars', jars)\n"
        "    .config('spark.connect.extensions.relation.classes', ss._jars.RELATION_PLUGIN).getOrCreate())\n"
        "src = spark.readStream.format('rate').load().withWatermark('timestamp', '0 seconds')\n"
        "windows = ss.TimeWindows.of_size_with_no_grace(10)\n"
        "out = ss.aggregate_windowed(src, key='value', timestamp='timestamp', windows=windows,\n"
        "                            aggregations=[F.count('*')])\n"
        "print('OPERATOR:' + type(out).__module__)\n"
        "try:\n"
        "    ss.aggregate_windowed(src, key='value', timestamp='timestamp', windows=windows,\n"
        "                          aggregations=[ss.string_fold('value')])\n"
        "except ss.ConnectPluginMissingError as e:\n"
        "    print('ERR:' + str(e))\n"
        "spark.stop()\n",
        env_extra={"SPARK_TESTING": "1", "SPARK_SUPPRESS_CONNECT": ""},
    )
    assert "OPERATOR:pyspark.sql.connect.dataframe" in result.stdout, result.stderr[-3000:]
    assert (
        "ERR:the Spark Connect server cannot run this: string_fold needs spark-suppress's expression plugin"
        in result.stdout
    )
    assert (
        "--conf spark.connect.extensions.expression.classes=io.github.sparksuppress.connect.StringFoldExpressionPlugin"
        in result.stdout
    )
