#!/usr/bin/env python3
"""Runs spark-suppress's benchmarks against their anchors and writes one results JSON plus PNG plots.

    benchmarks/run.py                  # everything (make bench); about 30 minutes on 2 cores
    benchmarks/run.py --quick          # smoke run with tiny inputs (also: BENCH_QUICK=1 make bench)
    benchmarks/run.py --only join      # some benchmarks: buffer_core, final_results, rate_limit, window_kinds,
                                       #   python_stateful, scaling, large_state, join, chains, kafka_streams
    benchmarks/run.py --only kafka_sustained   # sustained load against Kafka Streams: never in the default run
                                       #   (about 130 minutes on a quiet 2-core machine; --quick: a smoke test)
    benchmarks/run.py --spark 3.5      # on another Spark line (its venv and jar, made by `make jar SPARK=3.5`):
                                       #   final_results (that line's own append aggregation) unless --only says

Results go to benchmarks/results/<UTC time>-<mode>.json (-partial.json for some of make bench only) with the plots
next to it (see benchmarks/README.md).
Exits 1 if a benchmark failed or a result check (same final rows, output equal to the reference) did not hold;
missed speed targets are reported in the results, never a failure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from datetime import datetime, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The worktree's own package and jar, never another copy installed in the environment.
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from harness import local_fs, machine  # noqa: E402
from harness.config import FULL, QUICK  # noqa: E402
from harness.measure import log  # noqa: E402

SPARK_BENCHMARKS = [
    "final_results",
    "rate_limit",
    "window_kinds",
    "python_stateful",
    "scaling",
    "large_state",
    "join",
    "chains",
]
# Its own processes (a broker, Kafka Streams, spark-submit), run before the harness's Spark session exists.
PROCESS_BENCHMARKS = ["buffer_core", "kafka_streams", "kafka_sustained"]
ALL = PROCESS_BENCHMARKS + SPARK_BENCHMARKS
# Run only when --only names them: too long for make bench, and meaningless on a busy machine.
OPT_IN = ["kafka_sustained"]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--quick",
        action="store_true",
        default=os.environ.get("BENCH_QUICK", "") not in ("", "0"),
        help="smoke run on tiny inputs (default when BENCH_QUICK=1)",
    )
    p.add_argument("--only", default="", help=f"comma-separated subset of: {', '.join(ALL)}")
    p.add_argument("--results-dir", default=os.path.join(ROOT, "benchmarks", "results"))
    p.add_argument(
        "--work-dir",
        default=os.path.join(ROOT, "benchmarks", "work"),
        help="generated inputs (cached) and scratch space",
    )
    p.add_argument("--repeats", type=int, default=None, help="measured runs per Spark system (default by mode)")
    p.add_argument(
        "--spark", default=None, help="run on this Spark line (e.g. 3.5) in its venv; default benchmark: final_results"
    )
    p.add_argument("--no-plots", action="store_true")
    p.add_argument(
        "--local-fs",
        choices=local_fs.CHOICES,
        default=os.environ.get(local_fs.ENV) or local_fs.DEFAULT,
        help="the Spark systems' local file system: Hadoop's without the processes it starts for each file created "
        f"and renamed (default), or Hadoop's own as PySpark ships it (benchmarks/README.md; {local_fs.ENV})",
    )
    p.add_argument(
        "--no-event-log",
        action="store_true",
        default=os.environ.get("BENCH_EVENT_LOG", "1") in ("", "0"),
        help="do not write Spark's event log, so no stage breakdown per system (BENCH_EVENT_LOG=0)",
    )
    args = p.parse_args(argv)
    chosen = [b.strip() for b in args.only.split(",") if b.strip()] or (
        ["final_results"] if args.spark else [b for b in ALL if b not in OPT_IN]
    )
    unknown = [b for b in chosen if b not in ALL]
    if unknown:
        p.error(f"unknown benchmark(s) {unknown}; choose from {ALL}")
    args.benchmarks = [b for b in ALL if b in chosen]
    return args


def require_jar() -> None:
    import spark_suppress

    try:
        spark_suppress.jar_path()
    except spark_suppress.JarNotFoundError as e:
        sys.exit(f"benchmarks/run.py: {e}")


def checks_failed(result) -> bool:
    check = result.get("check") or {}
    for key in ("same_final_rows", "ok", "every_record_joined_once", "joined_as_of_kafka_rule"):
        if key in check and not check[key]:
            return True
    return bool(result.get("failures"))


def running_line() -> str:
    import pyspark

    return ".".join(pyspark.__version__.split(".")[:2])


def on_line(line: str, argv) -> int:
    """Runs this script again with the line's venv (built, with the line's jar, by `make jar SPARK=<line>`)."""
    import subprocess

    build = subprocess.run(["make", "--no-print-directory", "jar", f"SPARK={line}"], cwd=ROOT)
    if build.returncode != 0:
        sys.exit(f"benchmarks/run.py: `make jar SPARK={line}` failed")
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import lines  # the table of lines (project/spark-lines.tsv): the default line keeps the plain .venv

    venv = ".venv" if line == lines.read_lines()[-1].line else f".venv-{line}"
    return subprocess.run([os.path.join(ROOT, venv, "bin", "python"), os.path.abspath(__file__), *argv]).returncode


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    # Through the environment, so that spark-submit jobs and another line's run take the same file system.
    os.environ[local_fs.ENV] = args.local_fs
    if args.spark and args.spark != running_line():
        return on_line(args.spark, argv)
    settings = QUICK if args.quick else FULL
    if args.repeats is not None:
        from dataclasses import replace

        settings = replace(settings, repeats=args.repeats)
    require_jar()
    started = time.time()
    stamp = datetime.now(timezone.utc)
    data_dir = os.path.join(args.work_dir, "data")
    scratch = os.path.join(args.work_dir, "runs")
    os.makedirs(args.results_dir, exist_ok=True)
    results = {
        "schema": 1,
        "date": stamp.isoformat(timespec="seconds"),
        "mode": settings.mode,
        "git_commit": machine.git_commit(ROOT),
        "machine": machine.machine(),
        "local_fs": args.local_fs,
        "versions": machine.versions(ROOT),
        "benchmarks": {},
        "errors": {},
        "load_average": {"start": machine.load_average()},
    }
    failed = False
    # A run of some of make bench's benchmarks only is not a full run: report.py must not take it for the newest.
    partial = not args.spark and not all(b in args.benchmarks for b in ALL if b not in OPT_IN)
    line = f"-spark{running_line()}" if args.spark else "-partial" if partial else ""
    stem = f"{stamp.strftime('%Y%m%dT%H%M%SZ')}-{settings.mode}"
    path = os.path.join(args.results_dir, f"{stem}{line}.json")
    # Until the run ends its file is a partial run's, rewritten after every benchmark: a run cut short (killed, or
    # out of time: benchmark 11 alone takes over two hours) keeps what it measured, which report.py can carry.
    progress = os.path.join(args.results_dir, f"{stem}{line or '-partial'}.json")

    def save(to: str, finished: bool) -> None:
        results["finished"] = finished
        results["load_average"]["end"] = machine.load_average()
        results["elapsed_seconds"] = round(time.time() - started, 1)
        with open(to + ".tmp", "w") as fh:
            json.dump(results, fh, indent=2, sort_keys=False)
            fh.write("\n")
        os.replace(to + ".tmp", to)

    def so_far(name: str, measured: dict) -> None:
        # Kept apart from "benchmarks", which holds finished benchmarks only: report.py never tables a part of one.
        results.setdefault("unfinished", {})[name] = measured
        save(progress, False)

    def record(name, fn):
        nonlocal failed
        load_before = machine.load_average()
        t0 = time.time()
        try:
            result = fn()
        except Exception as e:  # a failed benchmark is recorded and the others still run
            traceback.print_exc()
            results["errors"][name] = f"{type(e).__name__}: {e}"[:4000]
            failed = True
            save(progress, False)
            return
        unfinished = results.get("unfinished", {})
        unfinished.pop(name, None)
        if not unfinished:
            results.pop("unfinished", None)
        result["elapsed_seconds"] = round(time.time() - t0, 1)
        result["load_average"] = {"before": load_before, "after": machine.load_average()}
        results["benchmarks"][name] = result
        failed = failed or checks_failed(result)
        log(f"{name} done in {result['elapsed_seconds']} s")
        save(progress, False)

    if "buffer_core" in args.benchmarks:
        from harness import buffer_core

        record("buffer_core", lambda: buffer_core.run(ROOT, args.work_dir, settings.jmh))
        bc = results["benchmarks"].get("buffer_core")
        if bc:
            results["versions"]["kafka-streams"] = bc["versions"]["kafka-streams"]
            results["versions"]["jmh"] = bc["versions"]["jmh"]
            results["versions"].setdefault("scala", bc["versions"]["scala"])

    def context(**more):
        from harness.context import Context

        return Context(settings=settings, work_dir=scratch, data_dir=data_dir, results_dir=args.results_dir, **more)

    if "kafka_streams" in args.benchmarks:
        from harness import kafka_streams

        ctx = context(spark=None)
        record("kafka_streams", lambda: kafka_streams.run(ctx, ROOT, event_log=not args.no_event_log))
        ks = results["benchmarks"].get("kafka_streams")
        if ks:
            results["versions"].setdefault("kafka-streams", ks["versions"]["kafka-streams"])

    if "kafka_sustained" in args.benchmarks:
        from harness import kafka_sustained

        ctx = context(spark=None, progress=so_far)
        record("kafka_sustained", lambda: kafka_sustained.run(ctx, ROOT))
        ks = results["benchmarks"].get("kafka_sustained")
        if ks:
            results["versions"].setdefault("kafka-streams", ks["versions"]["kafka-streams"])

    spark_benchmarks = [b for b in args.benchmarks if b in SPARK_BENCHMARKS]
    if spark_benchmarks:
        from harness import profile, streaming

        spark = streaming.session(event_log_dir=None if args.no_event_log else os.path.join(args.work_dir, "eventlog"))
        results["versions"] = {**results["versions"], **machine.versions(ROOT, spark)}
        results["event_log"] = not args.no_event_log
        ctx = context(spark=spark, event_log=profile.EventLog.of(spark))

        def with_event_log_cost(run):
            # What writing the event log cost this benchmark, as CPU (timings are too noisy to show a few %).
            before = profile.event_log_cost(spark)
            result = run()
            cost = profile.cost_between(before, profile.event_log_cost(spark))
            result["event_log_cost"] = cost
            log(
                f"event log: {cost['listener_cpu_seconds']} s CPU of the driver JVM's {cost['jvm_cpu_seconds']} s "
                f"({100 * (cost['share_of_jvm_cpu'] or 0):.1f}%)"
            )
            return result

        for name in spark_benchmarks:
            module = __import__(f"harness.{name}", fromlist=["run"])
            run = lambda module=module: module.run(ctx)  # noqa: E731
            record(name, (lambda run=run: with_event_log_cost(run)) if ctx.event_log else run)
        spark.stop()

    save(path, True)
    if progress != path and os.path.exists(progress):
        os.remove(progress)
    log(f"results: {os.path.relpath(path, ROOT)} ({results['elapsed_seconds']} s)")
    if not args.no_plots:
        import plots

        for png in plots.write_all(path):
            log(f"plot: {os.path.relpath(png, ROOT)}")
    import report

    print(report.summary(results))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
