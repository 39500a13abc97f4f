"""A Spark standalone cluster on loopback, from the Spark distribution the tests run (PySpark's wheel): a master and
workers, each its own JVM started with Spark's own ``bin/spark-class``, and the processes the tests kill in it.

Every process here is started by this module and stopped by its process id; nothing is looked up by name.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator, List, Optional

from local_kafka import free_port


class ClusterError(RuntimeError):
    pass


def pyspark_home() -> str:
    import pyspark

    return os.path.dirname(pyspark.__file__)


def get_json(url: str, timeout: float = 5.0):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.loads(response.read().decode())


def children(pid: int) -> List[int]:
    """The processes whose parent is ``pid`` (from /proc: the worker starts its executors as child processes)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                # The command name (field 2) may hold spaces; the parent id is the second field after its ')'.
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid:
            found.append(int(entry))
    return found


def cmdline(pid: int) -> List[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [part.decode() for part in f.read().split(b"\0") if part]
    except OSError:
        return []


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_until(condition, seconds: float, what: str, interval: float = 0.2):
    """Polls ``condition`` until it returns something true; fails naming ``what`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    last_error: Optional[Exception] = None
    while time.monotonic() < deadline:
        try:
            value = condition()
            if value:
                return value
        except AssertionError:
            raise  # the condition found a failure (a process exited): waiting on would only hide it
        except Exception as e:  # noqa: BLE001 - the UI is not up yet, or a process is between states
            last_error = e
        time.sleep(interval)
    raise ClusterError(
        f"timed out after {seconds} s waiting for {what}" + (f" (last error: {last_error})" if last_error else "")
    )


def stop_process(process: subprocess.Popen, grace: float = 30.0) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


@dataclass
class Cluster:
    master_url: str
    master_ui: str
    master: subprocess.Popen
    workers: List[subprocess.Popen] = field(default_factory=list)
    work: str = ""

    def state(self) -> dict:
        return get_json(self.master_ui + "/json/")

    def alive_workers(self) -> int:
        return sum(1 for w in self.state()["workers"] if w["state"] == "ALIVE")

    def executors(self) -> List[dict]:
        """Each executor JVM the workers run: its pid, worker, application and executor id (from its command line)."""
        found = []
        for worker in self.workers:
            for pid in children(worker.pid):
                args = cmdline(pid)
                if "org.apache.spark.executor.CoarseGrainedExecutorBackend" not in args or not alive(pid):
                    continue
                found.append(
                    {
                        "pid": pid,
                        "worker": worker.pid,
                        "executor_id": args[args.index("--executor-id") + 1],
                        "app_id": args[args.index("--app-id") + 1],
                    }
                )
        return found

    def kill_executor(self, app_id: str, executor_id: str) -> int:
        for e in self.executors():
            if e["app_id"] == app_id and e["executor_id"] == executor_id:
                os.kill(e["pid"], signal.SIGKILL)
                return e["pid"]
        raise ClusterError(f"no executor {executor_id} of {app_id} among {self.executors()}")

    def wait_idle(self, seconds: float = 120) -> None:
        """Until the master runs no application (a killed driver's executors are gone) and every worker is alive."""
        wait_until(
            lambda: (
                not self.state()["activeapps"] and self.alive_workers() == len(self.workers) and not self.executors()
            ),
            seconds,
            "the cluster to become idle",
        )


@contextmanager
def standalone_cluster(
    work: str, workers: int = 2, cores: int = 1, memory: str = "1g", start_seconds: float = 120
) -> Iterator[Cluster]:
    """A master and ``workers`` workers on 127.0.0.1; yields once every worker is registered and ALIVE."""
    home = pyspark_home()
    spark_class = os.path.join(home, "bin", "spark-class")
    os.makedirs(work, exist_ok=True)
    env = dict(
        os.environ,
        SPARK_HOME=home,
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_LOG_DIR=work,
        SPARK_DAEMON_MEMORY="256m",
        SPARK_WORKER_DIR=os.path.join(work, "worker-work"),
    )
    port, ui = free_port(), free_port()
    started: List[subprocess.Popen] = []

    def launch(name: str, args: List[str]) -> subprocess.Popen:
        with open(os.path.join(work, f"{name}.log"), "w") as log:
            process = subprocess.Popen([spark_class, *args], stdout=log, stderr=subprocess.STDOUT, env=env, cwd=work)
        started.append(process)
        return process

    cluster = None
    try:
        master = launch(
            "master",
            [
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--webui-port",
                str(ui),
            ],
        )
        cluster = Cluster(f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{ui}", master, work=work)
        wait_until(lambda: master.poll() is None and cluster.state(), start_seconds, "the master's web UI")
        for i in range(workers):
            worker_dir = os.path.join(work, f"worker-{i}")
            os.makedirs(worker_dir, exist_ok=True)
            cluster.workers.append(
                launch(
                    f"worker-{i}",
                    [
                        "org.apache.spark.deploy.worker.Worker",
                        "--host",
                        "127.0.0.1",
                        "--port",
                        str(free_port()),
                        "--webui-port",
                        str(free_port()),
                        "--cores",
                        str(cores),
                        "--memory",
                        memory,
                        "--work-dir",
                        worker_dir,
                        cluster.master_url,
                    ],
                )
            )

        def registered():
            for p in started:
                if p.poll() is not None:
                    raise ClusterError(f"{p.args[1]} exited with {p.returncode}: see the logs in {work}")
            return cluster.alive_workers() == workers

        wait_until(registered, start_seconds, f"{workers} workers to register with the master")
        yield cluster
    finally:
        # Workers first: a worker stopped by SIGTERM stops its executors; any it left behind go by pid.
        leftovers = cluster.executors() if cluster else []
        for p in reversed(started):
            stop_process(p)
        for e in leftovers:
            if alive(e["pid"]):
                os.kill(e["pid"], signal.SIGKILL)
