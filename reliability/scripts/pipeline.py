"""A small spark-suppress application, run outside the test harness (spark-submit, or from an installed wheel).

It writes its own input files, runs suppress, the windowed aggregation and the stream-table join as file-to-file
streaming queries (one input file per micro-batch, Trigger.AvailableNow), reads the results back and compares them
with the expected rows, which are written out below by hand. Prints one JSON line starting with ``RESULT`` and
exits 0 when everything matches, 1 otherwise.

    spark-submit --master local-cluster[2,1,1024] --jars spark-suppress.jar pipeline.py WORKDIR
    python pipeline.py WORKDIR --master local[2]      # session from spark_suppress.configure (installed wheel)
"""

import argparse
import json
import os
import sys
from datetime import datetime, timedelta, timezone

from pyspark.sql import SparkSession

import spark_suppress as ss

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def write_files(directory: str, batches) -> None:
    """One JSON-lines file per micro-batch, in order."""
    os.makedirs(directory, exist_ok=True)
    for i, rows in enumerate(batches):
        path = os.path.join(directory, f"part-{i:03d}.json")
        with open(path, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        # The file source reads files in modification-time order: make it the batch order.
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))


def run_to_end(df, sink: str, checkpoint: str) -> None:
    query = (
        df.writeStream.format("parquet")
        .option("path", sink)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    if query.exception() is not None:
        raise query.exception()


def suppress_check(spark, work: str):
    updates = [
        [{"user": "a", "ts": at(0), "n": 1}, {"user": "b", "ts": at(1), "n": 1}, {"user": "a", "ts": at(2), "n": 2}],
        [{"user": "c", "ts": at(5), "n": 1}, {"user": "a", "ts": at(6), "n": 3}],
        [{"user": "d", "ts": at(30), "n": 1}],
        [{"user": "e", "ts": at(31), "n": 1}],
    ]
    write_files(f"{work}/updates", updates)
    stream = (
        spark.readStream.schema("user STRING, ts TIMESTAMP, n LONG")
        .option("maxFilesPerTrigger", 1)
        .json(f"{work}/updates")
        .withWatermark("ts", "0 seconds")
    )
    limited = ss.suppress(
        stream,
        key="user",
        timestamp="ts",
        suppressed=ss.Suppressed.until_time_limit(timedelta(seconds=10), ss.BufferConfig.unbounded()).with_name(
            "deployment-suppress"
        ),
    )
    run_to_end(limited, f"{work}/suppressed", f"{work}/checkpoints/suppress")
    got = sorted((r.user, r.n) for r in spark.read.parquet(f"{work}/suppressed").collect())
    # a's first update opened its time limit at 0 s and its latest value was 3; b and c had one update each.
    # Stream time 30 s (d) let them out; d and e are still within their limit.
    return got, [("a", 3), ("b", 1), ("c", 1)]


def aggregate_check(spark, work: str):
    clicks = [
        [{"user": "a", "ts": at(1)}, {"user": "b", "ts": at(2)}],
        [{"user": "a", "ts": at(8)}, {"user": "a", "ts": at(11)}],
        [{"user": "b", "ts": at(4)}],  # late for nothing yet: [0, 10) closes at 10 + 5 s of grace
        [{"user": "c", "ts": at(16)}],  # stream time 16 closes [0, 10)
        [{"user": "a", "ts": at(3)}],  # too late: dropped
        [{"user": "c", "ts": at(40)}],  # closes [10, 20)
    ]
    write_files(f"{work}/clicks", clicks)
    from pyspark.sql import functions as F

    stream = (
        spark.readStream.schema("user STRING, ts TIMESTAMP")
        .option("maxFilesPerTrigger", 1)
        .json(f"{work}/clicks")
        .withWatermark("ts", "0 seconds")
    )
    counts = ss.aggregate_windowed(
        stream,
        key="user",
        timestamp="ts",
        windows=ss.TimeWindows.of_size_and_grace(timedelta(seconds=10), timedelta(seconds=5)),
        aggregations=[F.count("*").alias("clicks")],
        emit=ss.EmitStrategy.on_window_close(),
        name="deployment-aggregate",
    )
    run_to_end(counts, f"{work}/counts", f"{work}/checkpoints/aggregate")
    got = sorted(
        (r.user, int((r.window.start - T0.replace(tzinfo=None)).total_seconds()), r.clicks)
        for r in spark.read.parquet(f"{work}/counts").collect()
    )
    # One final count per user and closed window; the record at 3 s came after [0, 10) closed and is not in it.
    return got, [("a", 0, 2), ("a", 10, 1), ("b", 0, 2), ("c", 10, 1)]


def join_check(spark, work: str):
    tiers = [
        [{"customer": "x", "changed_at": at(0), "tier": "silver"}],
        [{"customer": "x", "changed_at": at(5), "tier": "gold"}],
    ]
    orders = [
        [{"customer": "x", "order_ts": at(1), "amount": 10}],
        [{"customer": "x", "order_ts": at(6), "amount": 20}, {"customer": "x", "order_ts": at(2), "amount": 30}],
    ]
    write_files(f"{work}/tiers", tiers)
    write_files(f"{work}/orders", orders)
    table = (
        spark.readStream.schema("customer STRING, changed_at TIMESTAMP, tier STRING")
        .option("maxFilesPerTrigger", 1)
        .json(f"{work}/tiers")
    )
    stream = (
        spark.readStream.schema("customer STRING, order_ts TIMESTAMP, amount LONG")
        .option("maxFilesPerTrigger", 1)
        .json(f"{work}/orders")
    )
    joined = ss.join_versioned(
        stream,
        table,
        on="customer",
        stream_timestamp="order_ts",
        table_timestamp="changed_at",
        history_retention=timedelta(minutes=5),
        how="left",
        name="deployment-join",
    )
    run_to_end(joined, f"{work}/joined", f"{work}/checkpoints/join")
    got = sorted((r.amount, r.tier) for r in spark.read.parquet(f"{work}/joined").collect())
    # Each order joins the tier valid at its own time: 2 s is still silver although gold arrived before it.
    return got, [(10, "silver"), (20, "gold"), (30, "silver")]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("workdir")
    parser.add_argument("--master", help="create the session here with spark_suppress.configure (no spark-submit)")
    args = parser.parse_args()

    builder = SparkSession.builder.appName("spark-suppress-deployment-check")
    if args.master:
        builder = ss.configure(builder.master(args.master))
    spark = (
        builder.config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")

    suppress_got, suppress_expected = suppress_check(spark, args.workdir)
    aggregate_got, aggregate_expected = aggregate_check(spark, args.workdir)
    join_got, join_expected = join_check(spark, args.workdir)
    executors = [
        e.host() + ":" + str(e.port()) for e in spark.sparkContext._jsc.sc().statusTracker().getExecutorInfos()
    ]
    result = {
        "master": spark.sparkContext.master,
        "executors": executors,
        "spark_suppress_version": ss.__version__,
        "spark_suppress_file": ss.__file__,
        "suppress": {"got": suppress_got, "expected": suppress_expected},
        "aggregate": {"got": aggregate_got, "expected": aggregate_expected},
        "join": {"got": join_got, "expected": join_expected},
    }
    ok = suppress_got == suppress_expected and aggregate_got == aggregate_expected and join_got == join_expected
    result["ok"] = ok
    print("RESULT " + json.dumps(result), flush=True)
    spark.stop()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
