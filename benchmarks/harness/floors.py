"""The floors: per benchmark, the least work any correct system must do, so that no system can finish under it.

A floor reads the same files in the same micro-batches (one file per batch, availableNow) and, in each batch,
with no state across batches:

- reads only the columns the job needs;
- shuffles only what the job must bring together by key: Spark's map-side partial aggregation combines the batch's
  records per group before the shuffle, so for counts per window and key only the partial counts cross it, never
  the records;
- writes one row per group of the batch, or, where the rows a job writes depend on its state, as many rows as the
  job's exact reference says it writes in the batch.

What it cannot know without state (which window a record's arrival closes, which update a rate limiter lets
through) it does not do. Rate limiting is the one job whose output it cannot size without state: its floor takes
the number of rows the rule emits in each batch from the reference the result check computes before the runs, and
writes that many of the batch's records (``rate_limited_writes``), not the same ones. It writes fewer only where the
rule emits more in a batch than the batch holds (the flush batch, where every buffer empties), and it writes nothing
for the batch without data that Spark runs last: errors low.

The hopping floor writes less than the least: one row per key and pane, not per window (``hopping_pane_counts``).
Otherwise it does more than the least in two bounded ways, both making it err high: it runs as ``foreachBatch``, a
Python callback per micro-batch on the driver (milliseconds each), which the other systems do not pay; and a group
cut by a batch boundary (a window whose records arrive in two micro-batches) is written once per batch, where a stateful
system writes its final row once: up to twice the final rows when a batch spans about one window of event time, as
in benchmark 1.

The old floor (every record of all four columns shuffled by key and written) is gone: a combining operator shuffles
and writes less than that, so it could finish under it and it bounded nothing.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence, Tuple

from . import events as ev
from .measure import System
from .streaming import read_files


def window_counts(window_ms: int):
    """Counts per key and tumbling window of the batch: partial counts shuffled, one row per key and window
    written, as the job's final results have."""
    from pyspark.sql import functions as F

    def per_batch(batch):
        return batch.groupBy(F.window("ts", f"{window_ms} milliseconds"), "key").count()

    return per_batch


def hopping_pane_counts(slide_ms: int):
    """Hopping windows: partial counts per key and pane (one slide), shuffled and written, one row per key and pane
    of the batch. No correct system shuffles less: every window is a sum of panes, and a key's records of a pane
    can only be combined. It writes fewer rows than the job's final rows (each a window, of several panes), since
    summing panes into windows without a second shuffle needs every pane of a key in one place, which is state or
    a shuffle by key; so it errs low, and stays under any correct system (benchmarks/README.md, "Floor", says what
    the floor before it wrote)."""
    from pyspark.sql import functions as F

    def per_batch(batch):
        return batch.groupBy(F.window("ts", f"{slide_ms} milliseconds").start.alias("pane"), "key").count()

    return per_batch


def per_key_span(batch):
    """Per key of the batch its first and last time and count: a key's records in a batch make at least one session,
    so no session job can shuffle or write less."""
    from pyspark.sql import functions as F

    return batch.groupBy("key").agg(F.min("ts").alias("first"), F.max("ts").alias("last"), F.count("*").alias("count"))


def per_key_and_time(batch):
    """Counts per key and distinct timestamp: Kafka's sliding windows start and end at a key's record times, so a
    sliding count needs at least these (and writes about two windows for each)."""
    return batch.groupBy("key", "ts").count()


def rate_limited_writes(batch):
    """Rate limiting: each key's latest update of the batch, combined before the shuffle (whatever the rule lets
    through, a key updated in a batch is buffered or emitted with its latest value, so every system brings at least
    that to the key's state), and, unshuffled, as many more of the batch's records as the rule emits beyond that in
    the batch (the column ``leaves``, set by ``with_quota``): the rows written are as many as the rule's."""
    from pyspark.sql import functions as F

    latest = batch.groupBy("key").agg(F.max_by(F.struct("ts", "value"), "seq").alias("latest"))
    return latest.select("key", "latest.ts", "latest.value").unionByName(
        batch.where("leaves").select("key", "ts", "value")
    )


def with_quota(df, quota: Sequence[Tuple[int, int]]):
    """``df`` with the boolean column ``leaves``: true for the first ``n`` records of the file whose ``seq`` starts
    at ``first``, for each ``(first, n)`` of ``quota`` (``seq`` runs without gaps through each file, and one file is
    one micro-batch)."""
    from pyspark.sql import functions as F

    seq = F.col("seq")
    leaves = F.lit(False)
    for first, n in quota:
        if n > 0:
            leaves = leaves | ((seq >= first) & (seq < first + n))
    return df.withColumn("leaves", leaves)


def system(ctx, name: str, label: str, columns, per_batch: Callable, quota: Optional[Callable] = None) -> System:
    """A floor over the event set: ``columns`` read, ``per_batch`` applied to each micro-batch, its rows written.
    ``quota`` (input directory -> ``with_quota``'s pairs) marks the records a rate-limit floor writes."""

    def build(path: str):
        df = read_files(ctx.spark, path, ev.EVENT_SCHEMA).select(*columns)
        return df if quota is None else with_quota(df, quota(path))

    return System(name, label, "floor", build, per_batch=per_batch)
