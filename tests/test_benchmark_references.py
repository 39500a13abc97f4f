"""The benchmarks' own reference computations, which their result checks rely on: the sliding windows of the
pandas job, the rate limiter shared by PySpark's three stateful APIs, and how the chain benchmark reads Spark's
logs to time its rows (no Spark session needed)."""

import os
import sys

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

from harness.pandas_jobs import limit_step, sliding_windows_of  # noqa: E402


def kafka_sliding_windows_record_by_record(times, d):
    """Kafka's sliding windows as its docs define them, one record at a time: a window ending at every record, and
    one starting after every record that a later record follows within d."""
    windows = set()
    for t in times:
        windows.add((t - d, t))
        if any(t < u <= t + d for u in times):
            windows.add((t + 1, t + 1 + d))
    return sorted(windows)


def test_sliding_windows_match_the_definition_on_random_keys():
    rng = np.random.default_rng(3)
    for _ in range(200):
        times = rng.integers(1_000, 1_000 + rng.integers(1, 60), rng.integers(1, 12)).astype(np.int64)
        starts, ends = sliding_windows_of(times, 10)
        assert list(zip(starts.tolist(), ends.tolist())) == kafka_sliding_windows_record_by_record(
            sorted(set(times.tolist())), 10
        )


def test_rate_limiter_lets_out_the_oldest_when_full_and_after_the_time_limit():
    buffered = {}
    rows = pd.DataFrame(
        {"key": ["a", "b", "a", "c"], "ms": [0, 10, 20, 30], "value": [1, 2, 3, 4], "seq": [0, 1, 2, 3]}
    )
    (keys, ts, values), oldest = limit_step(buffered, 0, rows, time_limit_ms=100, max_records=2)
    assert (keys, ts, values) == (["a"], [20], [3])  # c overflowed the bound: the oldest buffered key, a, left
    assert oldest == 10 and sorted(buffered) == ["b", "c"]
    assert all(isinstance(x, int) for x in ts + [oldest])  # Spark's state setters refuse numpy integers
    (keys, _, _), oldest = limit_step(buffered, 130, None, time_limit_ms=100, max_records=2)
    assert keys == ["b", "c"] and oldest is None and not buffered


def test_chain_delays_read_each_files_micro_batch_from_spark_logs(tmp_path):
    """The chain benchmark's delays map files to micro-batches through the Parquet sink's log (a compacted entry
    belongs to the first batch that names it) and the file source's log in the checkpoint."""
    from harness.chains import sink_batches, source_batches

    meta = tmp_path / "out" / "_spark_metadata"
    meta.mkdir(parents=True)

    def entry(name):
        return (
            '{"path":"file:///x/%s","size":1,"isDir":false,"modificationTime":0,"blockReplication":1,'
            '"blockSize":1,"action":"add"}' % name
        )

    (meta / "0").write_text("v1\n" + entry("a.parquet") + "\n")
    (meta / "1").write_text("v1\n" + entry("b.parquet") + "\n" + entry("c.parquet") + "\n")
    (meta / "2.compact").write_text(
        "v1\n" + "\n".join(entry(n) for n in ("a.parquet", "b.parquet", "c.parquet", "d.parquet")) + "\n"
    )
    assert sink_batches(str(tmp_path / "out")) == {"a.parquet": 0, "b.parquet": 1, "c.parquet": 1, "d.parquet": 2}
    source = tmp_path / "checkpoint" / "sources" / "0"
    source.mkdir(parents=True)
    (source / "0").write_text('v1\n{"path":"file:///e/part-00000.parquet","timestamp":1,"batchId":0}\n')
    (source / "1.compact").write_text(
        'v1\n{"path":"file:///e/part-00000.parquet","timestamp":1,"batchId":0}\n'
        '{"path":"file:///e/part-00001.parquet","timestamp":2,"batchId":1}\n'
    )
    assert source_batches(str(tmp_path / "checkpoint")) == {"part-00000.parquet": 0, "part-00001.parquet": 1}
