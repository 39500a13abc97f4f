"""Measuring several systems on the same input, and the result records every benchmark writes."""

from __future__ import annotations

import os
import statistics
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional

from . import profile
from .streaming import QueryRun, run_query


@dataclass(frozen=True)
class System:
    """One way of computing a benchmark's result. ``role`` is ``anchor`` (Spark's built-in operator), ``floor``
    (no state at all), ``library`` (spark-suppress), ``python`` (applyInPandasWithState) or ``reference`` (a
    hand-written JVM job, ``jvm_jobs``)."""

    name: str
    label: str
    role: str
    build: Callable[[str], Any]  # input directory -> streaming DataFrame
    output_mode: str = "append"
    slow: bool = False  # measured pandas_repeats times instead of repeats
    # Session settings for this system's queries only (e.g. the RocksDB state store that transformWithState
    # requires): a query fixes them when it starts, so the other systems keep the session's defaults.
    conf: Dict[str, str] = field(default_factory=dict)
    # Floors only: run as foreachBatch, writing this function of each micro-batch (floors.py), with no state.
    per_batch: Optional[Callable[[Any], Any]] = None


def median_index(seconds: List[float]) -> int:
    """The index of the median time (the lower middle one for an even number of runs): the run whose breakdown
    explains a median reported."""
    order = sorted(range(len(seconds)), key=lambda i: seconds[i])
    return order[(len(order) - 1) // 2]


@dataclass
class Measured:
    system: System
    records: int
    runs: List[QueryRun]

    @property
    def seconds(self) -> float:
        return statistics.median(r.seconds for r in self.runs)

    @property
    def last(self) -> QueryRun:
        return self.runs[-1]

    @property
    def median_index(self) -> int:
        """The run whose time is the median: its breakdown explains the ``seconds`` reported."""
        return median_index([r.seconds for r in self.runs])

    def record(self) -> Dict[str, Any]:
        return {
            "system": self.system.name,
            "label": self.system.label,
            "role": self.system.role,
            "records": self.records,
            "seconds": round(self.seconds, 3),
            "records_per_s": round(self.records / self.seconds, 1),
            "runs": [r.summary() for r in self.runs],
            "breakdown_run": self.median_index,
            "breakdown": self.runs[self.median_index].breakdown,
        }


@contextmanager
def session_conf(spark, conf: Dict[str, str]) -> Iterator[None]:
    """``conf`` set on the session while the block runs, the previous values restored after."""
    before = {k: spark.conf.get(k, None) for k in conf}
    for k, v in conf.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


def run_system(s: System, input_dir: str, run_dir: str, records: int, **kwargs) -> QueryRun:
    df = s.build(input_dir)
    with session_conf(df.sparkSession, s.conf):
        return run_query(df, run_dir, records, s.output_mode, per_batch=s.per_batch, **kwargs)


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def measure(
    systems: List[System],
    input_dir: str,
    records: int,
    work_dir: str,
    repeats: int,
    slow_repeats: int,
    warmup: Optional[tuple] = None,
    keep_output: bool = False,
    event_log: Optional[profile.EventLog] = None,
) -> Dict[str, Measured]:
    """Runs every system ``repeats`` times (``slow_repeats`` for slow ones) on ``input_dir``, round robin so that a
    noisy moment does not hit one system only; ``warmup`` = (directory, records) runs each once first, untimed.
    With ``keep_output`` the last run of each system keeps its output for checking. With ``event_log`` every
    measured run gets its stage breakdown; the median run's is logged."""
    if warmup is not None:
        for s in systems:
            log(f"warm-up: {s.name}")
            run_system(s, warmup[0], os.path.join(work_dir, "warmup", s.name), warmup[1])
    measured = {s.name: Measured(s, records, []) for s in systems}
    rounds = max(repeats, slow_repeats)
    for r in range(rounds):
        for s in systems:
            wanted = slow_repeats if s.slow else repeats
            if r >= wanted:
                continue
            run = run_system(
                s,
                input_dir,
                os.path.join(work_dir, s.name),
                records,
                keep_output=keep_output and r == wanted - 1,
                event_log=event_log,
            )
            measured[s.name].runs.append(run)
            log(f"{s.name} run {r + 1}/{wanted}: {run.seconds:.2f} s, {records / run.seconds:,.0f} records/s")
    for m in measured.values():
        log_breakdown(m.system.name, m.runs[m.median_index])
    return measured


def log_breakdown(name: str, run: QueryRun) -> None:
    if run.breakdown:
        text = profile.describe(run.breakdown).replace("\n", "\n    ")
        log(f"where the time of {name} went ({run.seconds:.2f} s wall; seconds summed over batches/tasks):\n    {text}")


def add_ratios(records: List[Dict[str, Any]], anchor: Optional[str], floor: Optional[str]) -> None:
    """Adds each system's time ratio (its seconds / the other's seconds; below 1 is faster) to the anchor and to
    the floor, and the speed-up over the anchor."""
    by_name = {r["system"]: r for r in records}
    for r in records:
        if anchor is not None and anchor in by_name:
            r["time_ratio_to_anchor"] = round(r["seconds"] / by_name[anchor]["seconds"], 4)
        if floor is not None and floor in by_name:
            r["time_ratio_to_floor"] = round(r["seconds"] / by_name[floor]["seconds"], 4)


def target(name: str, value: float, comparison: str, threshold: float, unit: str = "") -> Dict[str, Any]:
    """A target and whether this run met it; ``missed_by`` says how far off it is as a factor (value/threshold for
    an upper bound, threshold/value for a lower bound; above 1 means missed)."""
    if comparison in ("<=", "<"):
        met = value <= threshold if comparison == "<=" else value < threshold
        factor = value / threshold
    elif comparison == ">=":
        met, factor = value >= threshold, threshold / value if value else float("inf")
    else:
        raise ValueError(f"comparison must be '<=', '<' or '>=', got {comparison!r}")
    return {
        "target": name,
        "value": round(value, 4),
        "comparison": comparison,
        "threshold": threshold,
        "unit": unit,
        "met": met,
        "missed_by": None if met else round(factor, 3),
    }
