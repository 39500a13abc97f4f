"""Benchmark 11: Kafka Streams against spark-suppress under sustained load through a real broker.

What users choosing between the two weigh once both run warm (benchmark 9, ``kafka_streams``, measures cold
starts): the highest offered rate each keeps up with, and how long a window's final result takes. Two jobs, each
as a Kafka Streams application (WindowedCountApp.java) and as a spark-submit job (spark_jobs/kafka_windowed_count.py):
final results per key and 10-second tumbling window (``emitStrategy(onWindowClose())`` against
``aggregate_windowed(on_window_close)``) and rate limiting (``suppress(untilTimeLimit(5 s, maxRecords(1000)
.emitEarlyWhenFull()))`` on each key's updates, against spark-suppress's ``suppress``).

A probe runs one system, started afresh on fresh topics of 2 partitions. The driver (KafkaDriver ``paced``) first
sends a thousand priming records and waits until the system has processed them all, so that its cold start (for
Spark, planning and its first micro-batch) is not a backlog the measurement inherits; then it offers the rate:
records with the wall clock as event time (minus up to 2 s of disorder), for the warm-up (rising to the rate, then
until the system has worked off the backlog of its start: ``Settler``), the measurement and a short tail, then
consumes for a while without load. The priming records are input like any other: the checks count
them. Lag = records in the input topic (the driver's acknowledged sends) - records the system has processed (Kafka
Streams: a count at its source node; Spark: the input rows of the micro-batches that have ended), on a 1-second grid
over the measurement. A rate is sustained if the lag's regression slope stays under 1% of the rate, the lag under 5
s of input, and the driver got at least 95% of the rate into the topic; a throughput probe whose lag has exceeded
that bound is stopped there (``lag_exceeded``), since the rest of its minute cannot save it. The search doubles from
the start rate until a rate is not sustained, then bisects. Final-result latency: per window and key, the wall
time its result was consumed minus the time the record that closed the window on the key's partition was sent
(Kafka's stream time is per partition; ``checks.windowed_counts_reference``), over the windows closed during the
measurement, at shares of the lower system's sustained rate; Spark with each trigger of the settings at the middle
load, then the one with the lowest p50 at the others.

Check (fails the run), on every probe: every final result equals the count computed from what was produced, none
comes twice, and at a sustained rate every window closed during warm-up and measurement has come. Rate limiting:
each system's output against the exact rule computed for it (``rate_limit_check``), emit-early evictions
included. Kafka Streams' follows from each input partition's order alone (one buffer and stream time per task;
the driver sends partition key % 2 from one thread with an idempotent producer, so the order is that of its log
of sends when every send was acknowledged). spark-suppress's follows from its micro-batches, whose end offsets the job
prints with its progress (and the checkpoint's offset log keeps for the last ones), their watermarks and its
shards; which of a batch's two input partitions a shard applies first Spark does not report, so both orders are
computed and the output must agree with one (if neither, the check also says whether it agrees with rows taken
by position within each partition). Each key's rows consumed must be the start of its reference rows, none twice
or skipped, and at a sustained rate every row let out by input sent before the end of the measurement must have
come. "When" is checked only as a row's place among its key's rows and, for completeness, through the send time
of the input that let it out (Kafka Streams: the record; Spark: the last read by its batch); not as a wall time,
nor as Spark's micro-batch, which its Kafka sink does not carry.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from . import checks
from . import kafka_streams as ks
from .buffer_core import classpath, jar_version
from .config import Sustained
from .context import Context
from .measure import log, target

NAME = "kafka_sustained"
TITLE = "Kafka under sustained load: Kafka Streams vs spark-suppress"
PARTITIONS = ks.PARTITIONS
SYSTEMS = ["kafka-streams", "spark-suppress"]
JOBS = ["final_results", "rate_limit"]
# The driver's files (KafkaDriver.paced): times relative to its start, big-endian.
PRODUCED = np.dtype([("key", ">i4"), ("ts", ">i4"), ("sent", ">i4")])
RESULTS = np.dtype([("key", ">i4"), ("a", ">i8"), ("b", ">i8"), ("consumed", ">i4")])
KEY = "k{:07d}"  # the driver's key names


@dataclass
class Env:
    root: str
    cp: str
    jars: List[str]
    bootstrap: str
    work: str
    sus: Sustained
    window_ms: int
    prefix: List[str]  # taskset for the system under test, or nothing
    probes: int = 0
    done: List[Dict[str, Any]] = field(default_factory=list)  # every probe finished, in order
    on_probe: Callable[[List[Dict[str, Any]]], None] = lambda done: None  # told after each probe


@contextlib.contextmanager
def environment(
    root: str, work: str, classpath_dir: str, sus: Sustained, window_ms: int, prefix: Sequence[str] = ()
) -> Iterator[Env]:
    """The probes' environment with a broker running: ``work`` emptied first, the Kafka Streams classpath built
    under ``classpath_dir``, ``prefix`` (a taskset or nothing) before the system under test."""
    cp = classpath(root, classpath_dir)
    jars = ks.spark_jars(root)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    with ks._local_kafka(root).broker(os.path.join(work, "broker"), heap="1g", partitions=PARTITIONS) as bootstrap:
        yield Env(root, cp, jars, bootstrap, work, sus, window_ms, list(prefix))


def standalone(root: str, name: str, sus: Sustained, window_ms: int):
    """The environment of a script that runs benchmark 11's probes outside ``make bench`` (latency_at_rate.py,
    sustained_search.py): its work directory ``benchmarks/work/runs/<name>``; nothing pinned."""
    work_dir = os.path.join(root, "benchmarks", "work")
    return environment(root, os.path.join(work_dir, "runs", name), work_dir, sus, window_ms)


def _pin() -> Tuple[List[str], Dict[str, Any], Optional[set]]:
    """On 4 cores or more: the system under test on the first two, this process (and so the broker and the driver,
    which it starts) on the others. On fewer, nothing is pinned and everything shares the cores."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 4:
        return [], {"pinned": False, "cores": len(cores)}, None
    system, rest = cores[:2], cores[2:]
    before = set(cores)
    os.sched_setaffinity(0, rest)
    cpus = ",".join(map(str, system))
    return ["taskset", "-c", cpus], {"pinned": True, "system_cores": system, "other_cores": rest}, before


def _system_args(system: str, job: str, trigger: str, sus: Sustained) -> List[str]:
    rate_limit = ["rate_limit", str(sus.time_limit_ms), str(sus.max_records)] if job == "rate_limit" else []
    if system == "kafka-streams":
        return rate_limit or ["count"]
    return [trigger, *rate_limit]


def _iso_ms(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def positions(log_path: str, system: str) -> List[Tuple[int, int]]:
    """(wall ms, records processed by then) from a system's log: Kafka Streams' ``POSITION`` lines; for Spark,
    the end of each micro-batch (its start plus ``triggerExecution``) with the input rows of the batches so far."""
    out: List[Tuple[int, int]] = []
    total = 0
    with open(log_path, errors="replace") as fh:
        for line in fh:
            if system == "kafka-streams" and line.startswith("POSITION "):
                _, ms, n = line.split()
                out.append((int(ms), int(n)))
            elif system != "kafka-streams" and line.startswith("PROGRESS "):
                p = json.loads(line[len("PROGRESS ") :])
                total += p["numInputRows"]
                out.append((_iso_ms(p["timestamp"]) + p["durationMs"].get("triggerExecution", 0), total))
    return sorted(out)


def _step(samples: Sequence[Tuple[int, int]], at: np.ndarray) -> np.ndarray:
    """The value of a step function (the last sample at or before each time; 0 before the first)."""
    if not samples:
        return np.zeros(len(at), dtype=np.int64)
    times = np.array([t for t, _ in samples], dtype=np.int64)
    values = np.array([v for _, v in samples], dtype=np.int64)
    i = np.searchsorted(times, at, side="right") - 1
    return np.where(i >= 0, values[np.maximum(i, 0)], 0)


def _lag_grid(
    acked: Sequence[Tuple[int, int]], processed: Sequence[Tuple[int, int]], t_from: int, t_to: int
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The measurement's 1-second grid over [t_from, t_to] (wall ms), with the records in the topic and the records
    processed at each point: the lag ``lag_verdict`` judges and ``lag_exceeded`` watches."""
    grid = np.arange(t_from, t_to + 1, 1000, dtype=np.int64)
    return grid, _step(acked, grid), _step(processed, grid)


def lag_verdict(
    acked: Sequence[Tuple[int, int]],
    processed: Sequence[Tuple[int, int]],
    t_from: int,
    t_to: int,
    rate: float,
    sus: Sustained,
) -> Dict[str, Any]:
    """Lag on a 1-second grid over [t_from, t_to] (wall ms) and whether it stayed bounded at this rate."""
    grid, in_topic, done = _lag_grid(acked, processed, t_from, t_to)
    lag = in_topic - done
    seconds = (grid - grid[0]) / 1000
    slope = float(np.polyfit(seconds, lag, 1)[0]) if len(grid) > 1 else 0.0
    offered = (in_topic[-1] - in_topic[0]) / max(seconds[-1], 1e-9)
    reasons = []
    if slope >= sus.max_lag_slope * rate:
        reasons.append(f"lag grew {slope:,.0f} records/s (limit {sus.max_lag_slope * rate:,.0f})")
    if lag.max() > sus.max_lag_seconds * rate:
        reasons.append(f"lag reached {lag.max():,} records (limit {sus.max_lag_seconds * rate:,.0f})")
    # A measurement stopped early (``lag_exceeded``) can be a second or two long: too short to judge the driver.
    if seconds[-1] >= MIN_OFFERED_WINDOW_S and offered < sus.min_offered_share * rate:
        reasons.append(f"the driver got only {offered:,.0f} records/s into the topic")
    return {
        "offered_records_per_s": round(float(offered), 1),
        "processed_records_per_s": round(float((done[-1] - done[0]) / max(seconds[-1], 1e-9)), 1),
        "lag_max": int(lag.max()),
        "lag_mean": round(float(lag.mean()), 1),
        "lag_slope_per_s": round(slope, 1),
        "lag_series": lag.tolist(),
        "sustained": not reasons,
        "not_sustained_because": reasons,
    }


# The shortest measurement over which the rate the driver got into the topic is judged.
MIN_OFFERED_WINDOW_S = 10
# How far behind the wall clock the logs are read for ``lag_exceeded``: a micro-batch's progress line, and the
# driver's acknowledged sends, reach their logs a little after the time they describe.
LOG_DELAY_MS = 2_000


def lag_exceeded(
    acked: Sequence[Tuple[int, int]],
    processed: Sequence[Tuple[int, int]],
    measure_from: int,
    until: int,
    rate: float,
    sus: Sustained,
) -> Optional[int]:
    """The first time (wall ms) on the measurement's 1-second grid from ``measure_from`` up to ``until`` at which
    the lag exceeded ``max_lag_seconds`` of input, or None. It is the grid and the bound of ``lag_verdict``, so a
    probe stopped there is one the whole minute would have failed too."""
    if until < measure_from:
        return None
    grid, in_topic, done = _lag_grid(acked, processed, measure_from, until)
    over = np.nonzero(in_topic - done > sus.max_lag_seconds * rate)[0]
    return int(grid[over[0]]) if len(over) else None


def stopped_verdict(verdict: Dict[str, Any], stopped: bool, rate: float, sus: Sustained) -> Dict[str, Any]:
    """``verdict`` for a probe that was stopped early (or not): never sustained. It was stopped on the logs as they
    read then; a progress line that reached its log more than ``LOG_DELAY_MS`` late can make the lag at that point
    smaller in the logs read afterwards, and the verdict over a measurement of a few seconds would then pass."""
    if not stopped or not verdict["sustained"]:
        return verdict
    return dict(
        verdict,
        sustained=False,
        not_sustained_because=[f"stopped: the lag exceeded {sus.max_lag_seconds * rate:,.0f} records as then read"],
    )


def latency(
    reference: Dict[Tuple[int, int], Tuple[int, Optional[int]]],
    results: np.ndarray,
    t_from: int,
    t_to: int,
) -> Dict[str, Any]:
    """Per final result whose window was closed by a record sent in [t_from, t_to] (ms from the driver's start):
    consumed - that record's send time, as p50, p99 and max in ms."""
    values = []
    for key, start, consumed in zip(results["key"].tolist(), results["a"].tolist(), results["consumed"].tolist()):
        closed = reference.get((key, start), (0, None))[1]
        if closed is not None and t_from <= closed <= t_to:
            values.append(consumed - closed)
    if not values:
        return {"windows": 0, "p50_ms": None, "p99_ms": None, "max_ms": None}
    v = np.array(values)
    return {
        "windows": len(values),
        "p50_ms": round(float(np.percentile(v, 50)), 1),
        "p99_ms": round(float(np.percentile(v, 99)), 1),
        "max_ms": int(v.max()),
    }


def input_partitions(produced: np.ndarray, start: int, partitions: int) -> Tuple[List[List[checks.Row]], List[list]]:
    """Each input partition's updates (key name, ts ms, value) in offset order, and the sequence number at each
    offset. The driver sends partition key % ``partitions`` of every record from one thread with an idempotent
    producer, so a partition holds its records in the order sent, from offset 0 (fresh topics), as long as every
    send was acknowledged (``probe`` checks that)."""
    keys, ts = produced["key"].tolist(), (produced["ts"].astype(np.int64) + start).tolist()
    seqs: List[list] = [[] for _ in range(partitions)]
    for seq, key in enumerate(keys):
        seqs[key % partitions].append(seq)
    names = [KEY.format(k) for k in range(max(keys, default=-1) + 1)]  # one string per key, not per record
    rows = [[(names[keys[i]], ts[i], i) for i in part] for part in seqs]
    return rows, seqs


def spark_batch_ends(log_path: str, checkpoint: str, topic: str, partitions: int) -> List[List[int]]:
    """Each micro-batch's end offset per partition: from the job's ``PROGRESS`` lines, and for the batches it had
    no time to report before it was stopped, from the checkpoint's offset log (Spark keeps its latest entries).
    Raises if a batch is in neither."""
    ends: Dict[int, List[int]] = {}

    def of(offsets: Any) -> Optional[List[int]]:
        if not isinstance(offsets, dict) or topic not in offsets:
            return None
        return [int(offsets[topic].get(str(p), 0)) for p in range(partitions)]

    with open(log_path, errors="replace") as fh:
        for line in fh:
            if line.startswith("PROGRESS "):
                p = json.loads(line[len("PROGRESS ") :])
                end = of(p.get("endOffset"))
                if end is not None:
                    ends[p["batchId"]] = end
    log_dir = os.path.join(checkpoint, "offsets")
    for name in os.listdir(log_dir) if os.path.isdir(log_dir) else []:
        if name.isdigit() and int(name) not in ends:
            with open(os.path.join(log_dir, name), errors="replace") as fh:
                for line in fh:  # a version line, the batch's metadata, then one line per source
                    try:
                        end = of(json.loads(line))
                    except ValueError:
                        continue
                    if end is not None:
                        ends[int(name)] = end
    gaps = [b for b in range(max(ends, default=-1) + 1) if b not in ends]
    if gaps:
        raise ValueError(f"micro-batches {gaps[:5]} are in neither the log nor the checkpoint")
    return [ends[b] for b in range(len(ends))]


def rate_limit_check(
    system: str,
    produced: np.ndarray,
    start: int,
    results: np.ndarray,
    sus: Sustained,
    complete_by: Optional[int],
    batch_ends: Optional[List[List[int]]] = None,
) -> Dict[str, Any]:
    """The rate limiter's output against the exact reference for ``system``: Kafka Streams' from each partition's
    order alone; spark-suppress's from its micro-batches (``batch_ends``), with the order of the partitions within a
    batch, which Spark does not report, taken from whichever of the orders the output agrees with."""
    rows, seqs = input_partitions(produced, start, PARTITIONS)
    sent = produced["sent"].tolist()
    got = list(zip(results["key"].tolist(), results["a"].tolist()))
    if system == "kafka-streams":
        ref = checks.kafka_streams_rate_limit_reference(rows, sus.time_limit_ms, sus.max_records)
        expected = [(int(key[1:]), value, sent[seqs[p][i]]) for p, i, key, _, value in ref]
        return checks.check_rate_limited_stream(expected, got, complete_by)
    if batch_ends is None:
        raise ValueError("spark-suppress's reference needs its micro-batches")
    beyond = [(b, p) for b, ends in enumerate(batch_ends) for p, e in enumerate(ends) if e > len(seqs[p])]
    if beyond:
        return {"ok": False, "input_unknown": f"micro-batches read past what was produced: {beyond[:5]}"}
    # A batch's rows are let out by what it and the batches before read: the last of it was sent at this time.
    batch_sent: List[Optional[int]] = []
    latest: Optional[int] = None
    for ends in batch_ends:
        for p, e in enumerate(ends):
            if e > 0:
                latest = max(sent[seqs[p][e - 1]], latest if latest is not None else -1)
        batch_sent.append(latest)

    def check(order: Sequence[int], by_position: bool = False) -> Dict[str, Any]:
        ref = checks.spark_rate_limit_reference(
            rows,
            batch_ends,
            order,
            sus.time_limit_ms,
            sus.max_records,
            ks.WATERMARK_DELAY_MS,
            checks.library_shard(PARTITIONS),
            by_position,
        )
        expected = [(int(key[1:]), value, batch_sent[b]) for b, key, _, value in ref]
        return checks.check_rate_limited_stream(expected, got, complete_by)

    orders = list(itertools.permutations(range(PARTITIONS)))
    tried = []
    for order in orders:
        tried.append(check(order))
        tried[-1]["partition_order"] = list(order)
        if tried[-1]["ok"]:
            break
    best = min(tried, key=lambda c: c["unexpected"] + c["skipped"] + c["missing"] + c["out_of_order"])
    best["orders_tried"], best["micro_batches_checked"] = len(tried), len(batch_ends)
    if not best["ok"]:
        # Where the arrival numbers lose their input partition, a shard applies rows by position: say so.
        best["agrees_by_position_ties_in"] = next((list(o) for o in orders if check(o, True)["ok"]), None)
    return best


def _wait_started(process: subprocess.Popen, log_path: str, seconds: int = 300) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"exited with {process.returncode}:\n{open(log_path).read()[-3000:]}")
        with open(log_path, errors="replace") as fh:
            if any(line.startswith("STARTED ") for line in fh):
                return
        time.sleep(0.5)
    raise RuntimeError(f"did not start within {seconds} s:\n{open(log_path).read()[-3000:]}")


class Primer:
    """Tells the driver to start the load (a line on its standard input) once the driver has sent its priming
    records (its ``PRIMED`` line) and the system has processed them all (``positions``); raises if that takes
    longer than ``timeout_s``. ``primed_s``: from the priming records' send to the go."""

    def __init__(self, driver_log: str, system_log: str, system: str, records: int, timeout_s: int):
        self.driver_log, self.system_log, self.system = driver_log, system_log, system
        self.records, self.deadline = records, time.monotonic() + timeout_s
        self.sent_ms: Optional[int] = None
        self.primed_s: Optional[float] = None

    def __call__(self, driver: subprocess.Popen) -> None:
        if self.primed_s is not None:
            return
        if self.sent_ms is None:
            with open(self.driver_log, errors="replace") as fh:
                self.sent_ms = next((int(line.split()[1]) for line in fh if line.startswith("PRIMED ")), None)
        done = positions(self.system_log, self.system) if self.sent_ms is not None else []
        if done and done[-1][1] >= self.records:
            driver.stdin.write("go\n")
            driver.stdin.flush()
            self.primed_s = round((time.time() * 1000 - self.sent_ms) / 1000, 2)
        elif time.monotonic() > self.deadline:
            raise RuntimeError(
                f"{self.system} had not processed the {self.records:,} priming records "
                f"({done[-1][1] if done else 0:,} done) when the priming timed out; see {self.system_log}"
            )


def acked_sends(driver_output: str) -> List[Tuple[int, int]]:
    """(wall ms, records acknowledged by then) from the driver's ``ACKED`` lines."""
    return [(int(a), int(b)) for _, a, b in (s.split() for s in driver_output.splitlines() if s.startswith("ACKED "))]


def lag_settled(
    acked: Sequence[Tuple[int, int]], processed: Sequence[Tuple[int, int]], now_ms: int, rate: float, sus: Sustained
) -> bool:
    """Whether the system has worked off the backlog of the load's start, judged on the lag over the last
    ``settle_s`` before ``now_ms`` (wall ms): it no longer falls (its regression slope is above minus
    ``max_lag_slope`` of the rate, the bound the measurement puts on a rising one) and stayed under ``settle_lag_s``
    of input. A slope alone is not enough: a lag still well above its level can pause for a few seconds. A rising
    lag is not settled either: near its limit a system's lag can rise for a while and then fall back, so a system
    that cannot keep up gets the longest warm-up before the measurement says so."""
    grid = np.arange(now_ms - sus.settle_s * 1000, now_ms + 1, 250, dtype=np.int64)
    lag = _step(acked, grid) - _step(processed, grid)
    slope = float(np.polyfit((grid - grid[0]) / 1000, lag, 1)[0])
    return slope > -sus.max_lag_slope * rate and lag.max() <= sus.settle_lag_s * rate


class Settler:
    """Ends the warm-up: once the load has run ``warmup_s`` (counted from the ``go`` of ``primer``) and the lag has
    settled (``lag_settled``, from the logs ``primer`` reads), tells the driver to begin the measurement (a second
    line on its standard input). The driver begins it by itself after ``warmup_max_s``. With ``stop_early``, once
    the measurement has begun (the driver's ``MEASURING`` line), it tells the driver to stop (a third line) as soon
    as the lag has exceeded its bound (``lag_exceeded``): the rate has failed, and the rest of the minute, the
    drain and the checks over them would only cost time. ``clock`` (seconds) and ``wall_ms`` are the time's
    sources, which a test replaces."""

    def __init__(
        self,
        primer: "Primer",
        rate: float,
        sus: Sustained,
        stop_early: bool = False,
        clock: Callable[[], float] = time.monotonic,
        wall_ms: Callable[[], int] = lambda: int(time.time() * 1000),
    ):
        self.primer, self.rate, self.sus, self.stop_early = primer, rate, sus, stop_early
        self.clock, self.wall_ms = clock, wall_ms
        self.go: Optional[float] = None
        self.told = False
        self.stopped = False

    def __call__(self, driver: subprocess.Popen) -> None:
        if self.stopped or (self.told and not self.stop_early):
            return
        if self.primer.primed_s is None:
            self.primer(driver)
            if self.primer.primed_s is not None:
                self.go = self.clock()
            return
        if self.go is None or self.clock() - self.go < self.sus.warmup_s:
            return
        with open(self.primer.driver_log, errors="replace") as fh:
            text = fh.read()
        acked = acked_sends(text)
        done = positions(self.primer.system_log, self.primer.system)
        if not self.told and lag_settled(acked, done, self.wall_ms(), self.rate, self.sus):
            self._say(driver, "measure")
            self.told = True
            return
        measuring = next((int(s.split()[1]) for s in text.splitlines() if s.startswith("MEASURING ")), None)
        if self.stop_early and measuring is not None:
            until = self.wall_ms() - LOG_DELAY_MS
            if lag_exceeded(acked, done, measuring, until, self.rate, self.sus) is not None:
                # The driver reads its lines in order: one that began measuring by itself still takes the second.
                self._say(driver, "stop" if self.told else "measure\nstop")
                self.told = self.stopped = True

    @staticmethod
    def _say(driver: subprocess.Popen, lines: str) -> None:
        driver.stdin.write(lines + "\n")
        driver.stdin.flush()


def probe(env: Env, system: str, job: str, rate: int, trigger: str = "default", latency_run: bool = False):
    """One system at one offered rate: its lag, its check and (final results) its latencies."""
    sus = env.sus
    env.probes += 1
    run_dir = os.path.join(env.work, f"{env.probes:03d}-{system}-{job}-{rate}")
    os.makedirs(run_dir)
    topic_in, topic_out = f"in-{env.probes}", f"out-{env.probes}"
    driver = ks._java() + ["-cp", env.cp, "io.github.sparksuppress.bench.kafka.KafkaDriver"]
    made = subprocess.run(
        driver + ["topics", env.bootstrap, str(PARTITIONS), topic_in, topic_out],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if made.returncode != 0:
        raise RuntimeError(f"creating topics failed:\n{made.stdout[-2000:]}{made.stderr[-2000:]}")
    process = ks._start(
        system,
        env.root,
        env.cp,
        env.jars,
        env.bootstrap,
        topic_in,
        topic_out,
        run_dir,
        env.window_ms,
        False,
        extra=_system_args(system, job, trigger, sus),
        prefix=env.prefix,
    )
    system_log = os.path.join(run_dir, f"{system}.log")
    produced_path, results_path = os.path.join(run_dir, "produced.bin"), os.path.join(run_dir, "results.bin")
    try:
        _wait_started(process, system_log)
        # Built once the system has started, so that its timeout counts the priming alone.
        primer = Primer(os.path.join(run_dir, "driver.log"), system_log, system, sus.prime_records, sus.prime_timeout_s)
        # A latency run measures its whole minute; a throughput probe ends once its rate has failed.
        settler = Settler(primer, rate, sus, stop_early=not latency_run)
        stdout, returncode = ks._drive(
            driver
            + [
                "paced",
                env.bootstrap,
                topic_in,
                topic_out,
                str(PARTITIONS),
                str(rate),
                str(sus.keys),
                str(sus.disorder_ms),
                str(sus.prime_records),
                str(sus.ramp_s),
                str(sus.warmup_max_s),
                str(sus.measure_s + sus.tail_s),
                str(sus.drain_s),
                produced_path,
                results_path,
            ],
            process,
            run_dir,
            system,
            settler,
        )
    finally:
        ks._stop(process)
    lines = [s for s in stdout.splitlines() if s.startswith("RESULT ")]
    if returncode != 0 or not lines:
        raise RuntimeError(f"the driver failed for {system}:\n{stdout[-3000:]}")
    driven = json.loads(lines[-1][len("RESULT ") :])
    start, load = driven["start_ms"], driven["load_ms"]
    acked = acked_sends(stdout)
    # Relative to the driver's start, as its files are: the load began after the priming, the measurement after
    # the warm-up.
    measure_from = driven["measure_ms"]
    measure_to = measure_from + sus.measure_s * 1000
    stopped = driven.get("stopped_ms", -1)
    if stopped >= 0:
        measure_to = min(measure_to, stopped)
    out: Dict[str, Any] = {"system": system, "job": job, "rate": rate, "trigger": trigger}
    out["primed_s"] = primer.primed_s
    out["warmed_s"] = round((measure_from - load) / 1000, 1)
    # Seconds into the measurement at which the lag had exceeded its bound and the probe was stopped, or None.
    out["stopped_s"] = round((stopped - measure_from) / 1000, 1) if stopped >= 0 else None
    verdict = lag_verdict(acked, positions(system_log, system), start + measure_from, start + measure_to, rate, sus)
    out.update(stopped_verdict(verdict, stopped >= 0, rate, sus))
    produced = np.fromfile(produced_path, dtype=PRODUCED)
    results = np.fromfile(results_path, dtype=RESULTS)
    # At a rate the system does not keep up with, results may still be on their way when the driver stops.
    complete_by = measure_to if (out["sustained"] or latency_run) else None
    if job == "final_results":
        reference = checks.windowed_counts_reference(
            produced["key"],
            produced["ts"].astype(np.int64) + start,
            produced["sent"],
            PARTITIONS,
            env.window_ms,
            sus.grace_ms,
        )
        # The reference's window starts are absolute; the results' too. Close times are relative, as consumed.
        out["check"] = checks.check_streamed_final_results(
            reference, zip(results["key"].tolist(), results["a"].tolist(), results["b"].tolist()), complete_by
        )
        out["latency"] = latency(reference, results, measure_from, measure_to)
    elif driven["acked"] != driven["sent"] or driven["sent"] != len(produced):
        # A send that failed leaves a gap the driver's file does not show: the input is not known exactly.
        out["check"] = {"ok": False, "input_unknown": f"{driven['acked']:,} of {driven['sent']:,} sends acknowledged"}
    else:
        try:
            ends = None
            if system == "spark-suppress":
                ends = spark_batch_ends(system_log, os.path.join(run_dir, "checkpoint"), topic_in, PARTITIONS)
            out["check"] = rate_limit_check(system, produced, start, results, sus, complete_by, ends)
        except ValueError as e:  # the micro-batches are not known: no reference, a failed check, not a crash
            out["check"] = {"ok": False, "input_unknown": str(e)}
    out["produced"], out["results"] = int(len(produced)), int(len(results))
    if system == "spark-suppress":
        out["micro_batches"] = sum(1 for line in open(system_log, errors="replace") if line.startswith("PROGRESS "))
    lat = out.get("latency") or {}
    log(
        f"{system} {job} at {rate:,}/s (trigger {trigger}): "
        + ("sustained" if out["sustained"] else "not sustained: " + "; ".join(out["not_sustained_because"]))
        + (f" (stopped {out['stopped_s']} s into the measurement)" if out["stopped_s"] is not None else "")
        + f"; lag max {out['lag_max']:,}, slope {out['lag_slope_per_s']:,}/s"
        + (f"; latency p50 {lat['p50_ms']} ms p99 {lat['p99_ms']} ms" if lat.get("windows") else "")
        + f"; check {'ok' if out['check']['ok'] else 'FAILED'}"
    )
    discard(run_dir, out["check"]["ok"])
    env.done.append(dict(out, latency_run=latency_run))
    env.on_probe(env.done)
    return out


def discard(path: str, ok: bool) -> bool:
    """Removes a probe's files, or at the end the broker's (every probe's topics: about 30 GB after a full run), once
    their checks held; they stay for a look when one failed, and with BENCH_KEEP_RUNS. Whether they were removed."""
    if not ok or os.environ.get("BENCH_KEEP_RUNS"):
        return False
    shutil.rmtree(path, ignore_errors=True)
    return True


def search(run: Callable[[int], Dict[str, Any]], sus: Sustained) -> Tuple[int, List[Dict[str, Any]]]:
    """The highest sustained rate found: double from the start rate until one is not sustained, then bisect until
    the bounds are within the precision or the probes run out. 0 if none was sustained."""
    low: Optional[int] = None
    high: Optional[int] = None
    rate, probes = sus.start_rate, []
    for _ in range(sus.max_probes):
        probes.append(run(rate))
        if probes[-1]["sustained"]:
            low = rate
        else:
            high = rate
        if low is not None and high is not None and (high - low) / low <= sus.precision:
            break
        if high is None:
            rate *= 2
        elif low is None:
            rate = max(1, rate // 2)
        else:
            rate = (low + high) // 2
    return low or 0, probes


def design_seconds(sus: Sustained, start_up_s: int = 25) -> int:
    """How long a run takes by design, at most: every probe's load (the longest warm-up), tail and drain plus a
    start-up each (the system's start and its priming: about 15 s, and 4 to 7 s of priming for Spark), with the
    most probes the search allows per system and job, and the latency runs."""
    probe_s = sus.warmup_max_s + sus.measure_s + sus.tail_s + sus.drain_s + start_up_s
    latency_runs = len(sus.latency_loads) + len(sus.spark_triggers) + len(sus.latency_loads) - 1
    return probe_s * (sus.max_probes * len(SYSTEMS) * len(JOBS) + latency_runs)


def run(ctx: Context, root: str) -> Dict[str, Any]:
    sus = ctx.settings.kafka_sustained
    work = ctx.scratch(NAME)
    prefix, pinning, restore = _pin()
    systems: List[Dict[str, Any]] = []
    latencies: List[Dict[str, Any]] = []
    notes = []
    if ctx.settings.mode != "full":
        notes.append("quick run: each phase a few seconds at small rates, a smoke test; not to be published")
    if not pinning["pinned"]:
        notes.append(
            f"{pinning['cores']} cores: nothing pinned; the broker and the driver share the cores with the system "
            "under test, which lowers every figure"
        )
    try:
        with environment(root, work, os.path.dirname(ctx.data_dir), sus, ctx.settings.window_ms, prefix) as env:
            env.on_probe = lambda done: ctx.progress(NAME, {"title": TITLE, "probes": done})
            sustained: Dict[Tuple[str, str], int] = {}
            for job in JOBS:
                for system in SYSTEMS:
                    rate, probes = search(lambda r, s=system, j=job: probe(env, s, j, r), sus)
                    sustained[(system, job)] = rate
                    systems.append(
                        {
                            "system": system,
                            "job": job,
                            "role": "anchor" if system == "kafka-streams" else "library",
                            "sustained_records_per_s": rate,
                            "probes": probes,
                        }
                    )
                    log(f"{system} {job}: sustained {rate:,} records/s ({len(probes)} probes)")
            lower = min(sustained[(s, "final_results")] for s in SYSTEMS)
            if not lower and ctx.settings.mode != "full":
                # A smoke run still runs the latency phase, at the lowest rate probed.
                lower = min(p["rate"] for s in systems if s["job"] == "final_results" for p in s["probes"])
                notes.append(
                    f"a system sustained none of the rates probed: the latency runs are at shares of {lower:,} "
                    "records/s, the lowest rate probed"
                )
            if lower:
                middle = sorted(sus.latency_loads)[len(sus.latency_loads) // 2]
                at = {share: max(1, int(lower * share)) for share in sus.latency_loads}
                tried = [
                    probe(env, "spark-suppress", "final_results", at[middle], t, latency_run=True)
                    for t in sus.spark_triggers
                ]
                best = min(tried, key=lambda r: (r["latency"]["p50_ms"] is None, r["latency"]["p50_ms"] or 0))
                for share in sus.latency_loads:
                    for system in SYSTEMS:
                        if system == "spark-suppress" and share == middle:
                            r = best
                        else:
                            trigger = best["trigger"] if system == "spark-suppress" else "default"
                            r = probe(env, system, "final_results", at[share], trigger, latency_run=True)
                        latencies.append({"load_share": share, **r})
                latencies += [{"load_share": middle, "trigger_trial": True, **r} for r in tried if r is not best]
            else:
                notes.append("no latency runs: a system sustained none of the rates probed")
    finally:
        if restore:
            os.sched_setaffinity(0, restore)
    every = [p for s in systems for p in s["probes"]] + latencies
    failed = [
        {"system": p["system"], "job": p["job"], "rate": p["rate"], "trigger": p["trigger"], "check": p["check"]}
        for p in every
        if not p["check"]["ok"]
    ]
    discard(os.path.join(work, "broker"), not failed)
    by = {(s["system"], s["job"]): s["sustained_records_per_s"] for s in systems}
    targets = []
    for job in JOBS:
        if by.get(("kafka-streams", job)):
            targets.append(
                target(
                    f"sustained records/s over Kafka Streams' on the same cores ({job})",
                    by[("spark-suppress", job)] / by[("kafka-streams", job)],
                    ">=",
                    1.5,
                    "x",
                )
            )
    half = [
        r
        for r in latencies
        if r["load_share"] == 0.5 and r["system"] == "spark-suppress" and not r.get("trigger_trial")
    ]
    if half and half[0]["latency"]["p99_ms"] is not None:
        targets.append(
            target("final-result latency p99 at 50% load", half[0]["latency"]["p99_ms"] / 1000, "<=", 1.0, "s")
        )
    return {
        "title": TITLE,
        "params": {
            "partitions": PARTITIONS,
            "stream_threads": PARTITIONS,
            "spark_master": "local[2]",
            "window_ms": ctx.settings.window_ms,
            "spark_watermark_delay_ms": ks.WATERMARK_DELAY_MS,
            **{k: (list(v) if isinstance(v, tuple) else v) for k, v in sus.__dict__.items()},
            "design_seconds": design_seconds(sus),
            "broker": "Apache Kafka, KRaft, one node, loopback (reliability/local_kafka.py)",
            **pinning,
        },
        "versions": {"kafka-streams": jar_version(env.cp, "kafka-streams")},
        "systems": systems,
        "latency": latencies,
        "spark_trigger": next((r["trigger"] for r in half), None),
        "check": {"ok": not failed, "runs": len(every), "failed": failed},
        "targets": targets,
        "notes": notes,
    }
