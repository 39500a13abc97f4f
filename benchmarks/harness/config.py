"""Sizes of every benchmark, for a full run and for the quick smoke run, in one place."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple


@dataclass(frozen=True)
class EventShape:
    """How a generated event set looks: see events.py."""

    records: int
    keys: int
    records_per_file: int
    records_per_second: int = 10_000  # of event time
    disorder_ms: int = 2_000
    seed: int = 42


@dataclass(frozen=True)
class Sustained:
    """The sustained-load comparison with Kafka Streams (harness/kafka_sustained.py, benchmarks/README.md 11).

    A probe runs one system at one offered rate: ``prime_records`` sent at once, which the system must have
    processed before the load starts (its cold start, for Spark planning and a first micro-batch, is then behind
    it; it has ``prime_timeout_s``), then a warm-up of load, its first ``ramp_s`` rising evenly from nothing to
    the rate, which lasts at least ``warmup_s`` and then until the system's lag over the last ``settle_s`` has
    stopped falling and stayed under ``settle_lag_s`` of input (``warmup_max_s`` at most), then
    ``measure_s`` of load, ``tail_s`` more so that the windows closing at the end of the measurement are followed
    by input, then ``drain_s`` of consuming without load. The throughput search starts at ``start_rate``, doubles
    until a rate is not sustained, then bisects until the bounds are within ``precision`` (or ``max_probes``
    probes per system and job)."""

    prime_records: int = 1_000
    prime_timeout_s: int = 300
    # A fixed 30 s warm-up from a step to the full rate did not always absorb the backlog both systems built (the
    # JIT compiling under load, Spark's micro-batches growing before they settle): near their limits, probes
    # failed on a lag still falling from it, and Spark's latencies counted it (benchmarks/README.md, 11).
    warmup_s: int = 30
    warmup_max_s: int = 90
    settle_s: int = 15
    settle_lag_s: float = 1.0
    ramp_s: int = 15
    measure_s: int = 60
    tail_s: int = 5
    drain_s: int = 15
    start_rate: int = 50_000
    max_probes: int = 8
    precision: float = 0.05
    keys: int = 10_000
    disorder_ms: int = 2_000
    # Sustained: the lag's regression slope over the measurement under this share of the rate (records/s per s)
    # and its largest value under this many seconds of input.
    max_lag_slope: float = 0.01
    max_lag_seconds: float = 5.0
    min_offered_share: float = 0.95  # the driver must have got this share of the rate into the topic
    latency_loads: Tuple[float, ...] = (0.25, 0.5, 0.75)
    # Spark's triggers tried at the middle load; the one with the lowest p50 runs the other loads.
    spark_triggers: Tuple[str, ...] = ("default", "100 milliseconds", "500 milliseconds")
    grace_ms: int = 2_000
    time_limit_ms: int = 5_000
    max_records: int = 1_000

    def __post_init__(self) -> None:
        if not 0 <= self.ramp_s <= self.warmup_s <= self.warmup_max_s or not 0 < self.settle_s <= self.warmup_s:
            raise ValueError(
                "the warm-up needs 0 <= ramp_s <= warmup_s <= warmup_max_s and 0 < settle_s <= warmup_s, got "
                f"ramp_s={self.ramp_s}, warmup_s={self.warmup_s}, warmup_max_s={self.warmup_max_s}, "
                f"settle_s={self.settle_s}"
            )


@dataclass(frozen=True)
class Settings:
    mode: str
    # How often each Spark system is measured (the median counts); applyInPandasWithState runs are slow, so they
    # are measured fewer times.
    repeats: int
    pandas_repeats: int
    # A small run of every system before the measured ones, so JIT compilation and class loading are not timed
    # (None: no warm-up, for smoke runs).
    warmup: Optional[EventShape]
    final_results: EventShape
    window_ms: int
    rate_limit: EventShape
    rate_limit_time_limit_ms: int
    rate_limit_max_records: int
    scaling_records: List[int]
    scaling_keys: List[int]
    scaling_fixed_keys: int
    scaling_fixed_records: int
    scaling_records_per_file: int
    suppress_time_limit_ms: int
    join: EventShape
    join_graces_ms: List[int]
    join_history_retention_ms: int
    join_table_version_interval_ms: int
    # Hopping, session and sliding windows: a quarter of the records of final_results, since Spark's hopping windows
    # expand each record ten times and the sliding windows' pandas job is slow; halved again to make room for the
    # chains benchmark in the full run's 45 minutes (see benchmarks/README.md's budget).
    window_kinds: EventShape
    # PySpark's three stateful APIs: transformWithStateInPandas makes a call to the JVM per state access, so its
    # full-run set is smaller than final_results' (the targets compare systems on the same set).
    python_stateful: EventShape
    # Its rate-limiting job's set: the rule's target is ours above the floor against theirs above it, and over two
    # micro-batches ours was 0.09 s above a floor whose own runs spread 0.15 s; ten micro-batches measure it.
    python_stateful_rate_limit: EventShape
    # A chain join -> windowed aggregation -> suppress in one query against three queries through Parquet (the
    # join's table changelog is the join benchmark's, at its version interval and history retention).
    chains: EventShape
    chains_grace_ms: int
    # State far larger than memory's comfort, on RocksDB: a fixed number of records over growing key counts, ten
    # times the event rate of the other sets so that a 10-second window holds about a million records.
    large_state_records: int
    large_state_keys: List[int]
    large_state_records_per_file: int
    large_state_records_per_second: int
    large_state_repeats: int
    # Kafka end to end: runs per system (each a cold start of a JVM).
    kafka_repeats: int
    # JMH: forks, warm-up iterations, measured iterations, time per iteration, buffer size, trace sizes.
    jmh: Dict[str, object] = field(default_factory=dict)
    kafka_sustained: Sustained = field(default_factory=Sustained)

    def scaling_points(self) -> List[Tuple[int, int]]:
        """(records, keys) of every scaling run: records grow at fixed keys, then keys grow at fixed records."""
        points = [(r, self.scaling_fixed_keys) for r in self.scaling_records]
        points += [(self.scaling_fixed_records, k) for k in self.scaling_keys]
        seen, unique = set(), []
        for p in points:
            if p not in seen:
                seen.add(p)
                unique.append(p)
        return unique


FULL = Settings(
    mode="full",
    # 5, not 3: the runs of one system on one day spread by +-10% (the JIT still at work in the first runs of some
    # plans), as much as some targets' margins; a median of 5 moves less from run to run.
    repeats=5,
    pandas_repeats=1,
    warmup=EventShape(records=200_000, keys=10_000, records_per_file=100_000, seed=7),
    final_results=EventShape(records=2_000_000, keys=10_000, records_per_file=100_000),
    window_ms=10_000,
    rate_limit=EventShape(records=2_000_000, keys=10_000, records_per_file=100_000),
    rate_limit_time_limit_ms=5_000,
    rate_limit_max_records=1_000,
    scaling_records=[100_000, 1_000_000, 10_000_000],
    scaling_keys=[1_000, 10_000, 100_000, 1_000_000],
    scaling_fixed_keys=10_000,
    scaling_fixed_records=1_000_000,
    scaling_records_per_file=100_000,
    suppress_time_limit_ms=30_000,
    join=EventShape(records=1_000_000, keys=10_000, records_per_file=100_000),
    join_graces_ms=[0, 1_000, 5_000, 20_000],
    join_history_retention_ms=300_000,
    join_table_version_interval_ms=60_000,
    window_kinds=EventShape(records=500_000, keys=10_000, records_per_file=100_000),
    python_stateful=EventShape(records=100_000, keys=10_000, records_per_file=50_000),
    python_stateful_rate_limit=EventShape(records=1_000_000, keys=10_000, records_per_file=100_000),
    chains=EventShape(records=1_000_000, keys=10_000, records_per_file=100_000),
    chains_grace_ms=2_000,
    large_state_records=10_000_000,
    large_state_keys=[10_000, 1_000_000],
    large_state_records_per_file=1_000_000,
    large_state_records_per_second=100_000,
    large_state_repeats=3,  # the two systems are within 5% of the 0.8 target, and Spark's run varies by as much
    kafka_repeats=3,  # the two systems are within run-to-run spread of each other: a median of 3
    # Evictions get their own longer run: each measured eviction needs an untimed refill of the buffer, so a
    # 1 s iteration holds only ~10 of them, and Kafka's buffer (which allocates while it evicts) has young
    # collections land inside some of them; 4 forks x 10 iterations narrow its interval from about +-25% to +-9%.
    jmh={
        "forks": 2,
        "warmup_iterations": 5,
        "iterations": 5,
        "iteration_time": "1s",
        "size": 100_000,
        "records": 200_000,
        "distinct_keys": 50_000,
        "time_limit_ms": 5_000,
        "max_records": 20_000,
        "evict_forks": 4,
        "evict_iterations": 10,
    },
)

QUICK = Settings(
    mode="quick",
    repeats=1,
    pandas_repeats=1,
    warmup=None,
    final_results=EventShape(records=20_000, keys=1_000, records_per_file=10_000),
    window_ms=10_000,
    rate_limit=EventShape(records=20_000, keys=1_000, records_per_file=10_000),
    rate_limit_time_limit_ms=5_000,
    rate_limit_max_records=100,
    scaling_records=[10_000, 40_000],
    scaling_keys=[100, 1_000],
    scaling_fixed_keys=1_000,
    scaling_fixed_records=10_000,
    scaling_records_per_file=10_000,
    suppress_time_limit_ms=30_000,
    join=EventShape(records=20_000, keys=1_000, records_per_file=10_000),
    join_graces_ms=[0, 5_000],
    join_history_retention_ms=300_000,
    join_table_version_interval_ms=60_000,
    # One data micro-batch each: in a smoke run the per-batch overheads are all the time there is.
    window_kinds=EventShape(records=20_000, keys=1_000, records_per_file=20_000),
    python_stateful=EventShape(records=20_000, keys=1_000, records_per_file=20_000),
    python_stateful_rate_limit=EventShape(records=20_000, keys=1_000, records_per_file=10_000),
    chains=EventShape(records=20_000, keys=1_000, records_per_file=10_000),
    chains_grace_ms=2_000,
    large_state_records=20_000,
    large_state_keys=[100, 10_000],
    large_state_records_per_file=10_000,
    large_state_records_per_second=100_000,
    large_state_repeats=1,
    kafka_repeats=1,
    jmh={
        "forks": 1,
        "warmup_iterations": 1,
        "iterations": 2,
        "iteration_time": "200ms",
        "size": 10_000,
        "records": 50_000,
        "distinct_keys": 5_000,
        "time_limit_ms": 5_000,
        "max_records": 2_000,
        "evict_forks": 1,
        "evict_iterations": 2,
    },
    # Each phase briefly, at rates any machine keeps up with: a smoke test of the harness, not a measurement.
    kafka_sustained=Sustained(
        warmup_s=10,
        warmup_max_s=20,
        settle_s=5,
        ramp_s=5,
        measure_s=10,
        tail_s=3,
        drain_s=8,
        start_rate=1_000,
        max_probes=2,
        keys=1_000,
        spark_triggers=("default", "500 milliseconds"),
        max_records=100,
    ),
)
