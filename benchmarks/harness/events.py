"""Deterministic event sets on disk, one Parquet file per micro-batch.

Events are ``key string, ts timestamp, value long, seq long``: ``records`` rows at ``records_per_second`` of
event time, keys drawn uniformly from ``keys`` names, each timestamp up to ``disorder_ms - 1`` behind its place in
the stream (so no record is ever later than the watermark delay allows: every system sees every record), ``seq``
the arrival order. A last file holds one ``FLUSH_KEY`` record an hour after the rest: it moves every clock far
enough that all windows close and every buffer lets its records out, so the systems' final rows can be compared.
It has ``FLUSH_KEYS`` records under different keys, so that every shard of an operator whose clocks are per
shard (the join) sees one.
Sets are cached under benchmarks/work/data by their parameters.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import asdict
from typing import List, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .config import EventShape

START_MS = 1_700_000_000_000
FLUSH_PREFIX = "~flush"  # sorts after every data key
FLUSH_KEYS = 64
FLUSH_AFTER_MS = 3_600_000
EVENT_SCHEMA = "key string, ts timestamp, value long, seq long"
TABLE_SCHEMA = "key string, changed_at timestamp, tier long"
_FORMAT = 2  # bump when the layout changes, so cached sets are regenerated
_COMPLETE = "_complete"  # Spark's file source ignores names starting with "_"


def key_names(keys: int) -> pa.Array:
    width = max(7, len(str(keys - 1)))
    return pa.array([f"k{i:0{width}d}" for i in range(keys)], pa.string())


def _timestamps(ms: np.ndarray) -> pa.Array:
    return pa.array(ms, pa.int64()).cast(pa.timestamp("ms", tz="UTC"))


def parquet_files(directory: str) -> List[str]:
    """A set's Parquet files in name order: the order the benchmarks' queries read them, one per micro-batch."""
    return sorted(os.path.join(directory, f) for f in os.listdir(directory) if f.endswith(".parquet"))


def file_records(path: str) -> List[Tuple[str, int, int]]:
    """One event file's records (key, ts in ms, value) in arrival (``seq``) order."""
    t = pq.read_table(path, columns=["key", "ts", "value", "seq"]).sort_by("seq")
    return list(zip(t["key"].to_pylist(), millis(t["ts"]).tolist(), t["value"].to_pylist()))


def _in_name_order(path: str) -> None:
    """Gives the Parquet files of ``path`` modification times one second apart in name order. Spark's file source
    takes files in order of modification time, and files written within one millisecond (a small file and the
    empty or tiny last one) in whatever order the directory lists them: the join then read a table file a batch
    after the event file of the same number."""
    files = parquet_files(path)
    times = [os.stat(f).st_mtime_ns for f in files]
    # Whole seconds apart: Java reads modification times in milliseconds, some file systems keep seconds.
    if all(b - a >= 1_000_000_000 for a, b in zip(times, times[1:])):
        return
    first = (int(time.time()) - len(files)) * 1_000_000_000
    for i, f in enumerate(files):
        os.utime(f, ns=(first + i * 1_000_000_000, first + i * 1_000_000_000))


def _cached(root: str, name: str, build) -> str:
    path = os.path.join(root, name)
    if os.path.exists(os.path.join(path, _COMPLETE)):
        _in_name_order(path)  # sets cached before this rule existed
        return path
    shutil.rmtree(path, ignore_errors=True)
    tmp = path + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    build(tmp)
    _in_name_order(tmp)
    open(os.path.join(tmp, _COMPLETE), "w").close()
    os.rename(tmp, path)
    return path


def _name(prefix: str, shape: EventShape, extra: str = "") -> str:
    fields = "-".join(f"{k}{v}" for k, v in asdict(shape).items())
    return f"{prefix}-v{_FORMAT}-{fields}{extra}"


def event_times(shape: EventShape) -> np.ndarray:
    rng = np.random.default_rng(shape.seed)
    index = np.arange(shape.records, dtype=np.int64)
    base = START_MS + (index * 1000) // shape.records_per_second
    return base - rng.integers(0, shape.disorder_ms, shape.records)


def events(root: str, shape: EventShape) -> str:
    """The directory of the event set ``shape`` (generated on first use)."""

    def build(out: str) -> None:
        rng = np.random.default_rng(shape.seed + 1)
        ts = event_times(shape)
        key_ids = rng.integers(0, shape.keys, shape.records)
        values = rng.integers(0, 1_000_000, shape.records)
        names = key_names(shape.keys)
        files = 0
        for start in range(0, shape.records, shape.records_per_file):
            end = min(shape.records, start + shape.records_per_file)
            table = pa.table(
                {
                    "key": names.take(pa.array(key_ids[start:end])),
                    "ts": _timestamps(ts[start:end]),
                    "value": pa.array(values[start:end], pa.int64()),
                    "seq": pa.array(np.arange(start, end, dtype=np.int64)),
                }
            )
            pq.write_table(table, os.path.join(out, f"part-{files:05d}.parquet"))
            files += 1
        flush = pa.table(
            {
                "key": pa.array([f"{FLUSH_PREFIX}{i:02d}" for i in range(FLUSH_KEYS)]),
                "ts": _timestamps(np.full(FLUSH_KEYS, int(ts.max()) + FLUSH_AFTER_MS)),
                "value": pa.array(np.zeros(FLUSH_KEYS, dtype=np.int64)),
                "seq": pa.array(np.arange(shape.records, shape.records + FLUSH_KEYS, dtype=np.int64)),
            }
        )
        pq.write_table(flush, os.path.join(out, f"part-{files:05d}.parquet"))

    return _cached(root, _name("events", shape), build)


def table_changelog(root: str, shape: EventShape, version_interval_ms: int) -> str:
    """A versioned table's changelog over the keys of ``shape``, in as many files as the event set has, each
    covering the same stretch of event time as the event file of the same number (so a micro-batch reads matching
    stretches of both). Every key gets a first version before the first event, then a new version every
    ``version_interval_ms`` on average, with the same disorder as the events."""

    def build(out: str) -> None:
        rng = np.random.default_rng(shape.seed + 2)
        names = key_names(shape.keys)
        span_ms = (shape.records * 1000) // shape.records_per_second
        updates = max(0, int(shape.keys * span_ms / version_interval_ms))
        times = np.concatenate(
            [
                np.full(shape.keys, START_MS - shape.disorder_ms - 1, dtype=np.int64),
                np.sort(rng.integers(START_MS, START_MS + span_ms, updates)),
            ]
        )
        keys = np.concatenate([np.arange(shape.keys), rng.integers(0, shape.keys, updates)])
        tiers = rng.integers(0, 5, len(times))
        # A change reaches the table's stream up to disorder_ms after its timestamp.
        arrival = times + rng.integers(0, shape.disorder_ms, len(times))
        file_of = np.clip((arrival - START_MS) * shape.records_per_second // 1000 // shape.records_per_file, 0, None)
        files = (shape.records + shape.records_per_file - 1) // shape.records_per_file
        file_of = np.minimum(file_of, files - 1)
        for f in range(files + 1):  # the last file matches the events' flush file and stays empty
            pick = np.nonzero(file_of == f)[0]
            pick = pick[np.argsort(arrival[pick], kind="stable")]
            table = pa.table(
                {
                    "key": names.take(pa.array(keys[pick])),
                    "changed_at": _timestamps(times[pick]),
                    "tier": pa.array(tiers[pick], pa.int64()),
                }
            )
            pq.write_table(table, os.path.join(out, f"part-{f:05d}.parquet"))

    return _cached(root, _name("table", shape, f"-every{version_interval_ms}"), build)


def millis(column: pa.ChunkedArray) -> np.ndarray:
    """A timestamp column read back from Parquet (any unit) as epoch milliseconds."""
    ints = column.cast(pa.int64()).to_numpy()
    unit = column.type.unit
    return ints * 1000 if unit == "s" else ints // {"ms": 1, "us": 1_000, "ns": 1_000_000}[unit]


def is_flush(keys):
    """Which entries of a pandas Series of keys belong to the flush records."""
    return keys.str.startswith(FLUSH_PREFIX)


def latest_versions(changelog_dir: str) -> pa.Table:
    """The table as a stream-static join sees it: each key's newest version."""
    t = pq.read_table(changelog_dir).to_pandas()
    latest = t.sort_values(["key", "changed_at"], kind="stable").groupby("key", as_index=False).last()
    return pa.Table.from_pandas(latest[["key", "tier"]], preserve_index=False)
