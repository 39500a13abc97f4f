"""The Connect plugin under malformed messages: the plugin parses bytes from any client of a shared server.

Each message goes through the real path (gRPC, Spark's planner, the relation plugin) as the relation of an
AnalyzePlan request, which makes the server build the operator, as the Python package's own calls do, without
starting a query. Every message must get a clear error on the client (or, for a mutation that left a valid message,
an answer), quickly; the server must keep serving the same session, and a real query afterwards.

Runs with SPARK_SUPPRESS_CONNECT=1; RELIABILITY=1 (make reliability) sends 10,000 messages, otherwise a quick slice.
The seed is random and printed; SPARK_SUPPRESS_FUZZ_SEED replays a run.
"""

from __future__ import annotations

import os
import random
import time
from collections import Counter
from datetime import datetime, timedelta, timezone

import spark_suppress as ss
from spark_suppress import _connect
from spark_suppress.proto import connect_pb2, spec_pb2
from spark_suppress.testing import TestDriver

MESSAGES = 10_000 if os.environ.get("RELIABILITY") == "1" else 400
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
SCHEMA = "key STRING, ts TIMESTAMP, value STRING"
TYPE_PREFIX = "type.googleapis.com/spark_suppress.connect."
# The plugin's limit on its own messages nested in one another (ConnectSupport.MaxNesting).
MAX_NESTING = 64

# What a client must never see: the JVM's internal failures (a message the plugin did not check), or a status with no
# message (an error thrown past Spark's handler, e.g. a stack overflow).
UNCLEAR = (
    "NullPointerException",
    "ClassCastException",
    "StackOverflowError",
    "OutOfMemoryError",
    "MatchError",
    "IndexOutOfBounds",
    "NoSuchElementException",
    "NumberFormatException",
    "InvalidProtocolBufferException",
    "UninitializedMessageException",
)
# Each operator's spec message (spec.proto), which its Connect message carries as bytes.
SPECS = {
    "Suppress": spec_pb2.SuppressSpec,
    "AggregateWindowed": spec_pb2.AggregateWindowedSpec,
    "Aggregate": spec_pb2.AggregateSpec,
    "JoinVersioned": spec_pb2.JoinVersionedSpec,
}


def _raw_frame(session, relation):
    from pyspark.sql.connect.plan import LogicalPlan

    class Raw(LogicalPlan):
        def __init__(self) -> None:
            super().__init__(None)

        def plan(self, session):  # noqa: ARG002 - the relation is already built
            return relation

    return _connect._dataframe(Raw(), session)


def _relation(type_name: str, value: bytes):
    from pyspark.sql.connect import proto as sp

    rel = sp.Relation()
    rel.extension.type_url = TYPE_PREFIX + type_name
    rel.extension.value = value
    return rel


class Corpus:
    """Valid messages of every kind, built by the Python package itself, and ways to spoil them."""

    def __init__(self, spark, driver: TestDriver):
        from pyspark.sql import functions as F
        from pyspark.sql.connect import proto as sp

        self.spark = spark
        stream = driver.add_input("orders", "customer STRING, order_ts TIMESTAMP, amount INT", timestamp="order_ts")
        table = driver.add_input("tiers", "customer STRING, changed_at TIMESTAMP, tier STRING")
        limit = ss.Suppressed.until_time_limit(10, ss.BufferConfig.max_records(5).emit_early_when_full())
        outs = {
            "Suppress": ss.suppress(stream, key="customer", timestamp="order_ts", suppressed=limit.with_name("fz")),
            "AggregateWindowed": ss.aggregate_windowed(
                stream,
                key="customer",
                timestamp="order_ts",
                windows=ss.TimeWindows.of_size_with_no_grace(10),
                aggregations=[F.sum("amount").alias("total"), ss.string_fold("amount").alias("trace")],
            ),
            "Aggregate": ss.aggregate(
                stream, key="customer", timestamp="order_ts", aggregations=[F.count("*").alias("n")]
            ),
            "JoinVersioned": ss.join_versioned(
                stream,
                table,
                on="customer",
                stream_timestamp="order_ts",
                table_timestamp="changed_at",
                grace=5,
                history_retention=10,
            ),
        }
        self.valid = {k: df._plan.plan(spark.client).extension.value for k, df in outs.items()}
        self.valid["Metrics"] = connect_pb2.Metrics(
            observation_names=["spark_suppress:x#1"], client_version=ss.__version__
        ).SerializeToString()
        self.input = stream._plan.plan(spark.client).SerializeToString()
        self.specs = {k: SPECS[k].FromString(self._parsed(k).spec) for k in SPECS}
        self.sp = sp
        self._nested = {}

    def _parsed(self, kind: str):
        m = getattr(connect_pb2, kind)()
        m.ParseFromString(self.valid[kind])
        return m

    def _spec(self, kind: str):
        spec = SPECS[kind]()
        spec.CopyFrom(self.specs[kind])
        return spec

    def _with_spec(self, kind: str, spec: bytes):
        m = self._parsed(kind)
        m.spec = spec
        return _relation(kind, m.SerializeToString())

    # --- the kinds of bad message ---

    def random_bytes(self, rng):
        return "random", _relation(rng.choice(list(self.valid)), rng.randbytes(rng.randint(0, 600)))

    def truncated(self, rng):
        kind = rng.choice(list(self.valid))
        v = self.valid[kind]
        return "truncated", _relation(kind, v[: rng.randint(0, len(v) - 1)])

    def bit_flipped(self, rng):
        kind = rng.choice(list(self.valid))
        v = bytearray(self.valid[kind])
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(v))
            v[i] ^= 1 << rng.randrange(8)
        return "bit-flipped", _relation(kind, bytes(v))

    def oversized(self, rng):
        kind = rng.choice([k for k in self.valid if k != "Metrics"])
        m = self._parsed(kind)
        big = rng.choice([1 << 16, 1 << 20, 4 << 20])
        text = "".join(rng.choice("abcxyz\u00e9\u4e2d\"{}[]") for _ in range(64)) * (big // 64)
        which = rng.choice(["spec", "version", "column", "input", "metrics", "aggregations"])
        if which == "spec":
            m.spec = rng.randbytes(big)
        elif which == "version":
            m.client_version = text
        elif which == "column":
            spec = self._spec(kind)
            getattr(spec, "on" if kind == "JoinVersioned" else "key").append(text)
            m.spec = spec.SerializeToString()
        elif which == "input":
            setattr(m, "stream" if kind == "JoinVersioned" else "input", rng.randbytes(big))
        elif which == "metrics":
            names = [f"spark_suppress:{text[:200]}#{i}" for i in range(rng.choice([1000, 50_000]))]
            return "oversized", _relation(
                "Metrics",
                connect_pb2.Metrics(observation_names=names, client_version=ss.__version__).SerializeToString(),
            )
        else:
            if kind not in ("AggregateWindowed", "Aggregate"):
                m.spec = text.encode()
            else:
                del m.aggregations[:]
                m.aggregations.extend(rng.randbytes(rng.randint(0, 40)) for _ in range(rng.choice([100, 5000])))
        return "oversized", _relation(kind, m.SerializeToString())

    # Spec fields that name a choice (the spec's enums), and numbers no release knows (0 is "not set").
    ENUMS = {
        "Suppress": [
            ("suppressed", "mode"),
            ("suppressed", "buffer", "when_full"),
            ("suppressed", "clock"),
            ("suppressed", "buffer", "size_model"),
            ("late",),
            ("suppressed", "buffer_time"),
        ],
        "AggregateWindowed": [("emit",), ("late",)],
        "JoinVersioned": [("how",)],
    }

    def unknown_enum(self, rng):
        if rng.random() < 0.3:
            # An enum of Spark's own inside the input relation: a join type no Spark release has.
            sp = self.sp
            left = sp.Relation()
            left.ParseFromString(self.input)
            rel = sp.Relation()
            rel.join.left.CopyFrom(left)
            rel.join.right.CopyFrom(left)
            rel.join.join_type = rng.randint(8, 1 << 20)
            m = self._parsed("Suppress")
            m.input = rel.SerializeToString()
            return "unknown enum", _relation("Suppress", m.SerializeToString())
        kind = rng.choice(list(self.ENUMS))
        spec = self._spec(kind)
        node = spec
        path = rng.choice(self.ENUMS[kind])
        for p in path[:-1]:
            node = getattr(node, p)
        setattr(node, path[-1], rng.choice([0, 5, 7, 99, 1 << 20, 2**31 - 1, -1, -(2**31)]))
        return "unknown enum", self._with_spec(kind, spec.SerializeToString())

    # The spec fields each operator cannot do without.
    REQUIRED = {
        "Suppress": ["timestamp", "suppressed", "late"],
        "AggregateWindowed": ["timestamp", "windows", "emit", "late"],
        "Aggregate": ["timestamp"],
        "JoinVersioned": ["stream_timestamp", "table_timestamp", "how", "release_on_watermark"],
    }

    def bad_spec(self, rng):
        kind = rng.choice(list(self.specs))
        valid = self.specs[kind].SerializeToString()
        choice = rng.randrange(6)
        if choice == 0:
            spec = self._spec(kind)
            spec.ClearField(rng.choice(self.REQUIRED[kind]))
            value = spec.SerializeToString()
        elif choice == 1:
            # A strict prefix: every spec ends with a field it cannot do without, so none is a valid spec.
            value = valid[: rng.randint(0, len(valid) - 1)]
        elif choice == 2:
            # Fields this release does not know, after a valid spec.
            value = valid + rng.choice([b"\x78\x01", b"\xa2\x06\x03abc", b"\x0d\x00\x00\x00\x00"])
        elif choice == 3:
            depth = rng.choice([100, 2000, 100_000])
            value = b"\x0b" * depth + b"\x0c" * depth
        elif choice == 4:
            # Earlier releases' JSON specs, and other text.
            value = rng.choice(
                [b"", b"null", b"[]", b"42", b'"spec"', b"{}", b"\x00\xff", b'{"key": ["customer"], "timestamp": "t"}']
            )
        else:
            value = rng.randbytes(rng.randint(1, 200))
        return "bad spec", self._with_spec(kind, value)

    def nested(self, rng):
        # A few depths, each built once: building them is most of the cost, and the server sees the same bytes as new.
        choice = rng.randrange(3)
        depth = rng.choice([[MAX_NESTING + 1, MAX_NESTING + 10, 3000], [1100, 3000], [MAX_NESTING + 1, 500]][choice])
        if (choice, depth) not in self._nested:
            self._nested[(choice, depth)] = self._nested_relation(choice, depth)
        return "nested", self._nested[(choice, depth)]

    def _nested_relation(self, choice: int, depth: int):
        sp = self.sp
        if choice == 0:
            # The plugin's own messages in one another, beyond its limit.
            value = self.input
            for _ in range(depth):
                m = self._parsed("Suppress")
                m.input = value
                rel = sp.Relation()
                rel.extension.Pack(m)
                value = rel.SerializeToString()
            return rel
        if choice == 1:
            # Spark's own relations nested past the recursion limit Spark's server allows (1024), inside the input.
            rel = sp.Relation()
            rel.ParseFromString(self.input)
            for _ in range(depth):
                outer = sp.Relation()
                outer.limit.input.CopyFrom(rel)
                outer.limit.limit = 1
                rel = outer
            m = self._parsed("Suppress")
            m.input = rel.SerializeToString()
            return _relation("Suppress", m.SerializeToString())
        # string_fold in string_fold, past the limit.
        expr = sp.Expression()
        expr.unresolved_attribute.unparsed_identifier = "amount"
        for _ in range(depth):
            outer = sp.Expression()
            outer.extension.Pack(connect_pb2.StringFold(column=expr.SerializeToString(), initial="0", separator="+"))
            expr = outer
        m = self._parsed("AggregateWindowed")
        del m.aggregations[:]
        m.aggregations.append(expr.SerializeToString())
        return _relation("AggregateWindowed", m.SerializeToString())

    def generators(self):
        return [
            self.random_bytes,
            self.truncated,
            self.bit_flipped,
            self.oversized,
            self.unknown_enum,
            self.bad_spec,
            self.nested,
        ]


def _outcome(spark, relation):
    """What the client gets: 'ok', or the error's type and message. Raises on an unclear error."""
    started = time.monotonic()
    try:
        _raw_frame(spark, relation).schema
        result = ("ok", "")
    except Exception as e:  # noqa: BLE001 - every error is examined below
        result = (type(e).__name__, str(e))
    elapsed = time.monotonic() - started
    return result, elapsed


def _is_clear(kind: str, text: str) -> bool:
    # PySpark names errors of classes it does not map UnknownException, with the JVM's class and message (Spark's
    # DATA_SOURCE_NOT_FOUND, for one): clear unless the class is one of UNCLEAR. A bare gRPC error has no message.
    if kind == "SparkConnectGrpcException" or not text.strip():
        return False
    head = text.split("JVM stacktrace:")[0]
    return not any(u in head for u in UNCLEAR)


def _server_identity():
    import connect_server

    server = connect_server.server_session()
    service = getattr(server._jvm, "org.apache.spark.sql.connect.service.SparkConnectService$")
    sc = server._jsc.sc()
    return sc.applicationId(), sc.startTime(), getattr(service, "MODULE$").localPort()


def test_malformed_messages_get_clear_errors_and_the_server_keeps_serving(spark):
    import connect_server

    seed = int(os.environ.get("SPARK_SUPPRESS_FUZZ_SEED", random.SystemRandom().randrange(1 << 32)))
    print(f"\nconnect fuzz: seed {seed} (SPARK_SUPPRESS_FUZZ_SEED={seed} replays it), {MESSAGES} messages")
    rng = random.Random(seed)
    driver = TestDriver(spark)
    corpus = Corpus(spark, driver)
    identity = _server_identity()
    server = connect_server.server_session()
    # Each refused message is an ERROR with a stack trace in the server's log: thousands of them are noise here.
    server.sparkContext.setLogLevel("OFF")
    counts, seconds, unclear, slowest = Counter(), Counter(), [], (0.0, "")
    started = time.monotonic()
    try:
        generators = corpus.generators()
        for i in range(MESSAGES):
            built = time.monotonic()
            category, relation = generators[i % len(generators)](rng)
            (kind, text), elapsed = _outcome(spark, relation)
            seconds[category] += time.monotonic() - built
            counts[(category, "answered" if kind == "ok" else "error")] += 1
            if kind != "ok" and not _is_clear(kind, text):
                unclear.append((i, category, kind, text[:400]))
            if elapsed > slowest[0]:
                slowest = (elapsed, category)
            if i % 1000 == 999:
                assert spark.range(5).count() == 5, f"the session stopped serving after message {i}"
    finally:
        server.sparkContext.setLogLevel("WARN")
    took = time.monotonic() - started
    errors = sum(n for (_, outcome), n in counts.items() if outcome == "error")
    print(
        f"connect fuzz: {MESSAGES} messages in {took:.0f} s, {errors} errors, "
        f"{MESSAGES - errors} answered (mutations that left a valid message), unclear {len(unclear)}, "
        f"slowest {slowest[0]:.2f} s ({slowest[1]}), server restarts: "
        f"{0 if _server_identity() == identity else 1}"
    )
    for (category, outcome), n in sorted(counts.items()):
        print(f"  {category:13} {outcome:9} {n:6}  ({seconds[category]:.1f} s for the category)")
    assert not unclear, f"seed {seed}: {len(unclear)} unclear errors, first ones: {unclear[:5]}"
    assert _server_identity() == identity, "the Connect server was restarted"
    assert slowest[0] < 30, f"seed {seed}: a message took {slowest[0]:.1f} s ({slowest[1]})"
    # Only mutations can leave a valid message; random and truncated bytes, bad specs and nesting must all fail.
    for category in ("bad spec", "nested", "unknown enum"):
        assert counts[(category, "answered")] == 0, (seed, category, counts)
    assert errors >= MESSAGES * 0.8, counts

    # The same session still runs a real query correctly.
    d = TestDriver(spark, SCHEMA, timestamp="ts")
    out = ss.suppress(
        d.input, key="key", timestamp="ts", suppressed=ss.Suppressed.until_time_limit(10, ss.BufferConfig.unbounded())
    )
    d.start(out.select("key", "value"))
    try:
        assert d.step([("a", T0, "x"), ("b", T0, "y")]) == []
        emitted = d.step([("c", T0 + timedelta(milliseconds=20), "z")])
        assert sorted(tuple(r) for r in emitted) == [("a", "x"), ("b", "y")]
    finally:
        d.stop()
        driver.stop()
