"""spark-submit runs on a standalone cluster and the faults the tests inject into them: an executor JVM or the
driver's spark-submit JVM killed with SIGKILL while a chosen micro-batch runs (reliability/test_cluster_faults.py,
reliability/test_sinks.py).

Where a kill lands is drawn from a seeded random generator: the batch, the delay after that batch's first task starts
and the executor. The seed is printed, and ``FAULT_SEED=<seed>`` replays the same choices.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

from conftest import ROOT, SCRIPTS, python_env, spark_submit
from local_kafka import free_port
from standalone import Cluster, alive, children, get_json, wait_until

JOB = os.path.join(SCRIPTS, "cluster_job.py")
RECORDS = os.path.join(ROOT, "target", "reliability", "cluster-faults.jsonl")


def seeded(label: str) -> tuple:
    """(seed, generator): the seed from FAULT_SEED or a fresh one, printed so that a failure can be replayed."""
    seed = int(os.environ.get("FAULT_SEED") or random.SystemRandom().randrange(1 << 31))
    print(f"{label}: FAULT_SEED={seed}", flush=True)
    return seed, random.Random(seed)


def record(entry: dict) -> None:
    """Appends one run's figures to target/reliability/cluster-faults.jsonl (the source of docs/reliability.md)."""
    os.makedirs(os.path.dirname(RECORDS), exist_ok=True)
    with open(RECORDS, "a") as f:
        f.write(json.dumps(dict(entry, at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))) + "\n")


class Submission:
    """One spark-submit of cluster_job.py; its output is read as it comes, so a test can act on the batch running."""

    def __init__(
        self,
        cluster: Cluster,
        jars: Sequence[str],
        args: Sequence[str],
        log: str,
        conf: Optional[Dict[str, str]] = None,
        queries: int = 1,
    ):
        confs = {
            "spark.executor.memory": "512m",
            "spark.cores.max": str(len(cluster.workers)),
            "spark.driver.host": "127.0.0.1",
            "spark.ui.port": str(free_port()),
            # A lost executor's shuffle files are recomputed; the defaults (4) would be reached by design here.
            "spark.task.maxFailures": "8",
            "spark.stage.maxConsecutiveAttempts": "8",
        }
        confs.update(conf or {})
        cmd = [spark_submit(), "--master", cluster.master_url, "--jars", ",".join(jars)]
        for k, v in confs.items():
            cmd += ["--conf", f"{k}={v}"]
        cmd += [JOB, *args]
        env = dict(os.environ, **python_env(), SPARK_LOCAL_IP="127.0.0.1")
        self.queries = queries  # how many queries the job runs at once
        self.lines: List[str] = []
        self.stamps: List[float] = []  # when each line arrived (time.monotonic), for the run's timings
        self.log = log
        self._out = open(log, "w")
        self.started = time.monotonic()
        self.process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self._out, text=True, env=env)
        self.ended: Optional[float] = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.stamps.append(time.monotonic())
            self.lines.append(line.rstrip("\n"))
            self._out.write(line)
            self._out.flush()
        self.ended = time.monotonic()

    def tagged(self, tag: str) -> List[str]:
        return [line[len(tag) + 1 :] for line in list(self.lines) if line.startswith(tag + " ")]

    def _first(self, tag: str) -> Optional[str]:
        found = self.tagged(tag)
        if not found and self.process.poll() is not None:
            raise AssertionError(
                f"spark-submit exited with {self.process.returncode} before printing {tag}; "
                f"see {self.log}:\n{self.tail()}"
            )
        return found[0] if found else None

    def tail(self, chars: int = 4000) -> str:
        with open(self.log) as f:
            return f.read()[-chars:]

    def app_id(self) -> str:
        return wait_until(lambda: self._first("APP"), 300, "the application id")

    def ui(self) -> str:
        return wait_until(lambda: self._first("UI"), 300, "the driver's UI")

    def progress(self) -> Dict[int, dict]:
        return {p["batch"]: p for p in map(json.loads, self.tagged("PROGRESS"))}

    def running_batch_with_tasks(self, batch: int, seconds: float = 600) -> int:
        """Waits until a job of micro-batch ``batch`` (or a later one, should it have been too quick to see) runs
        tasks, and returns that batch (Spark names the batch in the job's description)."""
        url = f"{self.ui()}/api/v1/applications/{self.app_id()}/jobs?status=running"
        # The driver's REST API is asked only from two batches before (their progress is in the job's own output, read
        # for free; for batch 1, once the query has started): polled every 20 ms from the driver's start, it slowed the
        # start-up on 2 shared cores from about 3 s to 40 s between the driver's UI coming up and the query starting
        # (seen in the jobs' logs). One batch before is too late: its progress reaches the output through the listener
        # bus and Python, and short batches of the chain had run, and the job ended, by then.
        wait_until(
            lambda: (
                self._running(batch)
                and (any(b >= batch - 2 for b in self.progress()) if batch >= 2 else bool(self.tagged("STARTED")))
            ),
            seconds,
            f"micro-batch {batch - 2} to report progress" if batch >= 2 else "the query to start",
            interval=0.05,
        )

        def found():
            self._running(batch)
            # Queries running at once go at their own pace (a Delta commit costs more than a Kafka write): the kill
            # waits until each has finished a batch of this submission, so that it hits each after one that left
            # records in its state.
            if len({p["query"] for p in map(json.loads, self.tagged("PROGRESS"))}) < self.queries:
                return None
            for job in get_json(url):
                running = re.search(r"batch = (\d+)", job.get("description") or "")
                if running and int(running.group(1)) >= batch and job.get("numActiveTasks", 0) > 0:
                    return int(running.group(1))
            return None

        return wait_until(found, seconds, f"micro-batch {batch} to run tasks", interval=0.02)

    def batches_in_flight(self) -> Dict[str, int]:
        """The micro-batch each started query is in now: the newest one of its running jobs (Spark's job description
        is the query's name, then ``batch = N``), else the one after its last progress. A kill hits every query of the
        application, each in its own batch."""
        started = set(self.tagged("STARTED"))
        found: Dict[str, int] = {}
        for job in get_json(f"{self.ui()}/api/v1/applications/{self.app_id()}/jobs?status=running"):
            description = job.get("description") or ""
            running = re.search(r"batch = (\d+)", description)
            query = description.split("\n", 1)[0].strip()
            # Sinks run jobs of their own inside a batch, described after it ("Delta: cf-chain ...").
            if running and query in started:
                found[query] = max(found.get(query, -1), int(running.group(1)))
        done: Dict[str, int] = {}
        for p in map(json.loads, self.tagged("PROGRESS")):
            done[p["query"]] = max(done.get(p["query"], -1), p["batch"])
        for query in started:
            found.setdefault(query, done.get(query, -1) + 1)
        return found

    def batches_in_flight_after_progress(self, batch: int, seconds: float = 120) -> Dict[str, int]:
        """``batches_in_flight``, once every query's batch before the one it is in has reported its progress. That
        progress reaches the output through Spark's listener bus and Python, which can lag the running job by a batch
        on a loaded machine; a driver killed meanwhile takes it along, and the check that the kill came after a batch
        that left records in the state would find nothing to read. ``batch``: the kill's, named should spark-submit
        exit meanwhile."""

        def ready() -> Optional[Dict[str, int]]:
            self._running(batch)
            found = self.batches_in_flight()
            done = {(p["query"], p["batch"]) for p in map(json.loads, self.tagged("PROGRESS"))}
            return found if found and all((q, b - 1) in done for q, b in found.items()) else None

        return wait_until(ready, seconds, "the progress of the batch before the one to kill in", interval=0.02)

    def _running(self, batch: int) -> bool:
        """True while spark-submit runs; fails with its log's tail once it has exited before ``batch`` ran."""
        if self.process.poll() is not None:
            raise AssertionError(
                f"spark-submit exited with {self.process.returncode} before batch {batch} ran; see {self.log}:\n"
                f"{self.tail()}"
            )
        return True

    def busy_executors(self) -> List[str]:
        """The executors running a task right now (from the running tasks of the active stages)."""
        api = f"{self.ui()}/api/v1/applications/{self.app_id()}"
        busy = set()
        for stage in get_json(f"{api}/stages?status=active"):
            tasks = get_json(f"{api}/stages/{stage['stageId']}/{stage['attemptId']}/taskList?status=RUNNING")
            busy.update(t["executorId"] for t in tasks if t.get("status") == "RUNNING")
        return sorted(busy)

    def wait(self, seconds: float = 1800) -> int:
        try:
            return self.process.wait(timeout=seconds)
        finally:
            self._reader.join(timeout=30)

    def results(self, seconds: float = 1800) -> Dict[str, List[str]]:
        """Each operator's output rows (one RESULT line per operator the job ran), once spark-submit has exited."""
        code = self.wait(seconds)
        results = [json.loads(r) for r in self.tagged("RESULT")]
        assert code == 0 and results, f"spark-submit exited with {code}; see {self.log}:\n{self.tail()}"
        return {r["operator"]: r["rows"] for r in results}

    def timings(self) -> dict:
        """Where this submission's time went, in seconds: from spark-submit to the first micro-batch's progress (JVMs,
        session, executors), the micro-batches (first progress to last), and in all (to the end of its output)."""
        marks = [t for t, line in zip(self.stamps, self.lines) if line.startswith("PROGRESS ")]
        end = self.ended or time.monotonic()
        return {
            "start_s": round(marks[0] - self.started, 1) if marks else None,
            "batches": len(marks),
            "batches_s": round(marks[-1] - marks[0], 1) if marks else None,
            "total_s": round(end - self.started, 1),
        }

    def stop(self) -> None:
        """Kills what is left of this submission (the driver JVM and its Python child), by pid."""
        python = children(self.process.pid) if self.process.poll() is None else []
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=60)
        for pid in python:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        self._reader.join(timeout=30)
        self._out.close()


@dataclass
class Kill:
    kind: str  # executor or driver
    batch: int
    delay_ms: int
    target: str = ""
    active_tasks: int = 0
    # The batch each query of the application was in (several queries run at once: one per provider or sink)
    batches: Dict[str, int] = field(default_factory=dict)
    # The state rows each query held after the batch before the one the kill hit
    rows_before: Dict[str, Optional[int]] = field(default_factory=dict)
    until_idle_s: Optional[float] = None  # driver kills: from the kill to a cluster ready for the resubmission

    @property
    def state_rows_before(self) -> Optional[int]:
        """The fewest state rows a query held before the kill (None if one's progress is unknown): the kill counts only
        if every query it hit held some."""
        held = list(self.rows_before.values())
        return None if not held or None in held else min(held)

    def describe(self) -> str:
        busy = f", {self.active_tasks} executor(s) running tasks" if self.kind == "executor" else ""
        held = ""
        if self.rows_before:
            held = ", state rows held before it: " + ", ".join(
                f"{q} {n} (batch {self.batches[q]})" for q, n in sorted(self.rows_before.items())
            )
        idle = "" if self.until_idle_s is None else f", cluster idle {self.until_idle_s} s after it"
        return f"{self.kind} kill in batch {self.batch} (+{self.delay_ms} ms, {self.target}{busy}{held}{idle})"


@dataclass
class Plan:
    """Which batches get which kill; drawn from the seeded generator."""

    kills: List[Kill] = field(default_factory=list)

    @staticmethod
    def draw(rnd: random.Random, batches: int, kinds: Sequence[str]) -> "Plan":
        # Batches 1 .. batches-3, where the operator holds records from earlier batches; two apart, so that a kill
        # whose batch ran too quickly to catch (it then lands in the next one) still comes before the next kill's.
        chosen = sorted(rnd.sample(range(1, batches - 2, 2), len(kinds)))
        return Plan([Kill(kind, b, rnd.randrange(0, 400)) for kind, b in zip(kinds, chosen)])


def kill_executor_in(sub: Submission, cluster: Cluster, kill: Kill, rnd: random.Random) -> None:
    kill.batch = sub.running_batch_with_tasks(kill.batch)
    time.sleep(kill.delay_ms / 1000)
    # The kill must find a task running: if the delay fell between two stages, it waits for the next task.
    busy = wait_until(sub.busy_executors, 300, f"an executor running a task after batch {kill.batch}", interval=0.02)
    victim = rnd.choice(busy)
    kill.batches = sub.batches_in_flight()
    pid = cluster.kill_executor(sub.app_id(), victim)
    kill.target, kill.active_tasks = f"executor {victim} pid {pid}", len(busy)


def kill_driver_in(sub: Submission, cluster: Cluster, kill: Kill) -> None:
    kill.batch = sub.running_batch_with_tasks(kill.batch)
    time.sleep(kill.delay_ms / 1000)
    kill.batches = sub.batches_in_flight_after_progress(kill.batch)
    killed = time.monotonic()
    python = children(sub.process.pid)
    sub.process.send_signal(signal.SIGKILL)
    kill.target = f"spark-submit pid {sub.process.pid}"
    sub.wait(120)
    # The Python driver notices its JVM is gone at its next call into it; wait for that, then make sure.
    try:
        wait_until(lambda: not any(alive(p) for p in python), 60, "the Python driver to exit")
    except Exception:
        for p in python:
            if alive(p):
                os.kill(p, signal.SIGKILL)
    # The master drops the application once its driver is gone; its executors go with it.
    cluster.wait_idle(180)
    kill.until_idle_s = round(time.monotonic() - killed, 1)


def run_with_kills(
    cluster: Cluster,
    jars: Sequence[str],
    args: Sequence[str],
    log_prefix: str,
    plan: Plan,
    rnd: random.Random,
    queries: int = 1,
) -> dict:
    """Runs the job, killing as planned; after a driver kill the job is submitted again from the same checkpoint.
    ``queries``: how many queries the job runs at once (each kill waits until every one has finished a batch).
    Returns the last submission's output rows ("rows" for a job of one operator, "results" by operator) with the kills,
    the batch progress seen (in all, and per query) and each submission's timings added."""
    submissions: List[Submission] = []
    try:
        sub = Submission(cluster, jars, args, f"{log_prefix}-0.log", queries=queries)
        submissions.append(sub)
        for kill in plan.kills:
            if kill.kind == "executor":
                kill_executor_in(sub, cluster, kill, rnd)
            else:
                kill_driver_in(sub, cluster, kill)
                sub = Submission(cluster, jars, args, f"{log_prefix}-{len(submissions)}.log", queries=queries)
                submissions.append(sub)
            print(kill.describe(), flush=True)
        results = sub.results()
        result: dict = {"results": results, "rows": next(iter(results.values())) if len(results) == 1 else None}
        # Per query (the job names each cf-<lane>): an application runs several, one after another or at once.
        progress: Dict[tuple, dict] = {}
        for s in submissions:
            progress.update(((p["query"], p["batch"]), p) for p in map(json.loads, s.tagged("PROGRESS")))
        for kill in plan.kills:
            for query, batch in kill.batches.items():
                before = progress.get((query, batch - 1))
                kill.rows_before[query] = sum(before["state_rows"]) if before else None
        result["kills"] = [k.describe() for k in plan.kills]
        result["plan"] = plan
        per_query: Dict[str, set] = {}
        for query, batch in progress:
            per_query.setdefault(query, set()).add(batch)
        result["batches"] = max((len(b) for b in per_query.values()), default=0)
        result["query_batches"] = {q: len(b) for q, b in per_query.items()}
        result["timings"] = [s.timings() for s in submissions]
    finally:
        for s in submissions:
            s.stop()
    # Only after a run that went well: a failed one's own error must not be replaced by this wait's.
    cluster.wait_idle(180)
    return result
