"""The end-to-end benchmark's Spark side, run with spark-submit (a cold JVM, as the Kafka Streams application):
spark-suppress's windowed count, final results only, from the events topic to the results topic, until killed.

    spark-submit --jars spark-suppress.jar,<Kafka connector jars> kafka_windowed_count.py BOOTSTRAP IN OUT
        CHECKPOINT SIZE_MS GRACE_MS

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


def main() -> int:
    bootstrap, topic_in, topic_out, checkpoint = sys.argv[1:5]
    size_ms, grace_ms = int(sys.argv[5]), int(sys.argv[6])
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
        .select(F.col("key").cast("string").alias("key"), F.col("timestamp").alias("ts"))
        .withWatermark("ts", f"{grace_ms} milliseconds")
    )
    counts = ss.aggregate_windowed(
        events,
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
    query = (
        out.writeStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topic_out)
        .option("checkpointLocation", checkpoint)
        .start()
    )
    # As the Kafka Streams app: the time its start returned, for the harness's start-up share of a run. The run id
    # finds the query's jobs in the event log, the progress reports its micro-batch phases (harness/profile.py).
    print(f"STARTED {int(time.time() * 1000)}", flush=True)
    print(f"RUN_ID {query.runId}", flush=True)
    reported = -1  # the last batch id printed (Spark keeps the latest 100 reports)
    while not query.awaitTermination(0.5):
        for p in query.recentProgress:
            if p["batchId"] > reported:
                print(
                    "PROGRESS "
                    + json.dumps(
                        {
                            "batchId": p["batchId"],
                            "numInputRows": p["numInputRows"],
                            "durationMs": dict(p["durationMs"]),
                        }
                    ),
                    flush=True,
                )
                reported = p["batchId"]
    return 0


if __name__ == "__main__":
    sys.exit(main())
