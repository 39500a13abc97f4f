"""Final results (suppress untilWindowCloses) between two Kafka topics, run with spark-submit against a real broker
(see reliability/test_kafka.py).

    spark-submit --jars spark-suppress.jar,<Spark's Kafka connector jars> kafka_pipeline.py BOOTSTRAP WORKDIR PHASE

PHASE ``first``: produce the first burst of events to topic ``events`` and run the query until it has read
everything (Trigger.AvailableNow), then exit. PHASE ``second`` (a new process: a restart from the checkpoint):
produce the second burst and a tick, run the query again, produce a last tick, run it once more, then read topic
``results`` back and compare it with the expected rows. Prints one JSON line starting with ``RESULT``.
"""

import json
import sys
from datetime import datetime, timedelta, timezone

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import spark_suppress as ss

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
USERS = [f"u{i}" for i in range(5)]


def event(user: str, seconds: float, n: int):
    ts = (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return (user, json.dumps({"user": user, "ts": ts, "n": n}))


def produce(spark, bootstrap: str, events) -> None:
    # One writing task, so that the topic holds the events in this order (Kafka keeps each partition's order).
    (
        spark.createDataFrame(events, "key STRING, value STRING")
        .coalesce(1)
        .write.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", "events")
        .save()
    )


def burst(first_n: int, start_seconds: float):
    """Three updates per user, a second apart, users 0.1 s apart: all in one 10-second window."""
    return [event(u, start_seconds + j + i * 0.1, first_n + j) for j in range(3) for i, u in enumerate(USERS)]


def run_query(spark, bootstrap: str, work: str) -> None:
    events = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", "events")
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", 4)
        .load()
        .select(F.from_json(F.col("value").cast("string"), "user STRING, ts TIMESTAMP, n LONG").alias("e"))
        .select("e.*")
        .withWatermark("ts", "0 seconds")
        .withColumn("window", F.window("ts", "10 seconds"))
    )
    final = ss.suppress(
        events,
        key="user",
        timestamp="ts",
        window="window",
        grace=timedelta(seconds=2),
        suppressed=ss.Suppressed.until_window_closes(ss.BufferConfig.unbounded()).with_name("kafka-final"),
    )
    out = final.select(
        F.col("user").alias("key"),
        F.to_json(F.struct("user", F.col("window.start").alias("start"), "n")).alias("value"),
    )
    query = (
        out.writeStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", "results")
        .option("checkpointLocation", f"{work}/checkpoint")
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    if query.exception() is not None:
        raise query.exception()


def main() -> int:
    bootstrap, work, phase = sys.argv[1], sys.argv[2], sys.argv[3]
    spark = (
        SparkSession.builder.appName(f"spark-suppress-kafka-{phase}")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    if phase == "first":
        produce(spark, bootstrap, burst(1, 1.0))
        run_query(spark, bootstrap, work)
        print("RESULT " + json.dumps({"phase": phase, "ok": True}), flush=True)
        return 0

    produce(spark, bootstrap, burst(4, 20.0) + [event("tick", 100, 0)])
    run_query(spark, bootstrap, work)
    produce(spark, bootstrap, [event("tick", 101, 1)])  # its batch sees the watermark the first tick moved
    run_query(spark, bootstrap, work)
    rows = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", "results")
        .option("startingOffsets", "earliest")
        .load()
        .select(F.from_json(F.col("value").cast("string"), "user STRING, start TIMESTAMP, n LONG").alias("r"))
        .select("r.*")
        .collect()
    )
    got = sorted((r.user, r.start.strftime("%H:%M:%S"), r.n) for r in rows)
    # One final result per user and 10-second window, its latest update, once: the first burst's windows
    # [00:00:00, 00:00:10) closed (2 s of grace) once the second burst moved stream time to 00:00:20, the second
    # burst's windows once the ticks moved it to 00:01:40. The ticks' own window is still open.
    expected = sorted([(u, "00:00:00", 3) for u in USERS] + [(u, "00:00:20", 6) for u in USERS])
    result = {"phase": phase, "got": got, "expected": expected, "ok": got == expected}
    print("RESULT " + json.dumps(result), flush=True)
    spark.stop()
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
