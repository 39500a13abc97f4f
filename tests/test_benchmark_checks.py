"""The benchmarks' result checks (benchmarks/harness/checks.py) must fail on wrong outputs: each is fed a right
output, worked out by hand from Kafka's rules, and deliberately wrong ones (a pass-through rate limiter, a join
that takes the latest version, a duplicated result). Pure Python: no Spark session."""

import os
import sys

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

from harness import checks  # noqa: E402
from harness.pandas_jobs import limit_step  # noqa: E402

# (key, Scala 2.13's MurmurHash3.bytesHash(KeyEncoding bytes, arraySeed), Spark's Murmur3 hash of the UTF-8 bytes
# with seed 42), printed by the JVM's own functions (scala-library 2.13.18, spark-unsafe 4.3.0).
JVM_HASHES = [
    ("k0000000", -154673263, -1069513282),
    ("k0000001", -960505619, -964949785),
    ("k0000999", -1320895744, 158662304),
    ("k0009999", 1567653795, -251494921),
    ("~flush00", -2135521056, 1801480749),
    ("abc", 2072592948, 1322437556),
    ("", 1997532335, 142593372),
    ("é", 1031807144, 2119106806),
    ("k00001", 481647620, 758505399),
]


def test_shard_hashes_match_the_jvm():
    for key, scala, spark in JVM_HASHES:
        assert checks.scala_bytes_hash(checks.key_bytes(key)) == scala, key
        assert checks.spark_hash_bytes(key.encode("utf-8")) == spark, key
        assert checks.library_shard(2)(key) == scala % 2
        assert checks.spark_hash_shard(2)(key) == spark % 2


def test_watermarks_follow_the_batches_before():
    assert checks.watermarks([100, None, 50, 3000], 20) == [0, 80, 80, 80]


def test_rate_limit_reference_worked_by_hand():
    # Time limit 10, at most 2 keys, no watermark delay, one shard.
    batches = [[("a", 0, 1), ("b", 1, 2), ("a", 5, 3), ("c", 6, 4)], [("d", 20, 5)]]
    out = checks.rate_limit_reference(batches, 10, 2, 0, lambda k: 0)
    # c makes 3 keys: the oldest by buffer time, a (buffered at 0, updated at 5), leaves early with its latest
    # update. d moves stream time to 20: b (1) and c (6) are due (<= 20 - 10). d waits.
    assert sorted(out) == [(0, "a", 5, 3), (1, "b", 1, 2), (1, "c", 6, 4)]


def test_rate_limit_reference_breaks_ties_by_key_and_uses_the_watermark():
    # Equal buffer times: the smaller key leaves first, although it came last.
    out = checks.rate_limit_reference([[("b", 5, 1), ("c", 5, 2), ("a", 5, 3)]], 100, 2, 0, lambda k: 0)
    assert out == [(0, "a", 5, 3)]
    # Shard 1 gets no record in batch 1, but the watermark there (30 - 5) makes its x (buffered at 12) due.
    shard = lambda k: 1 if k == "x" else 0  # noqa: E731
    out = checks.rate_limit_reference([[("x", 12, 1), ("y", 30, 2)], [("y", 31, 3)]], 10, 100, 5, shard)
    assert out == [(1, "x", 12, 1)]


def _pass_through(batches):
    return [(b, k, ts, v) for b, rows in enumerate(batches) for k, ts, v in rows]


def test_rate_limit_check_fails_a_pass_through_limiter_and_early_or_late_rows():
    batches = [[("a", 0, 1), ("b", 1, 2), ("a", 5, 3), ("c", 6, 4)], [("d", 20, 5)]]
    reference = checks.rate_limit_reference(batches, 10, 2, 0, lambda k: 0)
    assert checks.check_rate_limit(reference, list(reference))["ok"]
    assert checks.check_rate_limit(reference, [(None,) + r[1:] for r in reference])["ok"]  # batch unknown

    passed = checks.check_rate_limit(reference, _pass_through(batches))
    assert not passed["ok"] and passed["unexpected"] > 0
    # Only each key's last update, and no early eviction: what the old check accepted.
    last_only = [(1, "a", 5, 3), (1, "b", 1, 2), (1, "c", 6, 4)]
    c = checks.check_rate_limit(reference, last_only)
    assert not c["ok"] and c["missing"] == 0 and c["wrong_batch"] == 1
    dropped = checks.check_rate_limit(reference, reference[1:])
    assert not dropped["ok"] and dropped["missing"] == 1
    twice = checks.check_rate_limit(reference, reference + reference[:1])
    assert not twice["ok"] and twice["unexpected"] == 1


def test_the_pandas_jobs_rule_agrees_with_the_reference_on_random_updates():
    """The PySpark jobs' limiter (limit_step, one call per shard and batch as Spark makes it) against the reference
    written from Kafka's rules: two implementations, so a slip in either shows."""
    rng = np.random.default_rng(11)
    for trial in range(30):
        keys = [f"k{i}" for i in range(rng.integers(2, 30))]
        batches, seq, base = [], 0, 1_000
        for _ in range(rng.integers(1, 6)):
            rows = []
            for _ in range(rng.integers(0, 40)):
                base += int(rng.integers(0, 4))
                rows.append((keys[rng.integers(len(keys))], base - int(rng.integers(0, 5)), int(rng.integers(100))))
            batches.append(rows)
        limit, cap, delay = int(rng.integers(1, 30)), int(rng.integers(1, 8)), int(rng.integers(0, 6))
        shard = checks.spark_hash_shard(2)
        reference = checks.rate_limit_reference(batches, limit, cap, delay, shard)

        got, buffers, seq = [], {0: {}, 1: {}}, 0
        marks = checks.watermarks([max((r[1] for r in b), default=None) for b in batches] + [None], delay)
        for b, rows in enumerate(batches + [[]]):
            for s in (0, 1):
                mine = [r for r in rows if shard(r[0]) == s]
                pdf = pd.DataFrame(
                    {
                        "key": [r[0] for r in mine],
                        "ms": [r[1] for r in mine],
                        "value": [r[2] for r in mine],
                        "seq": list(range(seq, seq + len(mine))),
                    }
                )
                seq += len(mine)
                (ks, ts, vs), _ = limit_step(buffers[s], marks[b], pdf if mine else None, limit, cap)
                got += [(b, k, t, v) for k, t, v in zip(ks, ts, vs)]
        assert checks.check_rate_limit(reference, got)["ok"], trial


# One shard, history retention far longer than the example. Table: k's first version at 0 (tier 1) arrives in
# batch 0; a version at 10 (tier 2) arrives late, in batch 1; one at 100 (tier 3) in batch 2.
TABLE = [[("k", 0, 1)], [("k", 10, 2)], [("k", 100, 3)]]
STREAM = [[("k", 12)], [("k", 30)], [("z", 1_000)]]  # z: a flush record of another key


def test_version_at_timestamp_and_latest_version():
    table = [r for t in TABLE for r in t]
    assert checks.version_at_timestamp([("k", 12), ("k", 9), ("k", 100), ("z", 5)], table) == [2, 1, 3, None]
    assert checks.latest_version([("k", 12), ("z", 5)], table) == [3, None]


def test_grace_join_reference_worked_by_hand():
    batches = list(zip(STREAM, TABLE))
    # Grace 0: the record at 12 is joined in batch 0, before the version at 10 has arrived: tier 1.
    assert checks.grace_join_reference(batches, 0, 10_000, lambda k: 0) == [[1], [2], [None]]
    # Grace 5: it waits until stream time reaches 17 (batch 1, after that batch's table update): tier 2. The
    # record at 30 leaves in batch 2 (stream time 1,000), after the version at 100 arrived, as of 30: tier 2.
    # The last record waits for a time that never comes.
    assert checks.grace_join_reference(batches, 5, 10_000, lambda k: 0) == [[2], [2], [checks.NOT_JOINED]]


def test_grace_join_reference_applies_the_history_retention():
    # Retention 10: j's write at 50 is older than observed (100) - 10 and rejected; a lookup at 80 (< 90) sees only
    # k's latest version, which is newer than 80: nothing. A lookup at 95 is within retention.
    batches = [([("j", 95), ("k", 80), ("k", 95)], [("k", 60, 4), ("k", 100, 1), ("j", 50, 7)])]
    assert checks.grace_join_reference(batches, 0, 10, lambda k: 0) == [[None, None, 4]]


def test_join_check_fails_the_latest_version_a_missing_and_a_repeated_row():
    table = [r for t in TABLE for r in t]
    stream = [("k", 12, 7), ("k", 30, 8)]
    at_ts = checks.version_at_timestamp([(k, ts) for k, ts, _ in stream], table)
    expected = [r + (v,) for r, v in zip(stream, at_ts)]
    assert checks.check_join(expected, list(expected))["ok"]
    latest = [r + (v,) for r, v in zip(stream, checks.latest_version([(k, ts) for k, ts, _ in stream], table))]
    c = checks.check_join(expected, latest)
    assert not c["ok"] and c["wrong_rows"] == 2
    assert not checks.check_join(expected, expected[:1])["ok"]
    repeated = checks.check_join(expected, expected + expected[:1])
    assert not repeated["ok"] and repeated["wrong_rows"] == 1


def test_kafka_check_fails_a_duplicated_or_wrong_result_and_checks_every_run():
    expected = {"a@0": 3, "b@0": 1}
    right = checks.check_kafka_run(dict(expected), expected, 0)
    assert right["same_final_rows"]
    # The driver keeps the last result per key: a window's result coming twice looks right in the file.
    assert not checks.check_kafka_run(dict(expected), expected, 1)["same_final_rows"]
    assert not checks.check_kafka_run({"a@0": 2, "b@0": 1}, expected, 0)["same_final_rows"]
    assert not checks.check_kafka_run({"a@0": 3}, expected, 0)["same_final_rows"]
    wrong = checks.check_kafka_run({"a@0": 2, "b@0": 1}, expected, 0)
    assert not checks.every_run_holds({"kafka-streams": [right], "spark-suppress": [wrong, right]})
    assert checks.every_run_holds({"kafka-streams": [right], "spark-suppress": [right, right]})


def test_buffer_agreement_fails_other_records_another_order_or_nothing():
    ours = ["6b31 aa 5", "6b32 bb 5", "6b33 cc 7"]
    assert checks.compare_evictions(ours, list(ours)) == {
        "evictions_compared": 3,
        "first_difference": None,
        "same": True,
    }
    swapped = checks.compare_evictions(ours, [ours[1], ours[0], ours[2]])
    assert not swapped["same"] and swapped["first_difference"] == 0
    other_value = checks.compare_evictions(ours, ours[:2] + ["6b33 dd 7"])
    assert not other_value["same"] and other_value["first_difference"] == 2
    assert not checks.compare_evictions(ours, ours[:2])["same"]  # one record never evicted
    assert not checks.compare_evictions([], [])["same"]  # nothing compared proves nothing


def test_event_files_are_read_in_name_order(tmp_path):
    """Spark's file source orders files by modification time; files written within one millisecond would come in
    listing order, and a table file could be read a micro-batch after the event file of the same number."""
    from harness.events import _in_name_order

    # Nanoseconds apart in name order, but the same millisecond to Java.
    for i, name in enumerate(("part-00000.parquet", "part-00001.parquet", "part-00002.parquet")):
        (tmp_path / name).write_bytes(b"")
        os.utime(tmp_path / name, ns=(1_000_000_000 + i, 1_000_000_000 + i))
    _in_name_order(str(tmp_path))
    millis = [os.stat(tmp_path / f"part-0000{i}.parquet").st_mtime_ns // 1_000_000 for i in range(3)]
    assert millis[0] < millis[1] < millis[2]


def test_join_check_reports_rows_whose_nulls_and_values_differ():
    # A left join's null beside a value for the same record: the examples must still come out.
    c = checks.check_join([("k", 1, 7, None)], [("k", 1, 7, 3), ("k", 1, 7, None), ("k", 1, 7, None)])
    assert not c["ok"] and c["wrong_rows"] == 2 and c["first_wrong"] == [("k", 1, 7, 3), ("k", 1, 7, None)]


def test_kafka_benchmark_passes_the_drivers_duplicate_count_to_the_check(tmp_path):
    """The driver's results file keeps one line per key (the last result), so a repeat shows only in its count."""
    from harness.kafka_streams import _check

    rows = tmp_path / "results.csv"
    rows.write_text("a@0,3\nb@0,1\n")
    assert _check(str(rows), {"a@0": 3, "b@0": 1}, 0)["same_final_rows"]
    repeated = _check(str(rows), {"a@0": 3, "b@0": 1}, 2)
    assert not repeated["same_final_rows"] and repeated["duplicate_results"] == 2


def _events(rows, unit="ms"):
    """A benchmark input or output file's table of (key, ts in ms, value, seq) rows, ts in ``unit``."""
    import pyarrow as pa

    keys, ms, values, seqs = zip(*rows)
    return pa.table(
        {
            "key": list(keys),
            "ts": pa.array([m * {"ms": 1, "us": 1_000}[unit] for m in ms], pa.timestamp(unit, tz="UTC")),
            "value": pa.array(values, pa.int64()),
            "seq": pa.array(seqs, pa.int64()),
        }
    )


def test_rate_limit_benchmark_reads_inputs_in_arrival_order_and_outputs_with_their_batch(tmp_path):
    """The plumbing between Parquet and the check: input files in name order and rows in seq order; output rows
    with the micro-batch the sink's log gives their file; timestamps in any unit as milliseconds."""
    import pyarrow.parquet as pq
    from harness.rate_limit import input_batches, output_rows

    inputs = tmp_path / "in"
    inputs.mkdir()
    pq.write_table(_events([("b", 5, 2, 1), ("a", 3, 1, 0)], "ms"), inputs / "part-00000.parquet")
    pq.write_table(_events([("c", 9, 3, 2)], "ms"), inputs / "part-00001.parquet")
    assert input_batches(str(inputs)) == [[("a", 3, 1), ("b", 5, 2)], [("c", 9, 3)]]

    out = tmp_path / "out"
    (out / "_spark_metadata").mkdir(parents=True)
    pq.write_table(_events([("a", 3, 1, 0)], "us").drop(["seq"]), out / "part-x.parquet")
    pq.write_table(_events([("c", 9, 3, 0)], "us").drop(["seq"]), out / "part-y.parquet")
    pq.write_table(_events([("z", 1, 1, 0)], "us").drop(["seq"]), out / "part-orphan.parquet")  # not committed
    (out / "_spark_metadata" / "0").write_text('v1\n{"path":"file:///o/part-x.parquet"}\n')
    (out / "_spark_metadata" / "2").write_text('v1\n{"path":"file:///o/part-y.parquet"}\n')
    assert sorted(output_rows(str(out))) == [(0, "a", 3, 1), (2, "c", 9, 3)]


def test_rate_limit_floor_writes_as_many_rows_as_the_rule_emits_in_each_batch(tmp_path, spark):
    """The rate-limit floor's quota per micro-batch (time limit 10 ms, no bound reached, watermark delay 2 s): the
    rows the rule emits in it less the batch's keys, at most the batch's records; and the floor writes each key's
    latest update plus that many of the batch's records."""
    import pyarrow.parquet as pq
    from harness.floors import rate_limited_writes, with_quota
    from harness.rate_limit import floor_quota

    def files(name, *batches):
        d = tmp_path / name
        d.mkdir()
        for i, rows in enumerate(batches):
            pq.write_table(_events(rows), d / f"part-{i:05d}.parquet")
        return str(d)

    # One key: its updates at 20 and 60 leave (each 10 ms or more after the buffer time of the entry it updates).
    one_key = [("a", 0, 1, 0), ("a", 20, 2, 1), ("a", 40, 3, 2), ("a", 60, 4, 3)]
    assert floor_quota(files("one", one_key, [("a", 100, 5, 4), ("a", 101, 6, 5)]), 10, 1000) == ((0, 1), (4, 0))

    # Four keys of one shard wait in batch 0 (another shard's key moves the watermark to 3000), and leave at the
    # start of batch 1: four rows emitted in a batch of one record, so the floor writes two.
    shard = checks.library_shard(2)
    names = [f"k{i}" for i in range(40)]
    same = [k for k in names if shard(k) == 0][:4]
    other = next(k for k in names if shard(k) == 1)
    waiting = [(k, i, i, i) for i, k in enumerate(same)] + [(other, 5000, 9, 4)]
    assert floor_quota(files("cap", waiting, [(same[0], 5001, 10, 5)]), 10, 1000) == ((0, 0), (5, 1))

    batch = with_quota(spark.createDataFrame(_events(one_key).to_pandas()), [(0, 1)])
    written = sorted((r.key, r.ts.timestamp() * 1000, r.value) for r in rate_limited_writes(batch).collect())
    assert written == [("a", 0, 1), ("a", 60, 4)]  # the latest update, and the batch's first record


def test_hopping_floor_writes_each_keys_count_per_pane_never_more_rows_than_the_windows(spark):
    """The hopping floor (1-second panes of 10-second windows): a key's records of one pane leave as one row with
    their count, so it writes no more rows than the job has windows, each of which holds at least one pane. The
    floor it replaced wrote each pane once for every window holding it: 30 rows here, for 21 windows."""
    from harness.floors import hopping_pane_counts

    rows = [("a", 0, 1, 0), ("a", 500, 1, 1), ("a", 1_500, 1, 2), ("b", 9_999, 1, 3)]
    batch = spark.createDataFrame(_events(rows).to_pandas())
    written = sorted(
        (r["key"], round(r["pane"].timestamp() * 1000), r["count"]) for r in hopping_pane_counts(1_000)(batch).collect()
    )
    assert written == [("a", 0, 2), ("a", 1_000, 1), ("b", 9_000, 1)]
    windows = {(k, p - 1_000 * i) for k, t, _, _ in rows for p in [t - t % 1_000] for i in range(10)}
    assert len(written) < len(windows) == 21


def test_join_benchmark_references_from_files(tmp_path):
    """join._references over the event and table files of the same number, flush records left out (they move
    every shard's stream time, as in the benchmark)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from harness import join

    flush = [f"~flush{i:02d}" for i in range(8)]
    assert {checks.library_shard(2)(k) for k in flush} == {0, 1}
    ms = lambda xs: pa.array(xs, pa.timestamp("ms", tz="UTC"))  # noqa: E731
    stream = [[("k", 12, 7)], [("k", 30, 8)], [(f, 1_000, 0) for f in flush]]
    table = [[("k", 0, 1)], [("k", 10, 2)], []]
    (tmp_path / "e").mkdir()
    (tmp_path / "t").mkdir()
    seq = 0
    for i, (s, t) in enumerate(zip(stream, table)):
        pq.write_table(
            pa.table(
                {
                    "key": pa.array([r[0] for r in s], pa.string()),
                    "ts": ms([r[1] for r in s]),
                    "value": pa.array([r[2] for r in s], pa.int64()),
                    "seq": pa.array(range(seq, seq + len(s)), pa.int64()),
                }
            ),
            tmp_path / "e" / f"part-{i:05d}.parquet",
        )
        seq += len(s)
        pq.write_table(
            pa.table(
                {
                    "key": pa.array([r[0] for r in t], pa.string()),
                    "changed_at": ms([r[1] for r in t]),
                    "tier": pa.array([r[2] for r in t], pa.int64()),
                }
            ),
            tmp_path / "t" / f"part-{i:05d}.parquet",
        )
    refs = join._references(str(tmp_path / "e"), str(tmp_path / "t"), [0, 5], 300_000)
    assert refs["at_timestamp"] == [("k", 12, 7, 2), ("k", 30, 8, 2)]
    assert refs["grace-0ms"] == [("k", 12, 7, 1), ("k", 30, 8, 2)]  # joined before the late version arrived
    assert refs["grace-5ms"] == [("k", 12, 7, 2), ("k", 30, 8, 2)]


def _streamed():
    """Records (key, ts, sent) on two partitions (key % 2), windows of 10, grace 2: key 0's window [0, 10) closes
    on partition 0 at the record with ts 12 (sent at 7); key 1's on partition 1 at ts 15 (sent at 8); key 2's
    window [10, 20) never closes (partition 0's stream time ends at 13)."""
    records = [(0, 1, 1), (1, 3, 2), (0, 9, 3), (2, 11, 4), (1, 8, 5), (0, 13, 7), (1, 15, 8)]
    keys, ts, sent = zip(*records)
    return checks.windowed_counts_reference(keys, ts, sent, 2, 10, 2)


def test_streamed_reference_counts_and_closes_windows_per_partition():
    ref = _streamed()
    assert ref[(0, 0)] == (2, 7) and ref[(1, 0)] == (2, 8)
    assert ref[(2, 10)] == (1, None) and ref[(0, 10)] == (1, None) and ref[(1, 10)] == (1, None)


def test_streamed_reference_agrees_with_counting_record_by_record():
    """On random records over several windows, keys and both partitions: the counts and closing sends of a plain
    loop that walks each partition's records in order."""
    import random

    rnd = random.Random(5)
    records = [(rnd.randrange(7), rnd.randrange(20, 400), i) for i in range(2_000)]
    keys, ts, sent = zip(*records)
    expected = {}
    for p in range(2):
        part = [r for r in records if r[0] % 2 == p]
        for key, t, _ in part:
            start = t - t % 10
            expected[(key, start)] = (expected.get((key, start), (0, None))[0] + 1, None)
        for (key, start), (n, _) in list(expected.items()):
            if key % 2 == p:
                # Stream time is the partition's largest timestamp so far: the first record at or past end + grace
                # is the one that moves it there.
                expected[(key, start)] = (n, next((s for _, t, s in part if t >= start + 12), None))
    assert checks.windowed_counts_reference(keys, ts, sent, 2, 10, 2) == expected


def test_streamed_final_results_check_fails_a_wrong_duplicated_missing_or_invented_result():
    ref = _streamed()
    right = [(0, 0, 2), (1, 0, 2)]
    assert checks.check_streamed_final_results(ref, right, complete_by_ms=8)["ok"]
    # A closed window's result may not be left out, once completeness is required...
    missing = checks.check_streamed_final_results(ref, right[:1], complete_by_ms=8)
    assert not missing["ok"] and missing["missing"] == 1 and missing["first_missing"] == [(1, 0)]
    # ...but only for windows closed by then, and not at all at a rate the system did not keep up with.
    assert checks.check_streamed_final_results(ref, right[:1], complete_by_ms=7)["ok"]
    assert checks.check_streamed_final_results(ref, right[:1], complete_by_ms=None)["ok"]
    wrong = checks.check_streamed_final_results(ref, [(0, 0, 3), (1, 0, 2)], complete_by_ms=8)
    assert not wrong["ok"] and wrong["wrong_count"] == 1 and wrong["first_wrong"] == [(0, 0, 3, 2)]
    twice = checks.check_streamed_final_results(ref, right + [(1, 0, 2)], complete_by_ms=8)
    assert not twice["ok"] and twice["duplicate_results"] == 1
    invented = checks.check_streamed_final_results(ref, right + [(3, 0, 1)], complete_by_ms=8)
    assert not invented["ok"] and invented["unexpected"] == 1
    # A window not yet closed on its partition, with the right count, is counted but not wrong.
    early = checks.check_streamed_final_results(ref, right + [(2, 10, 1)], complete_by_ms=8)
    assert early["ok"] and early["before_close"] == 1


def _kafka_partition():
    """One partition's updates (key, ts, value = offset), worked through Kafka's rules by hand below with a time
    limit of 10 and at most 2 keys."""
    return [("a", 1, 0), ("b", 2, 1), ("a", 3, 2), ("c", 4, 3), ("d", 12, 4), ("c", 5, 5), ("e", 14, 6)]


def test_kafka_streams_rate_limit_reference_worked_by_hand():
    # 0-2: a (buffered at 1) and b (2); a's update at 3 replaces its value, not its buffer time. 3: c makes 3 keys:
    # the oldest, a, leaves early with its latest update (offset 2). 4: d moves stream time to 12: b (2 <= 12 - 10)
    # is due; c (4) is not. 5: c's update, stream time stays 12. 6: e moves it to 14: c (4) is due, with offset 5's
    # value. d and e stay: nothing later on the partition moves its stream time.
    ref = checks.kafka_streams_rate_limit_reference([_kafka_partition()], 10, 2)
    assert ref == [(0, 3, "a", 3, 2), (0, 4, "b", 2, 1), (0, 6, "c", 5, 5)]
    # Partitions are tasks of their own: the same updates on another partition leave the same, by its own records;
    # a partition whose records never make anything due lets nothing out.
    two = checks.kafka_streams_rate_limit_reference([[("x", 100, 0), ("y", 101, 1)], _kafka_partition()], 10, 2)
    assert two == [(1, 3, "a", 3, 2), (1, 4, "b", 2, 1), (1, 6, "c", 5, 5)]
    # Several entries due at once leave oldest first; equal buffer times go by key bytes, the newcomer included.
    assert checks.kafka_streams_rate_limit_reference([[("x", 1, 0), ("y", 2, 1), ("z", 20, 2)]], 10, 5) == [
        (0, 2, "x", 1, 0),
        (0, 2, "y", 2, 1),
    ]
    assert checks.kafka_streams_rate_limit_reference([[("b", 5, 0), ("a", 5, 1)]], 100, 1) == [(0, 1, "a", 5, 1)]


def test_spark_rate_limit_reference_follows_the_batches_their_order_and_the_watermark():
    # Time limit 10, no bound to speak of, no watermark delay, one shard. Batch 0 reads partition 0's offsets 0-1
    # and partition 1's 0; batch 1 partition 0's offset 2.
    parts = [[("a", 1, 100), ("a", 3, 101), ("c", 5, 102)], [("b", 20, 200)]]
    ends = [[2, 1], [3, 1]]
    assert checks.spark_kafka_batches(parts, ends, (0, 1)) == [
        [("a", 1, 100), ("a", 3, 101), ("b", 20, 200)],
        [parts[0][2]],
    ]
    assert checks.spark_kafka_batches(parts, ends, (1, 0))[0] == [("b", 20, 200), ("a", 1, 100), ("a", 3, 101)]
    # Partition 0 first: a's update at 3 replaces its value; b at 20 then lets a out with it. Batch 1 runs at the
    # watermark 20, so c, though its partition never went past 5, is due as soon as it is buffered (Kafka would
    # keep it: its partition's stream time is 5).
    first = checks.spark_rate_limit_reference(parts, ends, (0, 1), 10, 100, 0, lambda k: 0)
    assert first == [(0, "a", 3, 101), (1, "c", 5, 102)]
    # Partition 1 first: b at 20 comes before a, so each of a's updates is due as soon as it is buffered.
    second = checks.spark_rate_limit_reference(parts, ends, (1, 0), 10, 100, 0, lambda k: 0)
    assert second == [(0, "a", 1, 100), (0, "a", 3, 101), (1, "c", 5, 102)]
    # Numbered by position alone, partition 1's b comes between a's updates: each of them leaves at once.
    assert checks.spark_kafka_batches(parts, ends, (0, 1), by_position=True)[0] == [
        ("a", 1, 100),
        ("b", 20, 200),
        ("a", 3, 101),
    ]
    assert checks.spark_rate_limit_reference(parts, ends, (0, 1), 10, 100, 0, lambda k: 0, by_position=True) == second
    # x, alone in its shard, is due only in the batch without data Spark would run next, at watermark 30: that
    # batch is not one the query ran, so its rows are not expected.
    one = [[("x", 1, 0), ("y", 30, 1)]]
    shard = lambda k: 0 if k == "x" else 1  # noqa: E731
    assert checks.rate_limit_reference(one, 10, 100, 0, shard) == [(1, "x", 1, 0)]
    assert checks.spark_rate_limit_reference(one, [[2]], (0,), 10, 100, 0, shard) == []


def test_rate_limited_stream_check_fails_a_pass_through_a_repeat_and_a_dropped_eviction():
    ref = checks.kafka_streams_rate_limit_reference([_kafka_partition()], 10, 2)
    sent = [10, 20, 30, 40, 50, 60, 70]  # when each offset was sent
    expected = [(key, value, sent[cause]) for _, cause, key, _, value in ref]
    right = [("a", 2), ("b", 1), ("c", 5)]
    assert checks.check_rate_limited_stream(expected, right, complete_by_ms=70)["ok"]
    # Keys interleave as their output partitions do; only each key's own order counts.
    assert checks.check_rate_limited_stream(expected, [("b", 1), ("c", 5), ("a", 2)], complete_by_ms=70)["ok"]
    # (a) A pass-through: every update leaves, so six rows the rule holds back or replaces.
    passed = checks.check_rate_limited_stream(expected, [(k, v) for k, _, v in _kafka_partition()], complete_by_ms=70)
    assert not passed["ok"] and passed["unexpected"] == 4 and passed["results"] == 7
    # (b) A row that comes twice.
    twice = checks.check_rate_limited_stream(expected, right + [("b", 1)], complete_by_ms=70)
    assert not twice["ok"] and twice["duplicate_results"] == 1
    # (c) The emit-early eviction of a (let out by c, sent at 40) dropped: missing once its input was sent by the
    # end of the measurement, and not required at a load the system did not keep up with...
    dropped = checks.check_rate_limited_stream(expected, right[1:], complete_by_ms=70)
    assert not dropped["ok"] and dropped["missing"] == 1 and dropped["first_missing"] == [("a", 2)]
    assert checks.check_rate_limited_stream(expected, right[1:], complete_by_ms=35)["ok"]
    assert checks.check_rate_limited_stream(expected, right[1:], complete_by_ms=None)["ok"]
    # ...but always wrong when a later row of the key came: a key's rows arrive in order, so it was skipped.
    later = [("a", 2, 40), ("b", 1, 50), ("a", 9, 80)]
    skipped = checks.check_rate_limited_stream(later, [("b", 1), ("a", 9)], complete_by_ms=None)
    assert not skipped["ok"] and skipped["skipped"] == 1 and skipped["first_skipped"] == [("a", 2)]
    # An update of the key that the rule let out with another value, and rows in another order.
    wrong = checks.check_rate_limited_stream(expected, [("a", 0), ("b", 1), ("c", 5)], complete_by_ms=70)
    assert not wrong["ok"] and wrong["unexpected"] == 1 and wrong["missing"] == 1
    swapped = checks.check_rate_limited_stream(later, [("b", 1), ("a", 9), ("a", 2)], complete_by_ms=None)
    assert not swapped["ok"] and swapped["out_of_order"] == 1


def test_sustained_rate_limit_check_per_system(tmp_path):
    """The harness's check from the driver's files: the input partitions (key % 2, in the order sent), Spark's
    micro-batches from its log and checkpoint, and the order of partitions the output agrees with."""
    from harness.config import Sustained
    from harness.kafka_sustained import PRODUCED, RESULTS, input_partitions, rate_limit_check, spark_batch_ends

    # Keys 1 and 3 on partition 1, key 2 on partition 0; times relative to the driver's start at 1000.
    produced = np.array([(1, 0, 0), (2, 100, 1), (3, 9000, 2), (2, 9500, 3), (1, 9600, 4)], dtype=PRODUCED)
    rows, seqs = input_partitions(produced, 1000, 2)
    assert seqs == [[1, 3], [0, 2, 4]]
    assert rows[1] == [("k0000001", 1000, 0), ("k0000003", 10000, 2), ("k0000001", 10600, 4)]
    sus = Sustained(time_limit_ms=5000, max_records=10)
    # Kafka Streams: on partition 1, key 3 at 10000 lets key 1 (buffered at 1000) out with its only update (seq 0);
    # on partition 0, key 2's update at 10500 replaces its value (seq 3) and lets it out (buffered at 1100).
    kafka = np.array([(1, 0, -1, 50), (2, 3, -1, 60)], dtype=RESULTS)
    assert rate_limit_check("kafka-streams", produced, 1000, kafka, sus, 10)["ok"]
    passed = np.array([(k, s, -1, 50) for s, k in enumerate(produced["key"].tolist())], dtype=RESULTS)
    assert not rate_limit_check("kafka-streams", produced, 1000, passed, sus, 10)["ok"]
    # Spark: batch 0 reads each partition's offset 0, batch 1 the rest (its end only in the checkpoint); the
    # watermark stays 0 (1100 - 2000). Shards: key 1 alone in 1, keys 2 and 3 in 0.
    log = tmp_path / "spark-suppress.log"
    log.write_text(
        'PROGRESS {"batchId": 0, "timestamp": "1970-01-01T00:00:01.000Z", "numInputRows": 2, '
        '"durationMs": {}, "endOffset": {"in-1": {"0": 1, "1": 1}}}\n'
    )
    (tmp_path / "checkpoint" / "offsets").mkdir(parents=True)
    (tmp_path / "checkpoint" / "offsets" / "1").write_text('v1\n{"batchWatermarkMs":0}\n{"in-1":{"1":3,"0":2}}\n')
    ends = spark_batch_ends(str(log), str(tmp_path / "checkpoint"), "in-1", 2)
    assert ends == [[1, 1], [2, 3]]
    assert [checks.library_shard(2)(f"k000000{k}") for k in (1, 2, 3)] == [1, 0, 0]
    # Partition 0 first in batch 1: key 2's update at 10500 lets it out with seq 3; then key 1's at 10600, seq 4.
    # Partition 1 first: key 3 at 10000 lets key 2 out with seq 1 before its update comes (buffered afresh).
    for got, order in [([(2, 3), (1, 4)], [0, 1]), ([(2, 1), (1, 4)], [1, 0])]:
        rows_ = np.array([(k, v, -1, 0) for k, v in got], dtype=RESULTS)
        check = rate_limit_check("spark-suppress", produced, 1000, rows_, sus, 10, ends)
        assert check["ok"] and check["partition_order"] == order and check["micro_batches_checked"] == 2
    # Kafka's answer is not Spark's, nor is a pass-through.
    assert not rate_limit_check("spark-suppress", produced, 1000, kafka, sus, 10, ends)["ok"]
    passed_spark = rate_limit_check("spark-suppress", produced, 1000, passed, sus, 10, ends)
    assert not passed_spark["ok"] and passed_spark["agrees_by_position_ties_in"] is None
    (tmp_path / "checkpoint" / "offsets" / "1").unlink()
    (tmp_path / "checkpoint" / "offsets" / "2").write_text('v1\n{}\n{"in-1":{"1":3,"0":2}}\n')
    with pytest.raises(ValueError, match="neither"):
        spark_batch_ends(str(log), str(tmp_path / "checkpoint"), "in-1", 2)


def test_sustained_lag_and_latency_from_the_logs(tmp_path):
    """Spark's position steps at each micro-batch's end; the lag is the records in the topic minus it; a rate
    whose lag keeps growing is not sustained."""
    from harness.config import Sustained
    from harness.kafka_sustained import RESULTS, lag_verdict, latency, positions

    log = tmp_path / "spark-suppress.log"
    log.write_text(
        'PROGRESS {"batchId": 0, "timestamp": "1970-01-01T00:00:01.000Z", "numInputRows": 100, '
        '"durationMs": {"triggerExecution": 500}}\nnoise\n'
        'PROGRESS {"batchId": 1, "timestamp": "1970-01-01T00:00:01.500Z", "numInputRows": 50, '
        '"durationMs": {"triggerExecution": 1000}}\n'
    )
    assert positions(str(log), "spark-suppress") == [(1500, 100), (2500, 150)]
    sus = Sustained()
    acked = [(t, t // 10) for t in range(0, 10_001, 100)]  # 100 records/s
    kept_up = lag_verdict(acked, [(t, max(0, t // 10 - 20)) for t in range(0, 10_001, 100)], 1000, 9000, 100, sus)
    assert kept_up["sustained"] and kept_up["lag_max"] == 20
    behind = lag_verdict(acked, [(t, t // 20) for t in range(0, 10_001, 100)], 1000, 9000, 100, sus)
    assert not behind["sustained"] and behind["lag_slope_per_s"] == 50
    results = np.array([(0, 0, 2, 10), (1, 0, 2, 20), (2, 10, 1, 30)], dtype=RESULTS)
    lat = latency(_streamed(), results, 0, 100)
    assert lat["windows"] == 2 and lat["max_ms"] == 12 and lat["p50_ms"] == 7.5


def test_sustained_load_starts_only_once_the_system_processed_the_priming_records(tmp_path):
    """The driver's load waits for the harness's go: none before the driver has sent the priming records and the
    system has processed them all, one go then, and an error naming the system if it never gets there."""
    import io
    import types

    from harness.kafka_sustained import Primer

    driver_log, system_log = tmp_path / "driver.log", tmp_path / "kafka-streams.log"
    driver_log.write_text("ACKED 1000 0\n")
    system_log.write_text("POSITION 1000 1000\n")
    driver = types.SimpleNamespace(stdin=io.StringIO())
    primer = Primer(str(driver_log), str(system_log), "kafka-streams", 1000, 300)
    primer(driver)  # processed, but the driver has not said it sent them: these are not the priming records
    assert driver.stdin.getvalue() == "" and primer.primed_s is None
    driver_log.write_text("ACKED 1000 0\nPRIMED 1000\n")
    system_log.write_text("POSITION 1000 0\nPOSITION 1100 999\n")
    primer(driver)
    assert driver.stdin.getvalue() == "" and primer.primed_s is None
    system_log.write_text("POSITION 1000 0\nPOSITION 1100 999\nPOSITION 1200 1000\n")
    primer(driver)
    primer(driver)
    assert driver.stdin.getvalue() == "go\n" and primer.primed_s > 0
    late = Primer(str(driver_log), str(tmp_path / "spark-suppress.log"), "spark-suppress", 1000, 0)
    (tmp_path / "spark-suppress.log").write_text("")
    with pytest.raises(RuntimeError, match="spark-suppress had not processed the 1,000 priming records"):
        late(types.SimpleNamespace(stdin=io.StringIO()))


def test_a_lag_that_still_falls_or_stays_high_keeps_the_warm_up_going():
    """The warm-up may end on a low flat lag (a saw tooth of micro-batches), never on a lag still draining the backlog
    of the load's start, nor one that paused high, nor a rising one (which may yet fall back)."""
    from harness.config import Sustained
    from harness.kafka_sustained import lag_settled

    sus = Sustained(settle_s=15)
    rate, now = 1_000, 100_000
    acked = [(t, t) for t in range(0, now + 1, 100)]  # 1,000 records/s

    def processed(speed: float, backlog: int, batch_ms: int = 300):
        # Micro-batches every batch_ms, at ``speed`` times the load, after a backlog; never ahead of the input.
        return [(t, max(0, min(t, int(t * speed) - backlog))) for t in range(0, now + 1, batch_ms)]

    assert not lag_settled(acked, processed(1.03, 4_000), now, rate, sus)  # draining 30 records/s
    assert lag_settled(acked, processed(1.0, 0), now, rate, sus)  # keeping up: a saw tooth
    assert lag_settled(acked, processed(1.0, 500), now, rate, sus)  # flat at half a second of input
    assert not lag_settled(acked, processed(1.0, 1_500), now, rate, sus)  # flat at 1.5 s of input
    assert not lag_settled(acked, processed(0.8, 0), now, rate, sus)  # falling behind


def test_the_measurement_begins_once_the_warm_up_has_run_and_the_lag_stopped_falling(tmp_path):
    """After the priming's go: no measure before ``warmup_s``, none while the lag falls, then exactly one."""
    import io
    import types

    from harness.config import Sustained
    from harness.kafka_sustained import Primer, Settler

    driver_log, system_log = tmp_path / "driver.log", tmp_path / "kafka-streams.log"
    driver_log.write_text("PRIMED 0\n")
    system_log.write_text("POSITION 0 1000\n")
    clock = [0.0]
    wall = [0]
    sus = Sustained(warmup_s=30, settle_s=15, ramp_s=0)
    settler = Settler(
        Primer(str(driver_log), str(system_log), "kafka-streams", 1000, 300),
        1_000,
        sus,
        clock=lambda: clock[0],
        wall_ms=lambda: wall[0],
    )
    driver = types.SimpleNamespace(stdin=io.StringIO())
    settler(driver)
    assert driver.stdin.getvalue() == "go\n"

    def at(seconds: float):
        # The load at 1,000/s since the go; the system drains a backlog of 6,000 records at 100 records/s, then
        # keeps up.
        clock[0], wall[0] = seconds, int(seconds * 1000)
        acks = "".join(f"ACKED {t} {1000 + t}\n" for t in range(0, wall[0] + 1, 100))
        driver_log.write_text("PRIMED 0\n" + acks)
        done = "".join(f"POSITION {t} {1000 + t - max(0, 6000 - t // 10)}\n" for t in range(0, wall[0] + 1, 100))
        system_log.write_text(done)
        settler(driver)

    at(20)  # settled, but before warmup_s
    assert driver.stdin.getvalue() == "go\n"
    at(40)  # after warmup_s, the lag still falling (6,000 - t/10 records at t ms: 0 at 60 s)
    assert driver.stdin.getvalue() == "go\n"
    at(80)  # flat since 60 s
    at(81)
    assert driver.stdin.getvalue() == "go\nmeasure\n"


def test_a_probe_is_stopped_once_its_lag_has_exceeded_the_bound_the_verdict_judges(tmp_path):
    """With ``stop_early``, a lag over ``max_lag_seconds`` of input on the measurement's grid stops the driver once
    (a third line); the verdict over the shortened measurement fails on that lag, not on its brevity; a latency
    run (no ``stop_early``) and a lag under the bound are never stopped; a driver that began measuring by itself is
    told both lines, which it reads in order."""
    import io
    import types

    from harness.config import Sustained
    from harness.kafka_sustained import Primer, Settler, lag_exceeded, lag_verdict, stopped_verdict

    sus = Sustained(warmup_s=30, settle_s=15, ramp_s=0, max_lag_seconds=5.0)
    rate = 1_000
    acked = [(t, t) for t in range(0, 200_001, 100)]  # 1,000 records/s
    behind = [(t, max(0, t - 6_000)) for t in range(0, 200_001, 100)]  # 6 s of input behind
    keeping_up = [(t, max(0, t - 300)) for t in range(0, 200_001, 300)]  # micro-batches of 300 ms
    assert lag_exceeded(acked, behind, 100_000, 110_000, rate, sus) == 100_000
    assert lag_exceeded(acked, keeping_up, 100_000, 160_000, rate, sus) is None
    assert lag_exceeded(acked, behind, 100_000, 99_000, rate, sus) is None  # nothing measured yet
    short = lag_verdict(acked, behind, 100_000, 101_000, rate, sus)
    assert not short["sustained"]
    assert len(short["not_sustained_because"]) == 1 and "lag reached" in short["not_sustained_because"][0]
    # Stopped on a lag that the logs, read again afterwards, no longer show: still not sustained.
    steady = [(t, max(0, t - 300)) for t in range(0, 200_001, 100)]  # 0.3 s of input behind, flat
    passing = lag_verdict(acked, steady, 100_000, 101_000, rate, sus)
    assert passing["sustained"] and stopped_verdict(passing, False, rate, sus)["sustained"]
    assert stopped_verdict(short, True, rate, sus) == short
    assert not stopped_verdict(passing, True, rate, sus)["sustained"]

    def run(stop_early: bool, lag_from_40_s: int, lag_before: int = 0, settle_lag_s: float = 1.0) -> str:
        sus = Sustained(warmup_s=30, settle_s=15, ramp_s=0, max_lag_seconds=5.0, settle_lag_s=settle_lag_s)
        driver_log, system_log = tmp_path / "driver.log", tmp_path / "kafka-streams.log"
        driver_log.write_text("PRIMED 0\n")
        system_log.write_text("POSITION 0 1000\n")
        clock, wall = [0.0], [0]
        settler = Settler(
            Primer(str(driver_log), str(system_log), "kafka-streams", 1000, 300),
            rate,
            sus,
            stop_early=stop_early,
            clock=lambda: clock[0],
            wall_ms=lambda: wall[0],
        )
        driver = types.SimpleNamespace(stdin=io.StringIO())
        settler(driver)
        for seconds in range(31, 60):
            clock[0], wall[0] = float(seconds), seconds * 1000
            acks = "".join(f"ACKED {t} {1000 + t}\n" for t in range(0, wall[0] + 1, 100))
            # Kafka Streams stays lag_before records behind until 40 s, then lag_from_40_s.
            lag = [lag_before if t < 40_000 else lag_from_40_s for t in range(0, wall[0] + 1, 100)]
            done = "".join(f"POSITION {t} {1000 + t - d}\n" for t, d in zip(range(0, wall[0] + 1, 100), lag))
            # The driver measures from the harness's line, or by itself from 40 s (its warmup_max_s, here).
            measuring = "MEASURING 40000\n" if seconds >= 40 else ""
            driver_log.write_text("PRIMED 0\n" + acks + measuring)
            system_log.write_text(done)
            settler(driver)
        return driver.stdin.getvalue()

    assert run(True, 10_000) == "go\nmeasure\nstop\n"
    assert run(False, 10_000) == "go\nmeasure\n"  # a latency run measures its whole minute
    assert run(True, 4_000) == "go\nmeasure\n"  # under the bound: never stopped
    # A lag of 0.8 s of input never settles under 0.5 s: the driver began measuring by itself.
    assert run(True, 10_000, lag_before=800, settle_lag_s=0.5) == "go\nmeasure\nstop\n"
    assert run(True, 4_000, lag_before=800, settle_lag_s=0.5) == "go\n"


def test_sustained_broker_removed_after_a_clean_run(tmp_path, monkeypatch):
    """Benchmark 11's broker keeps every probe's topics (about 30 GB after a full run): removed when every check held,
    kept for a look when one failed or with BENCH_KEEP_RUNS, as a probe's own files are."""
    from harness.kafka_sustained import discard

    def broker() -> str:
        data = tmp_path / "broker" / "data" / "in-1-0"
        data.mkdir(parents=True, exist_ok=True)
        (data / "00000000000000000000.log").write_bytes(b"x" * 10)
        return str(tmp_path / "broker")

    monkeypatch.delenv("BENCH_KEEP_RUNS", raising=False)
    kept = broker()
    assert not discard(kept, ok=False)
    assert os.path.isdir(kept)
    monkeypatch.setenv("BENCH_KEEP_RUNS", "1")
    assert not discard(kept, ok=True) and os.path.isdir(kept)
    monkeypatch.delenv("BENCH_KEEP_RUNS")
    assert discard(kept, ok=True) and not os.path.exists(kept)
    assert tmp_path.is_dir()  # only the broker's directory goes


def test_large_state_check_fails_a_wrong_count_a_missing_window_and_an_uncounted_record():
    """Each system's final rows against Spark's aggregation's, and every record counted by each."""
    from harness.large_state import check_point

    def rows(*r):
        return pd.DataFrame(list(r), columns=["key", "start", "end", "count"])

    right = rows(("a", 0, 10_000, 2), ("b", 0, 10_000, 1), ("a", 10_000, 20_000, 3))
    records = 6
    assert check_point({"native": right, "ours": right.copy(), "bare": right.copy()}, records)["same_final_rows"]

    wrong_count = rows(("a", 0, 10_000, 3), ("b", 0, 10_000, 1), ("a", 10_000, 20_000, 2))  # same total
    c = check_point({"native": right, "ours": right.copy(), "bare": wrong_count}, records)
    assert not c["same_final_rows"] and c["against"]["bare"]["differing_rows"] == 2
    assert c["against"]["ours"]["differing_rows"] == 0

    missing = rows(("a", 0, 10_000, 2), ("a", 10_000, 20_000, 4))  # b's window lost, its record put elsewhere
    c = check_point({"native": right, "ours": missing, "bare": right.copy()}, records)
    assert not c["same_final_rows"] and c["against"]["ours"]["differing_rows"] == 2

    # All agree, but each dropped a record: the totals tell.
    assert not check_point({"native": right, "ours": right.copy(), "bare": right.copy()}, records + 1)[
        "same_final_rows"
    ]
