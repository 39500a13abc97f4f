"""Which suite of `make test` spent the CPU: a sampler of /proc that adds up each tagged process's CPU time.

`make test` keeps 2 cores busy throughout, so its length is the CPU its suites spend, not their wall-clock times
(they run side by side). Each suite's processes carry the environment variable TAG (tests/lines.py sets it), which
their children inherit: Spark drivers, Connect servers, sbt's forked test JVMs. Every few seconds the sampler reads
each process's own user and system time; a process's last reading is its CPU time (processes that live less than
one interval are missed: a few seconds at most, in a run of an hour). sbt's forked JVMs are told apart by the
project in their class path (or in the argument file that holds it), so each line's Scala suites get a row of their own.
"""

from __future__ import annotations

import os
import re
import threading
from typing import Dict, Optional, Tuple

TAG = "SPARK_SUPPRESS_TEST_SUITE"
_PROJECT = re.compile(rb"target/(spark\d+_\d+)/")
_SBT = "test-jvm (sbt)"  # sbt itself, and a test JVM it is starting until that JVM's exec


def _read(path: str) -> Optional[bytes]:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:  # the process ended, or is not ours
        return None


class CpuMeter:
    """Samples every ``interval`` seconds until :meth:`stop`; :meth:`minutes` gives CPU minutes by tag."""

    def __init__(self, interval: float = 2.0) -> None:
        self._interval = interval
        self._ticks = os.sysconf("SC_CLK_TCK")
        self._last: Dict[Tuple[int, int], Tuple[str, int]] = {}  # (pid, start time) -> (tag, CPU ticks)
        self._tags: Dict[Tuple[int, int], str] = {}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> "CpuMeter":
        if os.path.isdir("/proc"):  # elsewhere than Linux there is nothing to read, and no CPU minutes are printed
            self._thread.start()
        return self

    def stop(self) -> None:
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        while True:
            self._sample()
            if self._done.wait(self._interval):
                return

    def _tag(self, pid: int) -> Optional[str]:
        environ = _read(f"/proc/{pid}/environ")
        if environ is None:
            return None
        prefix = TAG.encode() + b"="
        found = next((v[len(prefix) :] for v in environ.split(b"\0") if v.startswith(prefix)), None)
        if found is None:
            return None
        tag = found.decode()
        if tag == "test-jvm":
            # sbt passes a forked JVM its class path in an argument file (java @file), which it leaves in place.
            args = (_read(f"/proc/{pid}/cmdline") or b"").split(b"\0")
            texts = args + [_read(a[1:].decode(errors="replace")) or b"" for a in args if a.startswith(b"@")]
            project = next((m for m in map(_PROJECT.search, texts) if m), None)
            tag = f"test-jvm {project.group(1).decode()}" if project else _SBT
        return tag

    def _sample(self) -> None:
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            stat = _read(f"/proc/{name}/stat")
            if stat is None:
                continue
            # The command name (field 2) may hold spaces: the fields after it follow its closing parenthesis.
            fields = stat[stat.rindex(b")") + 2 :].split()
            utime, stime, start = int(fields[11]), int(fields[12]), int(fields[19])
            key = (int(name), start)
            tag = self._tags[key] if key in self._tags else self._tag(int(name))
            # Between fork and exec a process still has its parent's environment and command line (no tag yet, or
            # sbt's for a test JVM sbt is starting): such a reading is taken again at the next sample.
            if tag is not None and tag != _SBT:
                self._tags[key] = tag
            if tag is not None:
                self._last[key] = (tag, utime + stime)

    def minutes(self) -> Dict[str, float]:
        totals: Dict[str, float] = {}
        for tag, ticks in self._last.values():
            totals[tag] = totals.get(tag, 0.0) + ticks / self._ticks / 60
        return totals
