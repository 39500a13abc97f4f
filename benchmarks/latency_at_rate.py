"""Final-result latency at one offered rate, measured apart from benchmark 11's full run (which first searches each
system's sustained rate for about two hours): Kafka Streams and spark-suppress in turn, each with the probe of
benchmark 11 (``harness/kafka_sustained.py``: priming, the warm-up until the lag has settled, 60 s measured, the
same checks), spark-suppress once per watermark delay and early-close setting given.

    .venv/bin/python benchmarks/latency_at_rate.py RATE [--rounds N] [--delays MS,MS,...] [--early-close on,off]

RATE is the offered rate in records/s (benchmark 11 measures latency at 50% of the lower system's sustained rate
for final results). ``--delays`` (default ``0``) are spark-suppress's watermark delays in ms: ``0,2000`` compares the
delay benchmark 11 uses with the one it used until 2026-11-28. ``--early-close`` (default ``on``): ``on,off`` runs
spark-suppress also with windows closing at the watermark only (an internal switch, docs/emit.md, "Closing windows
in the batch that closes them"), which is how it ran before that was built. Writes
``benchmarks/results/<UTC time>-latency.json`` with the machine, every run and, per system, delay and setting, the
medians of p50 and p99 over the rounds. Not part of ``make bench``; a failed check fails the command.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from datetime import datetime, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from harness import kafka_streams as ks  # noqa: E402
from harness import kafka_sustained as sustained  # noqa: E402
from harness import machine  # noqa: E402
from harness.config import FULL  # noqa: E402
from harness.measure import log  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("rate", type=int)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--delays", default="0", help="spark-suppress's watermark delays, ms, comma-separated")
    p.add_argument("--early-close", default="on", help="on, off or on,off: spark-suppress's early close of windows")
    p.add_argument("--results-dir", default=os.path.join(ROOT, "benchmarks", "results"))
    args = p.parse_args(argv)
    delays = [int(d) for d in args.delays.split(",")]
    early = args.early_close.split(",")
    if not early or any(e not in ("on", "off") for e in early):
        p.error(f"--early-close {args.early_close!r}: give on, off or on,off")
    stamp = datetime.now(timezone.utc)
    variants = [("kafka-streams", None, None)] + [("spark-suppress", d, e) for d in delays for e in early]
    runs = []
    with sustained.standalone(ROOT, "latency_at_rate", FULL.kafka_sustained, FULL.window_ms) as env:
        for round_ in range(args.rounds):
            for system, delay, early_close in variants:
                if delay is not None:  # both read by ks._start when the job starts
                    ks.WATERMARK_DELAY_MS = delay
                    ks.SPARK_CONF = {} if early_close == "on" else {"spark.sparksuppress.window.earlyClose": "false"}
                r = sustained.probe(env, system, "final_results", args.rate, latency_run=True)
                r.pop("lag_series", None)
                runs.append({"round": round_, "watermark_delay_ms": delay, "early_close": early_close, **r})
    summary = {}
    for system, delay, early_close in variants:
        mine = [
            r
            for r in runs
            if r["system"] == system and r["watermark_delay_ms"] == delay and r["early_close"] == early_close
        ]
        name = system if delay is None else f"{system} (watermark delay {delay} ms, early close {early_close})"
        summary[name] = {
            "p50_ms_median": statistics.median(r["latency"]["p50_ms"] for r in mine),
            "p99_ms_median": statistics.median(r["latency"]["p99_ms"] for r in mine),
            "p99_ms_runs": [r["latency"]["p99_ms"] for r in mine],
            "warmed_s_runs": [r["warmed_s"] for r in mine],
        }
        log(f"{name}: p50 {summary[name]['p50_ms_median']} ms, p99 {summary[name]['p99_ms_median']} ms (medians)")
    failed = [r for r in runs if not r["check"]["ok"]]
    fields = {
        "rate": args.rate,
        "summary": summary,
        "check": {"ok": not failed, "runs": len(runs), "failed": len(failed)},
        "runs": runs,
    }
    path = machine.write_results(args.results_dir, "latency", stamp, "latency_at_rate.py", argv, ROOT, fields)
    log(f"wrote {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
