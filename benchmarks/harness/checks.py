"""Reference outputs and result checks for the benchmarks, in plain Python (no Spark, no spark-suppress).

Each reference is written from the rules as documented (Kafka's, in tests/conformance/KAFKA_SEMANTICS.md, and how
they map onto micro-batches, in docs/suppress.md and docs/join.md), not from the code under test, so that a wrong
operator disagrees with it. The checks take plain rows, so tests/test_benchmark_checks.py can feed them wrong
outputs on purpose and see them fail.

What the references need to know of Spark itself: which micro-batch reads which input file (one file per batch,
in name order: ``maxFilesPerTrigger=1``), the watermark of each batch (the largest event time of the batches before
it, minus the delay; 0 at first, never going back), and which shard a key falls in. The last is a hash, so it is
reimplemented here; the tests pin it against values the JVM's own functions return.
"""

from __future__ import annotations

import bisect
import heapq
from collections import Counter
from itertools import zip_longest
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

_M32 = 0xFFFFFFFF
# Scala's MurmurHash3.arraySeed, which spark-suppress's ShardKeys seeds its shard hash with.
SCALA_ARRAY_SEED = 0x3C074A61
SPARK_HASH_SEED = 42


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def _mix_k1(k: int) -> int:
    k = (k * 0xCC9E2D51) & _M32
    k = _rotl(k, 15)
    return (k * 0x1B873593) & _M32


def _mix_h1(h: int, k: int) -> int:
    h ^= k
    h = _rotl(h, 13)
    return (h * 5 + 0xE6546B64) & _M32


def _fmix(h: int, length: int) -> int:
    h ^= length
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    h ^= h >> 16
    return h


def _signed(h: int) -> int:
    return h - (1 << 32) if h & 0x80000000 else h


def spark_hash_bytes(data: bytes, seed: int = SPARK_HASH_SEED) -> int:
    """Spark's ``hash()`` of a string or binary value (``Murmur3_x86_32.hashUnsafeBytes``): whole 4-byte words
    little-endian, then, unlike the standard Murmur3, every trailing byte (signed) mixed in as a word of its own."""
    h = seed & _M32
    aligned = len(data) - len(data) % 4
    for i in range(0, aligned, 4):
        h = _mix_h1(h, _mix_k1(int.from_bytes(data[i : i + 4], "little")))
    for b in data[aligned:]:
        h = _mix_h1(h, _mix_k1((b - 256 if b > 127 else b) & _M32))
    return _signed(_fmix(h, len(data)))


def scala_bytes_hash(data: bytes, seed: int = SCALA_ARRAY_SEED) -> int:
    """Scala 2.13's ``MurmurHash3.bytesHash``: the standard Murmur3 x86 32-bit hash."""
    h = seed & _M32
    aligned = len(data) - len(data) % 4
    for i in range(0, aligned, 4):
        h = _mix_h1(h, _mix_k1(int.from_bytes(data[i : i + 4], "little")))
    tail = data[aligned:]
    if tail:
        h ^= _mix_k1(int.from_bytes(tail, "little"))
    return _signed(_fmix(h, len(data)))


def key_bytes(key: str) -> bytes:
    """How spark-suppress encodes a one-column string key (docs/architecture.md, KeyEncoding): ``0x01``, the UTF-8
    bytes with ``0x00`` escaped as ``0x00 0xFF``, then ``0x00 0x00``. Its unsigned byte order is Kafka's order of
    serialized string keys, which breaks ties in buffer time."""
    return b"\x01" + key.encode("utf-8").replace(b"\x00", b"\x00\xff") + b"\x00\x00"


def library_shard(shards: int) -> Callable[[str], int]:
    """The shard of a key in spark-suppress's bounded buffers and its join: Scala's bytes hash of the encoded key,
    modulo the shuffle partitions (docs/suppress.md: one shard per state partition)."""
    return lambda key: scala_bytes_hash(key_bytes(key)) % shards


def spark_hash_shard(shards: int) -> Callable[[str], int]:
    """``pmod(hash(key), shards)``: how the PySpark stateful jobs of the benchmarks shard their keys."""
    return lambda key: spark_hash_bytes(key.encode("utf-8")) % shards


def watermarks(batch_max_ts: Sequence[Optional[int]], delay_ms: int) -> List[int]:
    """The watermark each micro-batch runs with: 0 for the first, then the largest event time of the batches before
    it minus the delay, never going back (``None``: a batch without rows)."""
    out, wm = [], 0
    for m in batch_max_ts:
        out.append(wm)
        if m is not None:
            wm = max(wm, m - delay_ms)
    return out


def _memo(f: Callable[[str], int]) -> Callable[[str], int]:
    """The shard hash once per key, not once per record (it is pure Python)."""
    cache: Dict[str, int] = {}

    def of(key: str) -> int:
        s = cache.get(key)
        if s is None:
            s = cache[key] = f(key)
        return s

    return of


Row = Tuple[str, int, int]  # key, event time in ms, value


def rate_limit_reference(
    batches: Sequence[Sequence[Row]],
    time_limit_ms: int,
    max_records: int,
    watermark_delay_ms: int,
    shard_of: Callable[[str], int],
) -> List[Tuple[int, str, int, int]]:
    """What ``suppress(untilTimeLimit(time_limit, maxRecords(max_records).emitEarlyWhenFull()))`` emits, as
    (micro-batch, key, ts, value) rows, for ``batches`` of updates in arrival order.

    Kafka's rules (KAFKA_SEMANTICS.md §1): an update of a key not buffered enters with its own timestamp as buffer
    time; an update of a buffered key replaces its value and timestamp but keeps the buffer time. After each update,
    stream time is the largest timestamp seen; every entry whose buffer time is at most stream time minus the time
    limit leaves (oldest first), then, while more than ``max_records`` keys are buffered, the oldest leaves early.
    "Oldest" is by buffer time, ties by the key's serialized bytes. A leaving entry carries its latest update.

    Their mapping onto Spark (docs/suppress.md, "Stream time and watermarks" and "Buffers, bounds and state"): one
    buffer per shard; in each micro-batch a shard's stream time starts at the batch's watermark (what became due at
    it leaves first), then moves with the shard's own updates. After the last batch, Spark runs one more batch
    without data at the new watermark, where whatever is due leaves."""
    rows = rate_limit_rows(batches, time_limit_ms, max_records, watermark_delay_ms, shard_of)
    return [(b, key, ts, value) for b, _, key, ts, value in rows]


def rate_limit_rows(
    batches: Sequence[Sequence[Row]],
    time_limit_ms: int,
    max_records: int,
    watermark_delay_ms: int,
    shard_of: Callable[[str], int],
) -> List[Tuple[int, int, str, int, int]]:
    """``rate_limit_reference``'s rows with the update that let each out: (micro-batch, index of that update in
    its batch or -1 for the batch's watermark, key, ts, value). The last batch, one past ``batches``, is the one
    without data that Spark runs at the final watermark."""
    shard_of = _memo(shard_of)
    batch_max = [max((ts for _, ts, _ in b), default=None) for b in batches]
    marks = watermarks(batch_max + [None], watermark_delay_ms)
    buffers: Dict[int, Dict[str, List[int]]] = {}  # shard -> key -> [buffer time, ts, value]
    order: Dict[int, List[Tuple[int, bytes, str]]] = {}  # shard -> heap of (buffer time, key bytes, key)
    out: List[Tuple[int, int, str, int, int]] = []

    def leave(shard: int, batch: int, cause: int) -> None:
        _, _, key = heapq.heappop(order[shard])
        _, ts, value = buffers[shard].pop(key)
        out.append((batch, cause, key, ts, value))

    def leave_due(shard: int, batch: int, cause: int, stream_time: int) -> None:
        heap = order[shard]
        while heap and heap[0][0] <= stream_time - time_limit_ms:
            leave(shard, batch, cause)

    for b, rows in enumerate(list(batches) + [[]]):
        for shard in list(buffers):
            leave_due(shard, b, -1, marks[b])
        stream_time: Dict[int, int] = {}
        for i, (key, ts, value) in enumerate(rows):
            shard = shard_of(key)
            buffer = buffers.setdefault(shard, {})
            heap = order.setdefault(shard, [])
            st = max(stream_time.get(shard, marks[b]), ts)
            stream_time[shard] = st
            entry = buffer.get(key)
            if entry is None:
                buffer[key] = [ts, ts, value]
                heapq.heappush(heap, (ts, key_bytes(key), key))
            else:
                entry[1], entry[2] = ts, value
            leave_due(shard, b, i, st)
            while len(buffer) > max_records:
                leave(shard, b, i)
    return out


def compare_rows(expected: Iterable[tuple], got: Iterable[tuple], examples: int = 5) -> Dict[str, Any]:
    """Two multisets of rows: how many of each side the other lacks, with a few of each."""
    e, g = Counter(expected), Counter(got)
    missing, unexpected = e - g, g - e
    # A few of each, in a stable order; str() because a left join's None and a tier do not compare.
    return {
        "expected": sum(e.values()),
        "got": sum(g.values()),
        "missing": sum(missing.values()),
        "unexpected": sum(unexpected.values()),
        "first_missing": heapq.nsmallest(examples, missing, key=str),
        "first_unexpected": heapq.nsmallest(examples, unexpected, key=str),
        "same": not missing and not unexpected,
    }


def check_rate_limit(
    reference: Sequence[Tuple[int, str, int, int]],
    got: Sequence[Tuple[Optional[int], str, int, int]],
    examples: int = 5,
) -> Dict[str, Any]:
    """A system's rate-limited output against the reference: the same updates must leave (key, ts, value, as many
    times each), each in the micro-batch the reference says. ``got``'s batch may be ``None`` where the sink does not
    tell; then only the rows are compared."""
    timed = None if any(r[0] is None for r in got) else compare_rows(reference, got, examples)
    # Rows equal batch for batch are equal without batches: the second comparison only when the first fails.
    rows = (
        timed
        if timed is not None and timed["same"]
        else compare_rows([r[1:] for r in reference], [r[1:] for r in got], examples)
    )
    check = {
        "expected_rows": rows["expected"],
        "emitted_rows": rows["got"],
        "missing": rows["missing"],
        "unexpected": rows["unexpected"],
        "first_missing": rows["first_missing"],
        "first_unexpected": rows["first_unexpected"],
    }
    if timed is not None:
        # Rows that left, with the right values, but in another micro-batch than Kafka's rule lets them.
        check["wrong_batch"] = timed["missing"] - rows["missing"]
        check["first_wrong_batch"] = [] if not check["wrong_batch"] else timed["first_missing"]
    else:
        check["wrong_batch"] = None
    check["ok"] = rows["same"] and not check["wrong_batch"]
    return check


NOT_JOINED = "not joined"
Version = Tuple[int, Optional[int]]  # (changed_at ms, value)


def _as_of(versions: List[Version], t: int) -> Optional[int]:
    """The value of the version with the greatest timestamp <= t (None: none). ``versions`` sorted by time."""
    i = bisect.bisect_right(versions, (t, float("inf"))) - 1
    return versions[i][1] if i >= 0 else None


def _write(versions: List[Version], changed_at: int, value: Optional[int]) -> None:
    """A write at the timestamp of an existing version replaces it (Kafka's versioned store)."""
    i = bisect.bisect_left(versions, (changed_at, float("-inf")))
    if i < len(versions) and versions[i][0] == changed_at:
        versions[i] = (changed_at, value)
    else:
        versions.insert(i, (changed_at, value))


def version_at_timestamp(
    stream: Iterable[Tuple[str, int]], table: Iterable[Tuple[str, int, int]]
) -> List[Optional[int]]:
    """For each stream record (key, ts), the value of its key's table version valid at ts, from the whole
    changelog (key, changed_at, value) whenever it arrived: what a join as of the record's timestamp should see."""
    versions: Dict[str, List[Version]] = {}
    for key, changed_at, value in table:
        _write(versions.setdefault(key, []), changed_at, value)
    return [_as_of(versions.get(key, []), ts) for key, ts in stream]


def latest_version(stream: Iterable[Tuple[str, int]], table: Iterable[Tuple[str, int, int]]) -> List[Optional[int]]:
    """For each stream record, the value of its key's newest version (what a stream-static join with the latest
    snapshot returns; the kind of wrong answer the join's check must catch)."""
    latest: Dict[str, Version] = {}
    for key, changed_at, value in table:
        if key not in latest or changed_at >= latest[key][0]:
            latest[key] = (changed_at, value)
    return [latest[k][1] if k in latest else None for k, _ in stream]


def grace_join_reference(
    batches: Sequence[Tuple[Sequence[Tuple[str, int]], Sequence[Tuple[str, int, int]]]],
    grace_ms: int,
    history_retention_ms: int,
    shard_of: Callable[[str], int],
) -> List[List[Any]]:
    """What a left ``join_versioned`` with ``grace_ms`` joins each stream record with: per micro-batch (stream rows
    (key, ts), table rows (key, changed_at, value), each in arrival order), the value per stream row.

    Kafka's rules (KIP-923 on KIP-889, docs/join.md "Semantics"): the table keeps versions per key; a lookup as of
    t returns the greatest version <= t; a write older than the table's observed stream time minus the retention is
    rejected; a lookup older than that boundary sees only the key's latest version, if it is not newer than t.
    Stream records wait in a grace buffer whose stream time is the largest timestamp put into it; after each put,
    every record with ts <= stream time - grace leaves and is joined with the table as it is then; a record already
    past that when it arrives is joined at once. Both clocks are per shard. In a micro-batch the table updates come
    first, then the stream records. No watermark on the benchmark's inputs: records still waiting at the end are
    never joined (``NOT_JOINED``; the benchmark's flush records move every shard's time past all of them)."""
    shard_of = _memo(shard_of)
    tables: Dict[str, List[Version]] = {}
    observed: Dict[int, int] = {}
    stream_time: Dict[int, int] = {}
    waiting: Dict[int, List[Tuple[int, bytes, int, int, int, str]]] = {}
    out: List[List[Any]] = [[NOT_JOINED] * len(s) for s, _ in batches]

    def lookup(shard: int, key: str, t: int) -> Optional[int]:
        versions = tables.get(key, [])
        if shard in observed and t < observed[shard] - history_retention_ms:
            return versions[-1][1] if versions and versions[-1][0] <= t else None
        return _as_of(versions, t)

    for b, (stream, table) in enumerate(batches):
        for key, changed_at, value in table:
            shard = shard_of(key)
            if shard in observed and changed_at < observed[shard] - history_retention_ms:
                continue
            observed[shard] = max(observed.get(shard, changed_at), changed_at)
            _write(tables.setdefault(key, []), changed_at, value)
        for i, (key, ts) in enumerate(stream):
            shard = shard_of(key)
            st = stream_time.get(shard)
            if st is not None and ts < st - grace_ms:
                out[b][i] = lookup(shard, key, ts)
                continue
            st = ts if st is None else max(st, ts)
            stream_time[shard] = st
            heap = waiting.setdefault(shard, [])
            heapq.heappush(heap, (ts, key_bytes(key), b * (1 << 32) + i, b, i, key))
            while heap and heap[0][0] <= st - grace_ms:
                t, _, _, rb, ri, k = heapq.heappop(heap)
                out[rb][ri] = lookup(shard, k, t)
    return out


def check_join(expected: Iterable[tuple], got: Iterable[tuple], examples: int = 5) -> Dict[str, Any]:
    """A join's output rows (the stream record's columns and the joined value) against the expected rows: each
    output row not in the reference is a wrongly joined record (or one joined twice), each reference row not in the
    output a record not joined or joined with another value."""
    rows = compare_rows(expected, got, examples)
    return {
        "expected_rows": rows["expected"],
        "output_rows": rows["got"],
        "wrong_rows": rows["unexpected"],
        "missing_rows": rows["missing"],
        "first_wrong": rows["first_unexpected"],
        "first_missing": rows["first_missing"],
        "ok": rows["same"],
    }


def check_kafka_run(got: Dict[str, int], expected: Dict[str, int], duplicate_results: int) -> Dict[str, Any]:
    """One end-to-end run's final results (key -> count, as consumed) against the counts computed from the input,
    and the consumer's count of results that came a second time for a key (a final result is final only once)."""
    missing = [k for k in expected if k not in got]
    extra = [k for k in got if k not in expected]
    wrong = [k for k in expected if k in got and got[k] != expected[k]]
    return {
        "results": len(got),
        "expected": len(expected),
        "missing": len(missing),
        "unexpected": len(extra),
        "wrong_count": len(wrong),
        "first_wrong": [(k, got[k], expected[k]) for k in wrong[:5]],
        "duplicate_results": duplicate_results,
        "same_final_rows": not missing and not extra and not wrong and duplicate_results == 0,
    }


def every_run_holds(runs_per_system: Dict[str, List[Dict[str, Any]]]) -> bool:
    """Whether every run of every system passed its check (not only each system's last run)."""
    return all(c["same_final_rows"] for runs in runs_per_system.values() for c in runs)


def compare_evictions(ours: Iterable[str], theirs: Iterable[str]) -> Dict[str, Any]:
    """Two buffers' evictions of one operation, in order (one line per evicted record): the same records in the
    same order, or where they first part."""
    n = 0
    for n, (a, b) in enumerate(zip_longest(ours, theirs), start=1):
        if a != b:
            return {"evictions_compared": n - 1, "first_difference": n - 1, "ours": a, "theirs": b, "same": False}
    return {"evictions_compared": n, "first_difference": None, "same": n > 0}


def windowed_counts_reference(
    keys: Sequence[int], ts: Sequence[int], sent: Sequence[int], partitions: int, window_ms: int, grace_ms: int
) -> Dict[Tuple[int, int], Tuple[int, Optional[int]]]:
    """For a stream of records produced to Kafka (key number, timestamp ms, wall time sent ms, in the order sent; a
    key's partition is key % ``partitions``): per (key, window start) of tumbling windows, the count of its records
    and the wall time at which the record that closed it was sent (None: not closed).

    Kafka's rule (KAFKA_SEMANTICS.md, windowed aggregations; ``onWindowClose``): stream time is per task, i.e. per
    input partition, the largest timestamp seen there in offset order; a window [start, start + size) is closed
    once its partition's stream time reaches start + size + grace, so the record that closes it is the first of the
    partition whose timestamp is at or past that."""
    import numpy as np

    k = np.asarray(keys, dtype=np.int64)
    t = np.asarray(ts, dtype=np.int64)
    s = np.asarray(sent, dtype=np.int64)
    starts = t - np.mod(t, window_ms)
    out: Dict[Tuple[int, int], Tuple[int, Optional[int]]] = {}
    for p in range(partitions):
        mask = np.mod(k, partitions) == p
        pk, pstart = k[mask], starts[mask]
        stream_time = np.maximum.accumulate(t[mask]) if mask.any() else t[mask]
        psent = s[mask]
        windows = np.unique(pstart)
        first = np.searchsorted(stream_time, windows + window_ms + grace_ms, side="left")
        closed_at = {int(w): (int(psent[i]) if i < len(psent) else None) for w, i in zip(windows, first)}
        if not len(windows):
            continue
        # (key, window) as one integer: a one-dimensional unique, many times faster than one over pairs of columns
        # on the tens of millions of records a probe of benchmark 11 sends.
        spans = int((windows[-1] - windows[0]) // window_ms) + 1
        pairs, counts = np.unique(pk * spans + (pstart - windows[0]) // window_ms, return_counts=True)
        for pair, n in zip(pairs.tolist(), counts.tolist()):
            key, span = divmod(pair, spans)
            start = int(windows[0]) + span * window_ms
            out[(key, start)] = (n, closed_at[start])
    return out


def check_streamed_final_results(
    reference: Dict[Tuple[int, int], Tuple[int, Optional[int]]],
    results: Iterable[Tuple[int, int, int]],
    complete_by_ms: Optional[int],
    examples: int = 5,
) -> Dict[str, Any]:
    """Final results (key, window start, count) consumed from a continuously fed system against
    ``windowed_counts_reference``: every result must be the exact count of a window with records, and come once;
    every window closed by a record sent at or before ``complete_by_ms`` must have come (None: completeness not
    required, for a load the system did not keep up with). A result of a window not yet closed on its partition
    is not wrong by itself (Spark's watermark is global, not per partition); it is counted as ``before_close``."""
    seen: Counter = Counter()
    wrong, unexpected, before_close = [], [], 0
    for key, start, count in results:
        seen[(key, start)] += 1
        if seen[(key, start)] > 1:
            continue
        ref = reference.get((key, start))
        if ref is None:
            unexpected.append((key, start, count))
        elif ref[0] != count:
            wrong.append((key, start, count, ref[0]))
        elif ref[1] is None:
            before_close += 1
    duplicates = sum(n - 1 for n in seen.values())
    required = (
        []
        if complete_by_ms is None
        else [w for w, (_, closed) in reference.items() if closed is not None and closed <= complete_by_ms]
    )
    missing = [w for w in required if w not in seen]
    return {
        "results": sum(seen.values()),
        "windows_required": len(required),
        "missing": len(missing),
        "wrong_count": len(wrong),
        "unexpected": len(unexpected),
        "duplicate_results": duplicates,
        "before_close": before_close,
        "first_missing": sorted(missing)[:examples],
        "first_wrong": sorted(wrong)[:examples],
        "first_unexpected": sorted(unexpected)[:examples],
        "ok": not missing and not wrong and not unexpected and duplicates == 0,
    }


def kafka_streams_rate_limit_reference(
    partitions: Sequence[Sequence[Row]], time_limit_ms: int, max_records: int
) -> List[Tuple[int, int, str, int, int]]:
    """What Kafka Streams' ``toTable().suppress(untilTimeLimit(time_limit, maxRecords(max_records)
    .emitEarlyWhenFull()))``, record cache off, emits for input ``partitions`` given as their updates (key, ts,
    value) in offset order: (partition, offset of the update whose processing let the row out, key, ts, value), in
    the order each partition's task emits them.

    Each partition is a task with a suppression buffer and stream time of its own, and processes its records one at
    a time to the end (KAFKA_SEMANTICS.md §0, §1): which updates leave, with which values and during which input
    record, follows from the partition's order alone, however the records are timed. Nothing leaves without a later
    record of its partition: there is no closing batch as in Spark."""
    out = []
    for p, rows in enumerate(partitions):
        for b, i, key, ts, value in rate_limit_rows([rows], time_limit_ms, max_records, 0, lambda k: 0):
            if b == 0:
                out.append((p, i, key, ts, value))
    return out


def spark_kafka_batches(
    partitions: Sequence[Sequence[Row]],
    batch_ends: Sequence[Sequence[int]],
    order: Sequence[int],
    by_position: bool = False,
) -> List[List[Row]]:
    """The updates of each micro-batch of Spark's Kafka source in the order spark-suppress applies them, from each
    batch's end offset per partition (``batch_ends[b][p]``; a batch starts where the one before ended, the first at
    offset 0): the partitions one after the other in ``order``, each in offset order.

    spark-suppress numbers rows by input partition and position before its shuffle and applies a shard's rows in
    that order (ArrivalSequence; docs/suppress.md, "Stream time and watermarks"); a batch reads each topic partition
    as one input partition, in an order Spark does not report (that of the batch's map of offsets), hence ``order``.
    ``by_position``: the order if the numbers lost their partition, by position within the batch's part of each
    partition, ties in ``order`` (what the check reports a failed output agrees with)."""
    start = [0] * len(partitions)
    out: List[List[Row]] = []
    for ends in batch_ends:
        parts = [partitions[p][start[p] : ends[p]] for p in order]
        if by_position:
            out.append([part[i] for i in range(max(map(len, parts), default=0)) for part in parts if i < len(part)])
        else:
            out.append([row for part in parts for row in part])
        start = list(ends)
    return out


def spark_rate_limit_reference(
    partitions: Sequence[Sequence[Row]],
    batch_ends: Sequence[Sequence[int]],
    order: Sequence[int],
    time_limit_ms: int,
    max_records: int,
    watermark_delay_ms: int,
    shard_of: Callable[[str], int],
    by_position: bool = False,
) -> List[Tuple[int, str, int, int]]:
    """What spark-suppress's rate limiter emits for a Kafka input read in the micro-batches ``batch_ends`` say
    (``spark_kafka_batches``), as (micro-batch, key, ts, value): ``rate_limit_reference``, without its closing batch
    without data, which a query stopped while running never had (the batches it had are all in ``batch_ends``)."""
    batches = spark_kafka_batches(partitions, batch_ends, order, by_position)
    rows = rate_limit_reference(batches, time_limit_ms, max_records, watermark_delay_ms, shard_of)
    return [r for r in rows if r[0] < len(batches)]


def check_rate_limited_stream(
    expected: Sequence[Tuple[Any, int, Optional[int]]],
    got: Iterable[Tuple[Any, int]],
    complete_by_ms: Optional[int],
    examples: int = 5,
) -> Dict[str, Any]:
    """A rate limiter's output consumed from a continuously fed system, (key, value) per row in the order consumed,
    against its exact reference: ``expected`` (key, value, sent) in the order the system emits them, ``sent`` the
    wall time at which the input that let the row out was sent. Values identify updates (each is unique), so a row
    with a wrong value is both unexpected and missing.

    A key's rows reach the consumer in the order they left (one output partition per key), so what was consumed of a
    key must be the start of its reference rows: a row not in the reference is ``unexpected``, one consumed again a
    duplicate, one before a row it follows ``out_of_order``, and one absent while a later row of its key came
    ``skipped`` (a dropped emit-early eviction, say). Rows let out by input sent at or before ``complete_by_ms`` must
    all have come (``missing`` otherwise; None: a load the system did not keep up with, where the rest may still be
    on its way when consuming stops)."""
    position: Dict[Tuple[Any, int], int] = {}
    per_key: Dict[Any, int] = Counter()
    for key, value, _ in expected:
        position[(key, value)] = per_key[key]
        per_key[key] += 1
    seen = set()
    last: Dict[Any, int] = {}
    unexpected, duplicates, out_of_order, count = [], 0, [], 0
    for key, value in got:
        count += 1
        at = position.get((key, value))
        if at is None:
            unexpected.append((key, value))
            continue
        if (key, value) in seen:
            duplicates += 1
            continue
        seen.add((key, value))
        if at < last.get(key, -1):
            out_of_order.append((key, value))
        last[key] = max(at, last.get(key, -1))
    skipped, missing = [], []
    for key, value, sent in expected:
        if (key, value) in seen:
            continue
        if position[(key, value)] < last.get(key, -1):
            skipped.append((key, value))
        if complete_by_ms is not None and sent is not None and sent <= complete_by_ms:
            missing.append((key, value))
    return {
        "results": count,
        "expected_rows": len(expected),
        "unexpected": len(unexpected),
        "duplicate_results": duplicates,
        "out_of_order": len(out_of_order),
        "skipped": len(skipped),
        "missing": len(missing),
        "first_unexpected": unexpected[:examples],
        "first_out_of_order": out_of_order[:examples],
        "first_skipped": skipped[:examples],
        "first_missing": missing[:examples],
        "ok": not unexpected and not duplicates and not out_of_order and not skipped and not missing,
    }
