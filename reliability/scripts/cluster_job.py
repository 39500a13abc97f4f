"""One spark-suppress operator as a streaming query on a cluster, the job the fault tests (reliability/
test_cluster_faults.py) submit, kill and submit again.

    spark-submit --master spark://... --jars spark-suppress.jar cluster_job.py OPERATOR[,OPERATOR...] WORKDIR \
        [--input DIR] \
        [--provider hdfs|rocksdb[,...]] [--source files|kafka] [--sink files|delta|kafka[,...]] \
        [--bootstrap HOST:PORT] \
        [--produce BATCHES]

OPERATOR is suppress, aggregate, join or chain (join -> windowed aggregation -> suppress in one query); several,
comma-separated, run one after another in one application, or at once with ``--together`` (the tests' uninterrupted
references: one submission, one JVM start-up, for all of them; the sinks' runs with kills). One operator may name
several providers or sinks (``--provider hdfs,rocksdb``): one query per provider and sink, all running at once. Queries
running at once each have a session (the provider is a session setting, recorded in the query's checkpoint); every kill
hits each of them, and a driver kill costs one resubmission for all of them. The input is generated from a fixed seed
(``write_inputs``, also called by the tests) as one file per micro-batch, or as records of a one-partition Kafka topic
read a fixed number per micro-batch: batches are the same in every run. A query runs with Trigger.AvailableNow from
WORKDIR/LANE/checkpoint to the sink under WORKDIR/LANE (or topic ``out``; ``out-LANE`` when several run), LANE being
the operator, followed by the provider and sink when several of them run (``suppress-rocksdb``); then the script reads
the sink back and prints ``RESULT`` with the lane (as ``operator``) and every output row as JSON, sorted, duplicates
kept. While it runs it prints ``APP``/``UI`` (where the tests find the executors and the running batch), ``STARTED``
once a query has started and one ``PROGRESS`` line per batch, naming the query (``cf-LANE``).
"""

import argparse
import json
import os
import random
import sys
from datetime import datetime, timedelta, timezone

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
SEED = 20251126
USERS = [f"u{i}" for i in range(6)]
TIERS = ["bronze", "silver", "gold"]
PROVIDERS = {
    "hdfs": "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider",
    "rocksdb": "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
}
OPERATORS = ("suppress", "aggregate", "join", "chain")


def at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def generate(batches: int):
    """Events and table updates per micro-batch: stream time moves 2 s a batch, records arrive up to 1.5 s out of
    order, so every operator holds records across batches; the last two batches move stream time a minute on, which
    lets out most of what is buffered."""
    rnd = random.Random(SEED)
    events, tiers, n = [], [], 0
    for b in range(batches):
        rows, updates = [], []
        for user in USERS:
            for _ in range(rnd.randint(0, 2)):
                n += 1
                rows.append({"user": user, "ts": at(max(0.0, b * 2 + rnd.uniform(-1.5, 2.0))), "n": n})
            if b == 0 or rnd.random() < 0.2:
                updates.append(
                    {
                        "user": user,
                        "changed_at": at(max(0.0, b * 2 + rnd.uniform(-1.0, 1.0))),
                        "tier": rnd.choice(TIERS),
                    }
                )
        events.append(rows)
        tiers.append(updates)
    end = batches * 2 + 60
    for extra in range(2):
        n += 1
        events.append([{"user": "tick", "ts": at(end + extra), "n": n}])
        tiers.append([])
    return events, tiers


def write_files(directory: str, batches) -> None:
    os.makedirs(directory, exist_ok=True)
    for i, rows in enumerate(batches):
        path = os.path.join(directory, f"part-{i:03d}.json")
        with open(path, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)
        # The file source takes files in modification-time order: make it the batch order, the same in every run.
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))


def write_inputs(directory: str, batches: int) -> int:
    """The input as files, one per micro-batch; returns how many micro-batches that makes."""
    events, tiers = generate(batches)
    write_files(os.path.join(directory, "events"), events)
    write_files(os.path.join(directory, "tiers"), tiers)
    return len(events)


EVENTS = "user STRING, ts TIMESTAMP, n LONG"
TABLE = "user STRING, changed_at TIMESTAMP, tier STRING"


def produce(spark, bootstrap: str, batches: int) -> None:
    """The generated input into topics ``events`` and ``tiers``, in order (one writing task; one partition each)."""
    events, tiers = generate(batches)
    for topic, rows in (("events", events), ("tiers", tiers)):
        flat = [(r["user"], json.dumps(r)) for batch in rows for r in batch]
        (
            spark.createDataFrame(flat, "key STRING, value STRING")
            .coalesce(1)
            .write.format("kafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("topic", topic)
            .save()
        )


def read_input(spark, args, what: str, schema: str):
    from pyspark.sql import functions as F

    if args.source == "files":
        return spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(os.path.join(args.input, what))
    # One partition and a fixed number of records per batch: the batches are the same in every run.
    raw = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", args.bootstrap)
        .option("subscribe", what)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", args.records_per_batch)
        .load()
    )
    return raw.select(F.from_json(F.col("value").cast("string"), schema).alias("r")).select("r.*")


def build(spark, args, operator: str):
    from pyspark.sql import functions as F

    import spark_suppress as ss

    def events():
        return read_input(spark, args, "events", EVENTS).withWatermark("ts", "0 seconds")

    def joined():
        table = read_input(spark, args, "tiers", TABLE)
        return ss.join_versioned(
            events(),
            table,
            on="user",
            stream_timestamp="ts",
            table_timestamp="changed_at",
            grace=timedelta(seconds=2),
            history_retention=timedelta(hours=1),
            how="left",
            name="cf-join",
        )

    windows = ss.TimeWindows.of_size_and_grace(timedelta(seconds=6), timedelta(seconds=2))
    if operator == "suppress":
        limited = ss.suppress(
            events(),
            key="user",
            timestamp="ts",
            suppressed=ss.Suppressed.until_time_limit(timedelta(seconds=5), ss.BufferConfig.unbounded()).with_name(
                "cf-suppress"
            ),
        )
        return limited.select("user", "ts", "n")
    if operator == "aggregate":
        counts = ss.aggregate_windowed(
            events(),
            key="user",
            timestamp="ts",
            windows=windows,
            aggregations=[F.count("*").alias("records"), F.sum("n").alias("total")],
            emit=ss.EmitStrategy.on_window_close(),
            name="cf-aggregate",
        )
        return counts.select("user", F.col("window.start").alias("start"), "records", "total")
    if operator == "join":
        return joined().select("user", "ts", "n", "tier")
    if operator == "chain":
        totals = ss.aggregate_windowed(
            joined(),
            key="user",
            timestamp="ts",
            windows=windows,
            aggregations=[F.sum("n").alias("total"), F.max("tier").alias("tier")],
            emit=ss.EmitStrategy.on_window_update(),
            name="cf-chain-totals",
        )
        finals = ss.suppress(
            totals,
            key="user",
            timestamp="ts",
            suppressed=ss.Suppressed.until_window_closes(ss.BufferConfig.unbounded()).with_name("cf-chain-final"),
        )
        return finals.select("user", F.col("window.start").alias("start"), "total", "tier")
    raise ValueError(f"unknown operator {operator}")


def topic_of(args, name: str, lanes: int) -> str:
    """The Kafka sink's topic: ``--topic``, followed by the lane's name when several queries run."""
    return args.topic if lanes == 1 else f"{args.topic}-{name}"


def start(out, args, sink: str, work: str, name: str, topic: str):
    from pyspark.sql import functions as F

    as_json = out.select(F.col("user").alias("key"), F.to_json(F.struct(*out.columns)).alias("value"))
    checkpoint = os.path.join(work, "checkpoint")
    if sink == "kafka":
        writer = (
            as_json.writeStream.format("kafka").option("kafka.bootstrap.servers", args.bootstrap).option("topic", topic)
        )
    elif sink == "delta":
        writer = as_json.writeStream.format("delta").option("path", os.path.join(work, "sink"))
    else:
        writer = as_json.writeStream.format("json").option("path", os.path.join(work, "sink"))
    return writer.option("checkpointLocation", checkpoint).queryName(f"cf-{name}").trigger(availableNow=True).start()


def read_sink(spark, args, sink: str, work: str, topic: str):
    """Every row the sink committed (the file sink's and Delta's logs say which files count), as JSON strings."""
    from pyspark.sql import functions as F

    if sink == "kafka":
        rows = (
            spark.read.format("kafka")
            .option("kafka.bootstrap.servers", args.bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .load()
            .select(F.col("value").cast("string").alias("value"))
        )
    elif sink == "delta":
        rows = spark.read.format("delta").load(os.path.join(work, "sink"))
    else:
        rows = spark.read.schema("key STRING, value STRING").json(os.path.join(work, "sink"))
    return sorted(r.value for r in rows.collect())


def operators(text: str):
    found = text.split(",")
    unknown = [o for o in found if o not in OPERATORS]
    if unknown or len(set(found)) != len(found):
        raise argparse.ArgumentTypeError(
            f"operators {text!r}: each must be one of {', '.join(OPERATORS)}, at most once (e.g. suppress,join)"
        )
    return found


def choices(allowed):
    def parse(text: str):
        found = text.split(",")
        if any(c not in allowed for c in found) or len(set(found)) != len(found):
            raise argparse.ArgumentTypeError(f"{text!r}: each must be one of {', '.join(allowed)}, at most once")
        return found

    return parse


def lanes(args):
    """(name, operator, provider, sink) of each query: the operators one after another, or one operator's queries
    for several providers and sinks at once (named after the operator and what varies)."""
    several = len(args.provider) * len(args.sink) > 1
    if several and len(args.operators) > 1:
        raise SystemExit("several providers or sinks run one operator's queries at once: name one operator")
    return [
        (
            "-".join([op] + ([p] if len(args.provider) > 1 else []) + ([s] if len(args.sink) > 1 else [])),
            op,
            p,
            s,
        )
        for op in args.operators
        for p in args.provider
        for s in args.sink
    ]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("operators", type=operators, help=f"one of {', '.join(OPERATORS)}, or several comma-separated")
    parser.add_argument("work")
    parser.add_argument("--input", help="the input files' directory (write_inputs)")
    parser.add_argument("--provider", type=choices(sorted(PROVIDERS)), default=["hdfs"])
    parser.add_argument("--source", choices=("files", "kafka"), default="files")
    parser.add_argument("--sink", type=choices(("files", "delta", "kafka")), default=["files"])
    parser.add_argument("--bootstrap")
    parser.add_argument("--topic", default="out")
    parser.add_argument("--records-per-batch", type=int, default=8)
    parser.add_argument(
        "--together",
        action="store_true",
        help="run the operators' queries at once (the references: the batches of one are shorter than a start-up)",
    )
    parser.add_argument(
        "--produce",
        type=int,
        metavar="BATCHES",
        help="first write the input generated for BATCHES batches to the source topics",
    )
    args = parser.parse_args()

    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import StreamingQueryListener

    builder = (
        SparkSession.builder.appName(f"cluster-faults-{'-'.join(args.operators)}")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
    )
    if "delta" in args.sink:
        builder = builder.config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension").config(
            "spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog"
        )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    print(f"APP {spark.sparkContext.applicationId}", flush=True)
    print(f"UI {spark.sparkContext.uiWebUrl}", flush=True)

    class Progress(StreamingQueryListener):
        def onQueryStarted(self, event):
            pass

        def onQueryProgress(self, event):
            p = event.progress
            print(
                "PROGRESS "
                + json.dumps(
                    {
                        "query": p.name,
                        "batch": p.batchId,
                        "input": p.numInputRows,
                        "state_rows": [s.numRowsTotal for s in p.stateOperators],
                    }
                ),
                flush=True,
            )

        def onQueryIdle(self, event):
            pass

        def onQueryTerminated(self, event):
            pass

    if args.produce:
        produce(spark, args.bootstrap, args.produce)
    planned = lanes(args)
    # Queries running at once each get a session: the state store provider is a session's setting.
    sessions = {name: spark.newSession() if len(planned) > 1 else spark for name, _, _, _ in planned}
    for name, _, provider, _ in planned:
        sessions[name].conf.set("spark.sql.streaming.stateStore.providerClass", PROVIDERS[provider])
    for session in {id(s): s for s in sessions.values()}.values():
        session.streams.addListener(Progress())
    # One operator after another (each waited for), or all started before any is waited for: one operator's queries,
    # or every operator's with --together.
    together = args.together or len(args.operators) == 1
    groups = [planned] if together else [[lane] for lane in planned]
    for group in groups:
        running = []
        for name, operator, _, sink in group:
            work = os.path.join(args.work, name)
            query = start(
                build(sessions[name], args, operator), args, sink, work, name, topic_of(args, name, len(planned))
            )
            print(f"STARTED {query.name}", flush=True)
            running.append((name, sink, work, query))
        for name, sink, work, query in running:
            query.awaitTermination()
            if query.exception() is not None:
                raise query.exception()
            rows = read_sink(sessions[name], args, sink, work, topic_of(args, name, len(planned)))
            print("RESULT " + json.dumps({"operator": name, "rows": rows}), flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
