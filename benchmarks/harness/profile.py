"""Where a streaming query's time goes, from Spark itself: its event log and its progress reports.

The benchmark session writes Spark's event log (uncompressed JSON lines, one file per application). After a
query has run, ``EventLog.breakdown(run_id)`` reads the log up to that run's ``QueryTerminatedEvent`` and sums,
over its micro-batches:

- per group of stages, ``map`` (the stages whose tasks write a shuffle: reading, the map side, the shuffle write)
  and ``result`` (the stages after the last shuffle: state, emission and the sink): the tasks' run, CPU, GC and
  deserialization time, the shuffle written, and Spark's SQL metrics of the plan's operators (``time to update``,
  ``time to commit changes``, ``time in aggregation build``, ``shuffle write time``, rows...), each named by
  its operator;
- nothing else: jobs are attributed to a run by their job group, which Spark sets to the query's run id, so the
  runs before (warm-ups) and other jobs (result checks, the state data source) are skipped.

The micro-batch phases (``addBatch``, ``walCommit``, ``queryPlanning``...) come from the query's progress
reports (``phases``), which need no event log.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter, defaultdict, deque
from typing import Any, Dict, Iterable, List, Optional

QUERY_TERMINATED = "org.apache.spark.sql.streaming.StreamingQueryListener$QueryTerminatedEvent"
SQL_EXECUTION_START = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"
# The phases of a micro-batch as StreamingQueryProgress.durationMs names them; triggerExecution is the whole batch.
PHASES = (
    "addBatch",
    "queryPlanning",
    "walCommit",
    "commitOffsets",
    "latestOffset",
    "getBatch",
    "setOffsetRange",
    "getOffset",
    "getEndOffset",
)
# SQL metric types (SQLMetrics) whose values can be summed over tasks and batches, and their unit in the breakdown.
_SUMMABLE = {"timing": ("ms", 1.0), "nsTiming": ("ms", 1e-6), "sum": ("", 1.0)}
TOP_OPERATOR_METRICS = 12  # the largest timing metrics printed per stage group


def phases(progress: Iterable[Dict[str, Any]]) -> Dict[str, int]:
    """The durations of a run's micro-batches by phase, summed (ms); ``other`` is the part of triggerExecution
    that no phase names (the sink's commit and the progress report itself, among others)."""
    total: Counter = Counter()
    for p in progress:
        for k, v in (p.get("durationMs") or {}).items():
            total[k] += int(v)
    out = {"triggerExecution": total.get("triggerExecution", 0)}
    out.update({k: total[k] for k in PHASES if total.get(k)})
    out["other"] = out["triggerExecution"] - sum(total[k] for k in PHASES)
    return out


def _metric_names(plan: Dict[str, Any]) -> Dict[int, tuple]:
    """accumulator id -> (operator, metric name, metric type) for one SQL execution's plan. Operators that occur
    more than once in a plan (several HashAggregates) are numbered in the order data flows, from the scan up."""
    nodes: List[Dict[str, Any]] = []

    def post_order(node):
        for child in node.get("children") or []:
            post_order(child)
        nodes.append(node)

    post_order(plan)
    counts = Counter(n["nodeName"].strip() for n in nodes)
    seen: Counter = Counter()
    out = {}
    for n in nodes:
        name = n["nodeName"].strip()
        seen[name] += 1
        label = f"{name} #{seen[name]}" if counts[name] > 1 else name
        for m in n.get("metrics") or []:
            out[int(m["accumulatorId"])] = (label, m["name"], m["metricType"])
    return out


def _new_group() -> Dict[str, Any]:
    return {
        "stages": 0,
        "tasks": 0,
        "stage_wall_ms": 0,
        "task_run_ms": 0,
        "task_cpu_ms": 0.0,
        "gc_ms": 0,
        "deserialize_ms": 0,
        "shuffle_write_ms": 0.0,
        "shuffle_records_written": 0,
        "shuffle_bytes_written": 0,
        "shuffle_records_read": 0,
        "fetch_wait_ms": 0,
        "operators": Counter(),
    }


class _Run:
    """What the event log says about one query run, accumulated line by line."""

    def __init__(self) -> None:
        self.jobs = 0
        self.stages: Dict[int, str] = {}  # stage id -> "map" or "result", known from the tasks' type
        self.job_stages: set = set()
        self.metrics: Dict[int, tuple] = {}
        self.groups: Dict[str, Dict[str, Any]] = defaultdict(_new_group)
        self.stage_wall: Dict[int, int] = {}

    def task_end(self, e: Dict[str, Any]) -> None:
        group_name = "map" if e.get("Task Type") == "ShuffleMapTask" else "result"
        stage = int(e["Stage ID"])
        g = self.groups[group_name]
        if stage not in self.stages:
            self.stages[stage] = group_name
            g["stages"] += 1
        g["tasks"] += 1
        m = e.get("Task Metrics") or {}
        g["task_run_ms"] += m.get("Executor Run Time", 0)
        g["task_cpu_ms"] += m.get("Executor CPU Time", 0) / 1e6
        g["gc_ms"] += m.get("JVM GC Time", 0)
        g["deserialize_ms"] += m.get("Executor Deserialize Time", 0)
        w = m.get("Shuffle Write Metrics") or {}
        g["shuffle_write_ms"] += w.get("Shuffle Write Time", 0) / 1e6
        g["shuffle_records_written"] += w.get("Shuffle Records Written", 0)
        g["shuffle_bytes_written"] += w.get("Shuffle Bytes Written", 0)
        r = m.get("Shuffle Read Metrics") or {}
        g["shuffle_records_read"] += r.get("Total Records Read", 0)
        g["fetch_wait_ms"] += r.get("Fetch Wait Time", 0)
        for a in (e.get("Task Info") or {}).get("Accumulables") or []:
            known = self.metrics.get(int(a.get("ID", -1)))
            if known is None:  # Spark's internal task metrics (above) and accumulators that are not SQL metrics
                continue
            operator, name, kind = known
            unit, scale = _SUMMABLE.get(kind, (None, 0.0))
            if unit is None:  # sizes and averages do not add up over tasks and batches
                continue
            try:
                value = float(a.get("Update", 0)) * scale
            except (TypeError, ValueError):
                continue
            g["operators"][f"{operator}: {name}{' (' + unit + ')' if unit else ''}"] += value

    def summary(self) -> Dict[str, Any]:
        for stage, wall in self.stage_wall.items():
            if stage in self.stages:
                self.groups[self.stages[stage]]["stage_wall_ms"] += wall
        out: Dict[str, Any] = {"jobs": self.jobs}
        for name in ("map", "result"):
            if name not in self.groups:
                continue
            g = dict(self.groups[name])
            ops = g.pop("operators")
            for k in ("task_cpu_ms", "shuffle_write_ms"):
                g[k] = round(g[k])
            # Timings largest first; row counts after them, zero metrics dropped, so the record stays small.
            timings = sorted(
                ((k, round(v)) for k, v in ops.items() if k.endswith("(ms)") and round(v) > 0), key=lambda kv: -kv[1]
            )
            counts = sorted((k, int(v)) for k, v in ops.items() if not k.endswith("(ms)") and v > 0)
            g["operator_metrics"] = dict(timings + counts)
            out[name] = g
        return out


def event_log_conf(directory: str) -> Dict[str, str]:
    """The settings that make a Spark application write the event log :class:`EventLog` reads: one plain file of
    JSON lines in ``directory`` (Spark 4 rolls event logs into a directory of compressed files by default)."""
    return {
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": os.path.abspath(directory),
        "spark.eventLog.compress": "false",
        "spark.eventLog.rolling.enabled": "false",
    }


class EventLog:
    """Reads a running application's event log incrementally (only complete lines) and summarises query runs."""

    def __init__(self, path: str, timeout_s: float = 60.0) -> None:
        self.path = path
        self.timeout_s = timeout_s
        self._offset = 0
        self._partial = b""
        self._pending: deque = deque()  # lines read past the last run's end, for the next call

    @staticmethod
    def of(spark) -> Optional["EventLog"]:
        """The event log of ``spark``'s application, or None if the session does not write one."""
        conf = spark.sparkContext.getConf()
        if conf.get("spark.eventLog.enabled", "false") != "true":
            return None
        directory = conf.get("spark.eventLog.dir").replace("file://", "").replace("file:", "")
        # Without rolling and compression Spark writes <dir>/<app id>.inprogress until the application stops.
        return EventLog(os.path.join(directory, spark.sparkContext.applicationId + ".inprogress"))

    def _read(self) -> None:
        with open(self.path, "rb") as fh:
            fh.seek(self._offset)
            chunk = fh.read()
        self._offset += len(chunk)
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()  # an incomplete last line waits for the rest
        self._pending.extend(lines)

    def breakdown(self, run_id: str) -> Dict[str, Any]:
        """The summary of run ``run_id`` (a finished query), reading the log up to its termination. The listener
        writing the log runs behind the query, so this waits up to ``timeout_s`` for the run's last event."""
        return self.breakdowns([run_id])[run_id]

    def breakdowns(self, run_ids: List[str], ended: bool = True) -> Dict[str, Dict[str, Any]]:
        """``breakdown`` of several finished runs that ran at the same time (their events interleave in the log).
        ``ended=False``: the application was stopped with its queries running (a spark-submit killed after its
        results arrived), so no run ends in the log; each is summarised from whatever the log holds."""
        runs = {r: _Run() for r in run_ids}
        done: Dict[str, Dict[str, Any]] = {}
        stage_run: Dict[int, _Run] = {}
        deadline = time.monotonic() + self.timeout_s
        while True:
            self._read()
            while self._pending and len(done) < len(runs):
                line = self._pending.popleft()
                if not line.strip():
                    continue
                e = json.loads(line)
                ev = e.get("Event")
                if ev == "SparkListenerTaskEnd":
                    run = stage_run.get(int(e["Stage ID"]))
                    if run is not None:
                        run.task_end(e)
                elif ev == "SparkListenerJobStart":
                    run = runs.get((e.get("Properties") or {}).get("spark.jobGroup.id"))
                    if run is not None:
                        run.jobs += 1
                        stages = [int(s["Stage ID"]) for s in e.get("Stage Infos") or []]
                        run.job_stages.update(stages)
                        stage_run.update((s, run) for s in stages)
                elif ev == "SparkListenerStageCompleted":
                    info = e["Stage Info"]
                    run = stage_run.get(int(info["Stage ID"]))
                    if run is not None and info.get("Completion Time"):
                        run.stage_wall[int(info["Stage ID"])] = info["Completion Time"] - info["Submission Time"]
                elif ev == SQL_EXECUTION_START:
                    run = runs.get(e.get("jobGroupId"))
                    if run is not None:
                        run.metrics.update(_metric_names(e["sparkPlanInfo"]))
                elif ev == QUERY_TERMINATED and e.get("runId") in runs:
                    done[e["runId"]] = runs[e["runId"]].summary()
            if len(done) == len(runs):
                return done
            if not ended:
                return {r: done.get(r) or runs[r].summary() for r in run_ids}
            if time.monotonic() > deadline:
                return {
                    r: done.get(r) or {"error": f"run {r} did not end in the event log within {self.timeout_s:.0f} s"}
                    for r in run_ids
                }
            time.sleep(0.1)


def event_log_cost(spark) -> Dict[str, Any]:
    """CPU time the driver JVM has spent so far writing the event log (the thread of Spark's ``eventLog`` listener
    queue, which serialises every event to JSON), against the CPU time of the whole JVM (which runs the tasks in
    local mode). Their ratio bounds what the event log costs a CPU-bound run, whatever else runs on the machine."""
    jvm = spark.sparkContext._jvm
    management = jvm.java.lang.management.ManagementFactory
    threads = management.getThreadMXBean()
    listener_ns = 0
    for info in threads.getThreadInfo(threads.getAllThreadIds()):
        if info is not None and info.getThreadName() == "spark-listener-group-eventLog":
            listener_ns += max(0, threads.getThreadCpuTime(info.getThreadId()))
    process_ns = _process_cpu_ns(int(jvm.java.lang.ProcessHandle.current().pid()))
    return {
        "listener_cpu_seconds": round(listener_ns / 1e9, 2),
        "jvm_cpu_seconds": round(process_ns / 1e9, 2),
        "share_of_jvm_cpu": round(listener_ns / process_ns, 4) if process_ns > 0 else None,
    }


def cost_between(before: Dict[str, Any], after: Dict[str, Any]) -> Dict[str, Any]:
    """``event_log_cost`` over a stretch of the run (one benchmark)."""
    listener = after["listener_cpu_seconds"] - before["listener_cpu_seconds"]
    total = after["jvm_cpu_seconds"] - before["jvm_cpu_seconds"]
    return {
        "listener_cpu_seconds": round(listener, 2),
        "jvm_cpu_seconds": round(total, 2),
        "share_of_jvm_cpu": round(listener / total, 4) if total > 0 else None,
    }


def _process_cpu_ns(pid: int) -> int:
    """User + system CPU time of process ``pid`` from /proc (py4j cannot call the JVM's own OperatingSystemMXBean
    implementation, whose class is not exported); 0 where there is no /proc."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return int((int(fields[11]) + int(fields[12])) * 1e9 / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0


def describe(b: Dict[str, Any]) -> str:
    """One breakdown as a few lines of text (seconds) for the log."""

    def s(ms) -> str:
        return f"{ms / 1000:.2f}"

    ph = b.get("phases") or {}
    lines = ["batches: " + ", ".join(f"{k} {s(v)}" for k, v in ph.items() if v)]
    for name in ("map", "result"):
        g = b.get(name)
        if not g:
            continue
        lines.append(
            f"{name}: {g['stages']} stages, {g['tasks']} tasks, stage wall {s(g['stage_wall_ms'])}, task run "
            f"{s(g['task_run_ms'])} (cpu {s(g['task_cpu_ms'])}, gc {s(g['gc_ms'])}, deserialize "
            f"{s(g['deserialize_ms'])}, shuffle write {s(g['shuffle_write_ms'])})"
        )
        # A whole-stage-codegen stage's duration spans the operators fused into it (and, where it feeds a state
        # operator's iterator, their time too), so it is left to the JSON; the operators' own timings are printed.
        top = [
            (k, v)
            for k, v in g["operator_metrics"].items()
            if k.endswith("(ms)") and not k.startswith("WholeStageCodegen")
        ][:TOP_OPERATOR_METRICS]
        if top:
            lines.append("  " + "; ".join(f"{k[:-5]} {s(v)}" for k, v in top))
    if b.get("error"):
        lines.append(b["error"])
    return "\n".join(lines)
