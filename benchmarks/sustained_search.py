"""Benchmark 11's throughput search for one job, apart from its full run (which searches both jobs for both systems,
then measures latency, for about two hours and a half): each system in turn, with the probe of benchmark 11
(``harness/kafka_sustained.py``: priming, the warm-up until the lag has settled, 60 s measured, the same checks) and
its search (doubling from the start rate until a rate is not sustained, then bisecting).

    .venv/bin/python benchmarks/sustained_search.py [--job final_results|rate_limit] [--start-rate N]
        [--systems kafka-streams,spark-suppress]

``--start-rate`` (default: benchmark 11's, 50,000) skips the doublings that every system passes: from 400,000 the
search probes the same rates in the same order as from 50,000 once 50,000 to 200,000 are sustained, and has three
probes more to bisect with before it runs out (three of the four searches of 2026-11-29 ran out). Writes
``benchmarks/results/<UTC time>-sustained.json`` with the machine, each system's sustained rate and every probe.
Not part of ``make bench``; a failed check fails the command.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from datetime import datetime, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from harness import kafka_sustained as sustained  # noqa: E402
from harness import machine  # noqa: E402
from harness.config import FULL  # noqa: E402
from harness.measure import log  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--job", default="final_results", choices=sustained.JOBS)
    p.add_argument("--start-rate", type=int, default=FULL.kafka_sustained.start_rate)
    p.add_argument("--systems", default=",".join(sustained.SYSTEMS))
    p.add_argument("--results-dir", default=os.path.join(ROOT, "benchmarks", "results"))
    args = p.parse_args(argv)
    systems = args.systems.split(",")
    if not systems or any(s not in sustained.SYSTEMS for s in systems):
        p.error(f"--systems {args.systems!r}: give some of {', '.join(sustained.SYSTEMS)}, comma-separated")
    if args.start_rate <= 0:
        p.error(f"--start-rate {args.start_rate}: give a positive rate in records/s")
    sus = dataclasses.replace(FULL.kafka_sustained, start_rate=args.start_rate)
    stamp = datetime.now(timezone.utc)
    found = []
    with sustained.standalone(ROOT, "sustained_search", sus, FULL.window_ms) as env:
        for system in systems:
            rate, probes = sustained.search(lambda r, s=system: sustained.probe(env, s, args.job, r), sus)
            for probe in probes:
                probe.pop("lag_series", None)
            log(f"{system} {args.job}: sustained {rate:,} records/s ({len(probes)} probes)")
            found.append({"system": system, "sustained_records_per_s": rate, "probes": probes})
    failed = [p for s in found for p in s["probes"] if not p["check"]["ok"]]
    fields = {
        "job": args.job,
        "start_rate": args.start_rate,
        "systems": found,
        "check": {"ok": not failed, "probes": sum(len(s["probes"]) for s in found), "failed": len(failed)},
    }
    path = machine.write_results(args.results_dir, "sustained", stamp, "sustained_search.py", argv, ROOT, fields)
    log(f"wrote {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
