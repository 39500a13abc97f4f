"""`make test` on every Spark line: builds each line's venv and jar once, runs each line's suites, prints a table.

Usage: python3 tests/lines.py [--lines 3.5,4.0] [--jobs N] [--build-only]

The lines are project/spark-lines.tsv's rows. Each line's suites are `make` targets run with SPARK=<line> (and SCALA=
for the second Scala version of a line), so a suite here is exactly what `make <target> SPARK=<line>` runs:

- the default line (the table's last): first the style checks (`lint`: ruff and mypy, once for the whole run, before
  any other suite starts), then everything `make test SPARK=<line>` runs there: the Scala suites
  (`test-jvm`), the Python tests (`test-python`), every conformance vector on py4j (`conformance`), the Python tests
  of operators on Spark Connect (`test-connect`), every vector on Spark Connect (`conformance-connect`) and the
  wheel with only pyspark-client (`test-connect-client`) and the quick slice of the cluster faults (an executor
  and then the driver killed on a standalone cluster, `test-cluster-faults`);
- every other line: the Scala suites that pin Spark's and Scala's behaviour (`test-jvm`: the probe suites,
  `StoredHashesSuite`, `ConnectPluginSuite`, compiled with only the test sources they use:
  project/ProbeSources.scala), and, where PySpark has the line: every vector once on py4j (`conformance-once`) and
  Connect's own tests (`test-connect-plugin`: the plugin, its errors, each operator over Connect), so both ways of
  reaching the JVM. The vectors go through py4j there because a vector costs more CPU over Connect (a file source and
  a file sink for each micro-batch; the 75 single-operator vectors took 111 CPU-seconds over Connect on 4.3 and 94 on
  py4j on 4.2, 2026-11-29); the default line runs every vector both ways. That keeps every line building and running
  its vectors within the time `make test` has on 2 cores (one record per micro-batch costs a Spark batch each, and
  every suite on every line does not fit); `make test SPARK=<line>` runs the whole suite on one line.

The Scala suites of every line run in one sbt process (`all <project>/test ...`: sbt runs one build at a time),
whose forked test JVMs run --jvm-jobs lines at once; each line's counts come from its JUnit reports
(target/<project>/test-reports). The Python suites of different lines run beside it, up to --jobs at once (each is
one Spark driver on local[2], mostly waiting on micro-batch latency). Each suite's output goes to
target/test-logs/<line>/<suite>.log (sbt's to target/test-logs/test-jvm.log); its counts come from the runner's
own closing line. After the table, "what failed:" gives each failed suite's first failures, a line each. Exits 1 when
any suite failed or ended without its runner's closing line.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ElementTree
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from cpu_meter import TAG, CpuMeter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOGS = os.path.join(ROOT, "target", "test-logs")


@dataclass(frozen=True)
class Line:
    line: str
    scala: str  # binary version, e.g. 2.13
    spark: str
    pyspark: Optional[str]
    default: bool

    @property
    def name(self) -> str:
        return f"{self.line}_{self.scala}"

    @property
    def project(self) -> str:
        return f"spark{self.line.replace('.', '')}_{self.scala.replace('.', '')}"

    def make_args(self) -> List[str]:
        return [f"SPARK={self.line}", f"SCALA={self.scala}"]


def read_lines() -> List[Line]:
    rows = []
    with open(os.path.join(ROOT, "project", "spark-lines.tsv")) as f:
        for raw in f:
            if raw.strip() and not raw.startswith("#"):
                line, scala, spark, pyspark = raw.split()
                rows.append((line, ".".join(scala.split(".")[:2]), spark, None if pyspark == "-" else pyspark))
    return [Line(*r, default=(i == len(rows) - 1)) for i, r in enumerate(rows)]


def suites(line: Line) -> List[str]:
    if line.pyspark is None:
        return ["test-jvm"]
    if line.default:
        return [
            "lint",
            "test-jvm",
            "test-python",
            "conformance",
            "test-connect",
            "conformance-connect",
            "test-connect-client",
            "test-cluster-faults",
        ]
    return ["test-jvm", "conformance-once", "test-connect-plugin"]


@dataclass
class Result:
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    seconds: float = 0.0
    status: str = "not run"  # ok, failed, no counts, not run
    log: str = ""


_PYTEST = re.compile(r"(\d+) (passed|failed|skipped|errors?)\b")
_SBT = re.compile(r"Tests: succeeded (\d+), failed (\d+), canceled (\d+), ignored (\d+), pending (\d+)")
_PLAIN = re.compile(r"^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$")
# A terminal control sequence: sbt ends its output with one (erase to the end of the screen, ESC [ 0 J) and no line
# break, so the next line a suite prints starts with it.
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def counts(suite: str, output: str) -> Optional[Tuple[int, int, int]]:
    """(passed, failed, skipped) from the closing lines of the suite's runner, or None when there are none."""
    lines = _ANSI.sub("", output).splitlines()
    if suite == "test-jvm":
        found = [tuple(int(x) for x in m.groups()) for m in map(_SBT.search, lines) if m]
        if not found:
            return None
        return (sum(f[0] for f in found), sum(f[1] for f in found), sum(f[2] + f[3] + f[4] for f in found))
    total = [0, 0, 0]
    seen = False
    for text in lines:
        stripped = text.strip().strip("=").strip()
        plain = _PLAIN.match(stripped)
        if plain:  # the conformance runner's total (one per run of it)
            seen = True
            total[0] += int(plain.group(1))
            total[1] += int(plain.group(2))
            total[2] += int(plain.group(3) or 0)
            continue
        if re.search(r"\d+ (passed|failed)\b.* in [\d.]+s", stripped):  # pytest's closing line
            seen = True
            for n, what in _PYTEST.findall(stripped):
                index = {"passed": 0, "failed": 1, "skipped": 2}.get(what, 1)
                total[index] += int(n)
    return tuple(total) if seen else None  # type: ignore[return-value]


def junit_suites(report_dir: str) -> List[ElementTree.Element]:
    """The ``testsuite`` elements of the JUnit XML reports sbt wrote for one project, in file-name order."""
    return [ElementTree.parse(p).getroot() for p in sorted(glob.glob(os.path.join(report_dir, "TEST-*.xml")))]


def junit_counts(report_dir: str) -> Optional[Tuple[int, int, int]]:
    """(passed, failed, skipped) over the JUnit XML reports sbt wrote for one project, or None when there are none."""
    suites = junit_suites(report_dir)
    if not suites:
        return None
    passed = failed = skipped = 0
    for suite in suites:
        tests, bad = int(suite.get("tests", 0)), int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skip = int(suite.get("skipped", 0))
        passed += tests - bad - skip
        failed += bad
        skipped += skip
    return passed, failed, skipped


def run_jvm(lines: List[Line], jobs: int, results: Dict[Tuple[str, str], Result], lock: threading.Lock) -> None:
    """Every line's Scala suites in one sbt run; sbt runs up to ``jobs`` projects' test JVMs at once."""
    os.makedirs(LOGS, exist_ok=True)
    log = os.path.join(LOGS, "test-jvm.log")
    for line in lines:
        shutil.rmtree(os.path.join(ROOT, "target", line.project, "test-reports"), ignore_errors=True)
    started = time.monotonic()
    with open(log, "w") as out:
        proc = subprocess.run(
            [
                os.path.join("build", "sbt"),
                "-Dsbt.log.noformat=true",
                "all " + " ".join(f"{ln.project}/test" for ln in lines),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env=dict(
                os.environ,
                **{TAG: "test-jvm"},
                SBT_TEST_FORKS=str(jobs),
                SPARK_SUPPRESS_TEST_PROBES_ONLY=",".join(ln.project for ln in lines if not ln.default),
            ),
        )
    seconds = time.monotonic() - started
    with open(log, errors="replace") as f:
        failed = failed_projects(f.read())
    for line in lines:
        found = junit_counts(os.path.join(ROOT, "target", line.project, "test-reports"))
        # One sbt run serves every line: its exit code fails a line only when sbt names that line's project, or
        # names none (then which line failed is unknown).
        own = proc.returncode if line.project in failed or not failed else 0
        record(line, "test-jvm", found, own, seconds, log, results, lock)


_SBT_FAILED = re.compile(r"^\[error\] \((\w+) / Test / test\)", re.M)


def failed_projects(output: str) -> set:
    """The sbt projects whose ``test`` task sbt reports as failed (``[error] (spark40_213 / Test / test) ...``)."""
    return set(_SBT_FAILED.findall(output))


def record(
    line: Line,
    suite: str,
    found: Optional[Tuple[int, int, int]],
    returncode: int,
    seconds: float,
    log: str,
    results: Dict[Tuple[str, str], Result],
    lock: threading.Lock,
) -> None:
    result = Result(seconds=seconds, log=os.path.relpath(log, ROOT))
    if found is None:
        result.status = "no counts"
        result.failed = 1
    else:
        result.passed, result.failed, result.skipped = found
        result.status = "ok" if returncode == 0 and result.failed == 0 else "failed"
        if returncode != 0 and result.failed == 0:
            result.failed = 1  # the runner exited non-zero although its counts show no failure
    with lock:
        results[(line.name, suite)] = result
        print(
            f"[{time.strftime('%H:%M:%S')}] {line.name:9} {suite:27} {result.status:9} "
            f"{result.passed} passed, {result.failed} failed, {result.skipped} skipped ({seconds:.0f} s) "
            f"-> {result.log}",
            flush=True,
        )


def run(line: Line, suite: str, results: Dict[Tuple[str, str], Result], lock: threading.Lock) -> None:
    os.makedirs(os.path.join(LOGS, line.name), exist_ok=True)
    log = os.path.join(LOGS, line.name, f"{suite}.log")
    started = time.monotonic()
    # The conformance runner's vectors are latency-bound queries: two at once fill the gaps (CONFORMANCE_JOBS).
    env = dict(os.environ, CONFORMANCE_JOBS=os.environ.get("CONFORMANCE_JOBS", "2"), **{TAG: f"{suite} {line.name}"})
    with open(log, "w") as out:
        proc = subprocess.run(
            ["make", "--no-print-directory", suite, *line.make_args()],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env=env,
        )
    seconds = time.monotonic() - started
    with open(log, errors="replace") as f:
        found = counts(suite, f.read())
    record(line, suite, found, proc.returncode, seconds, log, results, lock)


def build(lines: List[Line]) -> None:
    """Every line's venv (concurrently: mostly downloads), then every jar in one sbt run, then the bundled copies."""
    with_pyspark = [ln for ln in lines if ln.pyspark is not None]
    with ThreadPoolExecutor(max_workers=max(1, len(with_pyspark))) as pool:
        procs = list(
            pool.map(
                lambda ln: subprocess.run(
                    ["make", "--no-print-directory", "venv", *ln.make_args()], cwd=ROOT, capture_output=True, text=True
                ),
                with_pyspark,
            )
        )
    for ln, p in zip(with_pyspark, procs):
        if p.returncode != 0:
            sys.exit(f"make venv SPARK={ln.line} failed:\n{p.stdout[-3000:]}{p.stderr[-3000:]}")
    # `all`: sbt compiles two lines at once (3:33 against about 4:05 one after another, on 2 cores).
    check(
        [
            os.path.join("build", "sbt"),
            "-Dsbt.log.noformat=true",
            "all " + " ".join(f"{ln.project}/package" for ln in lines),
        ]
    )
    for ln in lines:
        check(["make", "--no-print-directory", "jar", *ln.make_args()])


def check(cmd: List[str]) -> None:
    print("$ " + " ".join(cmd), flush=True)
    if subprocess.run(cmd, cwd=ROOT).returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}")


def junit_failures(report_dir: str) -> List[str]:
    """``Suite: test: message`` for each failed or aborted test in the JUnit XML reports sbt wrote for one project."""
    found = []
    for suite in junit_suites(report_dir):
        for case in suite.iter("testcase"):
            for bad in list(case.findall("failure")) + list(case.findall("error")):
                name = (suite.get("name") or "").rsplit(".", 1)[-1]
                found.append(f"{name}: {case.get('name')}: {bad.get('message') or bad.get('type') or ''}")
    return found


_FAILURE_LINES = re.compile(r"^(FAILED |FAIL |ERROR )")  # pytest's short summary, the conformance runner's verdicts
_ASSERTION_LINES = re.compile(r"^E   ")  # pytest's traceback, when there is no summary (a crash, a timeout)


def why(line: Line, suite: str, result: Result, most: int = 3, width: int = 200) -> List[str]:
    """A failed suite's first failures, one short line each (pytest's and the conformance runner's FAIL lines, sbt's
    JUnit reports), so that the end of the output, all a CI page may show, says what failed and not only where."""
    if suite == "test-jvm":
        reasons = junit_failures(os.path.join(ROOT, "target", line.project, "test-reports"))
    else:
        try:
            with open(os.path.join(ROOT, result.log), errors="replace") as f:
                text = f.read().splitlines()
        except OSError:
            text = []
        reasons = [t for t in text if _FAILURE_LINES.match(t)] or [t for t in text if _ASSERTION_LINES.match(t)]
    if not reasons:
        reasons = [f"no failure named; see {result.log}"]
    shown = [f"  {line.name} {suite}: {' '.join(r.split())[:width]}" for r in reasons[:most]]
    if len(reasons) > most:
        shown.append(f"  {line.name} {suite}: ... {len(reasons) - most} more in {result.log}")
    return shown


def table(lines: List[Line], results: Dict[Tuple[str, str], Result]) -> str:
    names = []
    for ln in lines:
        for s in suites(ln):
            if s not in names:
                names.append(s)
    width = max(len(n) for n in names)
    header = f"{'suite':{width}} | " + " | ".join(f"{ln.name:^17}" for ln in lines)
    rows = [header, "-" * len(header)]
    for s in names:
        cells = []
        for ln in lines:
            r = results.get((ln.name, s))
            if s not in suites(ln):
                cells.append(f"{'-':^17}")
            elif r is None or r.status == "not run":
                cells.append(f"{'not run':^17}")
            elif r.status == "no counts":
                cells.append(f"{'NO COUNTS':^17}")
            else:
                mark = "" if r.status == "ok" else "!"
                cells.append(f"{f'{r.passed}/{r.failed}/{r.skipped}{mark}':^17}")
        rows.append(f"{s:{width}} | " + " | ".join(cells))
    return "\n".join(rows)


def cpu_ticks() -> Optional[Tuple[int, int]]:
    """(busy, total) CPU ticks of the whole machine so far, from /proc/stat; None where there is none."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle and iowait
    return sum(fields) - idle, sum(fields)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", default=None, help="comma-separated line names (e.g. 3.5_2.12,4.0_2.13 or 4.0)")
    parser.add_argument("--jobs", type=int, default=3, help="Python suites run at once beside sbt (default 3)")
    parser.add_argument("--jvm-jobs", type=int, default=2, help="lines whose Scala suites run at once (default 2)")
    parser.add_argument("--build-only", action="store_true", help="build the venvs and jars, run nothing")
    args = parser.parse_args(argv)
    lines = read_lines()
    if args.lines:
        wanted = args.lines.split(",")
        lines = [ln for ln in lines if ln.name in wanted or ln.line in wanted]
        if not lines:
            sys.exit(f"no line matches {args.lines}; the lines are {', '.join(ln.name for ln in read_lines())}")
    started = time.monotonic()
    ticks = cpu_ticks()
    os.environ[TAG] = "setup"
    meter = CpuMeter().start()
    build(lines)
    if args.build_only:
        meter.stop()
        return 0
    results: Dict[Tuple[str, str], Result] = {}
    lock = threading.Lock()
    # The style checks once, before everything else: a quick failure to see first. The run goes on, so the table
    # also shows the suites, and fails at the end.
    for ln in lines:
        if "lint" in suites(ln):
            run(ln, "lint", results, lock)
    # The longest Python suites first, so the shorter ones fill the gaps at the end.
    python = sorted(
        ((ln, s) for ln in lines for s in suites(ln) if s not in ("test-jvm", "lint")),
        key=lambda ls: (ls[1] not in ("conformance", "conformance-connect", "conformance-once"), not ls[0].default),
    )
    jvm_thread = threading.Thread(target=run_jvm, args=(lines, args.jvm_jobs, results, lock))
    jvm_thread.start()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for f in [pool.submit(run, ln, s, results, lock) for ln, s in python]:
            f.result()
    jvm_thread.join()
    meter.stop()
    minutes = (time.monotonic() - started) / 60
    print()
    print(f"Spark lines x suites: passed/failed/skipped ('!' failed; logs in {os.path.relpath(LOGS, ROOT)}/)")
    print(table(lines, results))
    passed = sum(r.passed for r in results.values())
    failed = sum(r.failed for r in results.values())
    skipped = sum(r.skipped for r in results.values())
    failures = [
        text
        for ln in lines
        for s in suites(ln)
        if (ln.name, s) in results and results[(ln.name, s)].status != "ok"
        for text in why(ln, s, results[(ln.name, s)])
    ]
    if failures:
        print("what failed:")
        print("\n".join(failures))
    # How much of the machine the run kept busy: near 100% it is bound by CPU, and only less work makes it faster.
    now = cpu_ticks()
    share = ""
    if ticks is not None and now is not None:
        share = f", CPU busy {100 * (now[0] - ticks[0]) / max(1, now[1] - ticks[1]):.0f}%"
    print(f"whole run: {minutes:.1f} min on {os.cpu_count()} cores{share}")
    spent = sorted(meter.minutes().items(), key=lambda kv: -kv[1])
    if spent:
        total = sum(m for _, m in spent)
        print(f"CPU minutes by suite ({total:.0f} in all): " + ", ".join(f"{t} {m:.1f}" for t, m in spent))
    lint = [r for (_, s), r in results.items() if s == "lint" and r.status != "ok"]
    if lint:
        print(f"the style checks failed: {lint[0].log} (make lint; `ruff format .` fixes the formatting)")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 0 if failed == 0 and all(r.status == "ok" for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
