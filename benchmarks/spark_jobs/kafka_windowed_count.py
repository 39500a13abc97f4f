"""The end-to-end benchmark's Spark side, run with spark-submit (a cold JVM, as the Kafka Streams application):
spark-suppress's windowed count, final results only, from the events topic to the results topic, until killed.

    spark-submit --jars spark-suppress.jar,<Kafka connector jars> kafka_windowed_count.py BOOTSTRAP IN OUT
        CHECKPOINT SIZE_MS GRACE_MS WATERMARK_DELAY_MS [TRIGGER [rate_limit TIME_LIMIT_MS MAX_RECORDS]]

For the sustained benchmark (harness/kafka_sustained.py): TRIGGER is ``default`` (a micro-batch as soon as the
previous one ends) or a processing-time interval such as ``100 milliseconds``; ``rate_limit`` runs benchmark 2's
``suppress(until_time_limit(TIME_LIMIT_MS, max_records(MAX_RECORDS).emit_early_when_full()))`` on each key's
updates instead, writing key -> value (the record's sequence number).

Not in harness/: spark-submit puts a script's directory first on the path, where harness/profile.py would shadow
the standard library's module of that name, which PySpark imports.
"""

import json
import sys
import time
from datetime import timedelta

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import spark_suppress as ss


def _offsets(offset):
    """A source offset as reported (JSON text, or already parsed), as a dict: topic -> partition -> offset."""
    return json.loads(offset) if isinstance(offset, str) and offset not in ("", "null", "None") else offset


def main() -> int:
    bootstrap, topic_in, topic_out, checkpoint = sys.argv[1:5]
    size_ms, grace_ms, delay_ms = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
    trigger = sys.argv[8] if len(sys.argv) > 8 else "default"
    job = sys.argv[9:]
    builder = (
        SparkSession.builder.appName("spark-suppress-kafka-bench")
        .master("local[2]")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
    )
    spark = ss.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    # Kafka's record timestamp is the event time, as Kafka Streams' default timestamp extractor reads it.
    events = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic_in)
        .option("startingOffsets", "earliest")
        .load()
        .select(
            F.col("key").cast("string").alias("key"),
            F.col("timestamp").alias("ts"),
            F.col("value").cast("string").alias("value"),
        )
        .withWatermark("ts", f"{delay_ms} milliseconds")
    )
    if job[:1] == ["rate_limit"]:
        from spark_suppress import BufferConfig, Suppressed

        out = ss.suppress(
            events,
            key="key",
            timestamp="ts",
            suppressed=Suppressed.until_time_limit(
                int(job[1]), BufferConfig.max_records(int(job[2])).emit_early_when_full()
            ),
        ).select("key", "value")
    else:
        counts = ss.aggregate_windowed(
            events.select("key", "ts"),
            key="key",
            timestamp="ts",
            windows=ss.TimeWindows.of_size_and_grace(timedelta(milliseconds=size_ms), timedelta(milliseconds=grace_ms)),
            aggregations=[F.count("*").alias("count")],
            emit=ss.EmitStrategy.on_window_close(),
        )
        out = counts.select(
            F.concat_ws("@", "key", F.unix_millis("window.start").cast("string")).alias("key"),
            F.col("count").cast("string").alias("value"),
        )
    writer = (
        out.writeStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topic_out)
        .option("checkpointLocation", checkpoint)
    )
    if trigger != "default":
        writer = writer.trigger(processingTime=trigger)
    query = writer.start()
    # As the Kafka Streams app: the time its start returned, for the harness's start-up share of a run. The run id
    # finds the query's jobs in the event log, the progress reports its micro-batch phases (harness/profile.py).
    print(f"STARTED {int(time.time() * 1000)}", flush=True)
    print(f"RUN_ID {query.runId}", flush=True)
    reported = -1  # the last batch id printed (Spark keeps the latest 100 reports)
    while not query.awaitTermination(0.5):
        # The newest report first: fetching and parsing all 100 twice a second took about 3% of the machine.
        newest = query.lastProgress
        if newest is None or newest["batchId"] <= reported:
            continue
        for p in query.recentProgress:
            if p["batchId"] > reported:
                print(
                    "PROGRESS "
                    + json.dumps(
                        {
                            "batchId": p["batchId"],
                            "timestamp": p["timestamp"],
                            "numInputRows": p["numInputRows"],
                            "durationMs": dict(p["durationMs"]),
                            # Where the batch ended in each partition: the rate limiter's reference needs the
                            # batches (harness/kafka_sustained.py).
                            "endOffset": _offsets(p["sources"][0]["endOffset"]) if p["sources"] else None,
                        }
                    ),
                    flush=True,
                )
                reported = p["batchId"]
    return 0


if __name__ == "__main__":
    sys.exit(main())
