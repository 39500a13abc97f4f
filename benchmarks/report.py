#!/usr/bin/env python3
"""Markdown tables from a benchmark results file, and rewriting them into markdown files.

    benchmarks/report.py benchmarks/README.md   # rewrite the block between the markers in each file given
    benchmarks/report.py                        # print the tables
    benchmarks/report.py --results benchmarks/results/X.json benchmarks/README.md

Each file must contain the markers ``<!-- BENCH-TABLE -->`` and ``<!-- /BENCH-TABLE -->``, each on a line of its
own; everything between them is replaced. By default the tables come from the newest full run in
benchmarks/results (the newest run of any mode if there is no full one); a benchmark a full run did not run (benchmark
11 is never in `make bench`) comes from the newest full or partial run that did, and the tables say which.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys
from typing import Any, Dict, List, Optional

from harness import local_fs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS_DIR = os.path.join(ROOT, "benchmarks", "results")
START, END = "<!-- BENCH-TABLE -->", "<!-- /BENCH-TABLE -->"


def latest_results(results_dir: str = RESULTS_DIR, mode: Optional[str] = None) -> str:
    """The newest results file (names start with the UTC time), of ``mode`` if given, else preferring full runs."""
    files = sorted(glob.glob(os.path.join(results_dir, "*.json")))
    if mode is None:
        full = [f for f in files if f.endswith("-full.json")]
        files = full or files
    elif mode != "any":
        files = [f for f in files if f.endswith(f"-{mode}.json")]
    if not files:
        raise SystemExit(
            f"report.py: no {'' if mode in (None, 'any') else mode + ' '}results in {results_dir}; "
            "run `make bench` (or benchmarks/run.py) first"
        )
    return files[-1]


def carry_missing(results: Dict[str, Any], path: str, results_dir: str = RESULTS_DIR) -> Dict[str, str]:
    """Adds to ``results`` each benchmark it did not run from the newest full or partial run that did (benchmark 11
    is never in `make bench`, so a full run of it leaves it out); returns {benchmark: that run's file}. Runs of
    another Spark line and quick runs never count: their numbers are not the default line's. A run on the same local
    file system (run.py --local-fs) comes first, whose fixed costs are the same; one on another counts only where
    none did, and the tables then say which file system it ran on."""
    carried: Dict[str, str] = {}
    files = [
        f
        for f in sorted(glob.glob(os.path.join(results_dir, "*.json")), reverse=True)
        if os.path.abspath(f) != os.path.abspath(path) and f.endswith(("-full.json", "-full-partial.json"))
    ]
    found = {}
    for other in files:
        with open(other) as fh:
            found[other] = json.load(fh)
    # Newest first, those on the run's own file system before the others (the sort is stable).
    for other in sorted(files, key=lambda f: run_fs(found[f]) != run_fs(results)):
        for name, b in found[other].get("benchmarks", {}).items():
            if name not in results["benchmarks"] and name not in (results.get("errors") or {}):
                results["benchmarks"][name] = dict(b, local_fs=run_fs(found[other]))
                carried[name] = other
    return carried


def run_fs(results: Dict[str, Any]) -> str:
    """The local file system a run's Spark systems wrote through (runs before the option: Hadoop's own)."""
    return results.get("local_fs") or local_fs.HADOOP


LOCAL_FS = {
    local_fs.HADOOP: "Hadoop's local file system as PySpark ships it (a child process per file created and renamed)",
    local_fs.FORK_FREE: "Hadoop's local file system without its child processes (run.py --local-fs forkfree)",
}


def _carried(carried: Dict[str, str], link_dir: str, results: Dict[str, Any]) -> List[str]:
    if not carried:
        return []

    def on(name: str) -> str:
        fs = results["benchmarks"][name].get("local_fs", run_fs(results))
        return "" if fs == run_fs(results) else f", on {LOCAL_FS[fs]}"

    parts = [
        f"{name} from `{os.path.relpath(os.path.abspath(f), ROOT)}`{on(name)}"
        + "".join(f" ([plot]({os.path.relpath(g, link_dir)}))" for g in _plot_files(f, name))
        for name, f in sorted(carried.items())
    ]
    return ["", "Not run by this run, so taken from the newest run that did: " + "; ".join(parts) + "."]


def _n(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}"


def _ratio(x: Optional[float]) -> str:
    return "" if x is None else f"{x:.2f}"


def _header(results: Dict[str, Any], source: Optional[str]) -> List[str]:
    m, v = results["machine"], results["versions"]
    parts = [
        f"Spark {v.get('spark', v.get('pyspark', '?'))}",
        f"Scala {v.get('scala', '?')}",
        f"Python {v.get('python', '?')}",
        f"spark-suppress {v.get('spark-suppress', '?')}",
    ]
    if "kafka-streams" in v:
        parts.append(f"Kafka Streams {v['kafka-streams']}")
    lines = [
        f"Measured {results['date']} ({results['mode']} run"
        f"{', commit ' + results['git_commit'] if results.get('git_commit') else ''}) "
        f"on {m['cpu_model']}, {m['cores']} cores, {m['memory_gb']} GB, {m['os']}; {m['java'].split(' / ')[0]}; "
        + ", ".join(parts)
        + ".",
    ]
    lines[0] += f" Spark's checkpoints and outputs: {LOCAL_FS[run_fs(results)]}."
    load = results.get("load_average") or {}
    if load:
        lines[0] += f" Load average at start/end: {load.get('start')}/{load.get('end')}."
    if source:
        lines[0] += f" Source: `{source}`."
    return lines


# Benchmarks with a row per system (and job) in the throughput table, in the order of benchmarks/README.md.
THROUGHPUT = [
    "final_results",
    "rate_limit",
    "window_kinds",
    "python_stateful",
    "large_state",
    "kafka_streams",
    "join",
    "chains",
]


def _spread(system: Dict[str, Any]) -> str:
    """The fastest and slowest of a system's measured runs and how many there were (its Seconds are their median):
    how far a ratio of two medians can move from one run to the next. Empty for a single run."""
    seconds = [r["seconds"] for r in system["runs"]]
    if len(seconds) < 2:
        return ""
    return f"{min(seconds):.2f}-{max(seconds):.2f} ({len(seconds)})"


def _throughput(results: Dict[str, Any]) -> List[str]:
    rows = []
    for name in THROUGHPUT:
        b = results["benchmarks"].get(name)
        if not b:
            continue
        for s in b["systems"]:
            rows.append(
                f"| {b['title']} | {s['label']} | {_n(s['records'])} | {s['seconds']:.2f} | {_spread(s)} | "
                f"{_n(s['records_per_s'])} | {_ratio(s.get('time_ratio_to_anchor'))} | "
                f"{_ratio(s.get('time_ratio_to_floor'))} |"
            )
    if not rows:
        return []
    return [
        "",
        "| Benchmark | System | Records | Seconds | Runs: fastest-slowest (n) | Records/s | Time vs anchor | "
        "Time vs floor |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ] + rows


def _breakdown(results: Dict[str, Any]) -> List[str]:
    """Where each system's time went (its median run), from Spark's progress reports and event log."""
    rows = []
    for name in THROUGHPUT:
        b = results["benchmarks"].get(name)
        for s in (b or {}).get("systems", []):
            d = s.get("breakdown")
            if not d:
                continue
            ph = d.get("phases") or {}
            driver = sum(v for k, v in ph.items() if k not in ("triggerExecution", "addBatch"))
            cells = [
                b["title"],
                s["label"],
                f"{ph.get('triggerExecution', 0) / 1000:.2f}",
                f"{ph.get('addBatch', 0) / 1000:.2f}",
                f"{driver / 1000:.2f}",
            ]
            for group in ("map", "result"):
                g = d.get(group)
                cells.append(
                    ""
                    if not g
                    else f"{g['stage_wall_ms'] / 1000:.2f} ({g['task_run_ms'] / 1000:.2f} / "
                    f"{g['task_cpu_ms'] / 1000:.2f} / {g['gc_ms'] / 1000:.2f})"
                )
            top = []
            for group in ("map", "result"):
                for k, v in ((d.get(group) or {}).get("operator_metrics") or {}).items():
                    if k.endswith("(ms)") and not k.startswith("WholeStageCodegen"):
                        top.append((v, f"{group}: {k[:-5]} {v / 1000:.2f}"))
            cells.append("; ".join(t for _, t in sorted(top, key=lambda x: -x[0])[:3]))
            rows.append("| " + " | ".join(cells) + " |")
    if not rows:
        return []
    return [
        "",
        "Where the time went (the median run of each system; seconds summed over its micro-batches, and for "
        "the stages over their tasks, which run two at a time):",
        "",
        "| Benchmark | System | Batches | addBatch | Other batch phases | Map stages: wall (task run / CPU / GC) | "
        "Result stages: wall (task run / CPU / GC) | Largest operator timings |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ] + rows


def _buffer_core(results: Dict[str, Any]) -> List[str]:
    b = results["benchmarks"].get("buffer_core")
    if not b:
        return []
    lines = [
        "",
        "| Buffer operation (JMH) | spark-suppress ops/s | Kafka Streams ops/s | Speed-up | Worst case (99.9% CIs) |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for op in b["operations"]:
        ours, kafka = op.get("spark-suppress"), op.get("kafka-streams")
        if not ours or not kafka:
            continue
        lines.append(
            f"| {op['operation']} | {_n(ours['ops_per_s'])} | {_n(kafka['ops_per_s'])} | "
            f"{op['speedup']:.2f}x | {op['speedup_worst_case']:.2f}x |"
        )
    return lines


def _scaling(results: Dict[str, Any]) -> List[str]:
    b = results["benchmarks"].get("scaling")
    if not b:
        return []
    lines = [
        "",
        "| Scaling | Records | Keys | µs/record (steady) | First data batch (s) | Keys in state | State rows | "
        "State bytes/row (memory) | State bytes/key (memory) | Beyond user bytes (memory) | Encoded bytes/key | "
        "Encoded beyond user bytes |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]

    def cell(p, field, digits=0):
        return "" if p.get(field) is None else _n(p[field], digits)

    for c in b["curves"]:
        name = c["system"] + (" (reference)" if c.get("role") == "reference" else "")
        for p in c["points"]:
            lines.append(
                f"| {name} | {_n(p['records'])} | {_n(p['keys'])} | {p['steady_us_per_record']:.2f} | "
                f"{cell(p, 'first_data_batch_seconds', 2)} | {_n(p['buffered_keys'])} | "
                f"{cell(p, 'state_rows')} | {cell(p, 'state_memory_bytes_per_row')} | "
                f"{_n(p['state_memory_bytes_per_key'])} | {_n(p['state_overhead_bytes_per_key'])} | "
                f"{cell(p, 'state_encoded_bytes_per_key')} | {cell(p, 'encoded_overhead_bytes_per_key')} |"
            )
    if b.get("definitions"):
        lines += [
            "",
            "Scaling: µs/record (steady) is the time of the data micro-batches after the first (a lead-in "
            "file that carries the query's one-time costs, timed apart) per record they read; state is "
            "Spark's `stateOnCurrentVersionSizeBytes` at the last data batch. spark-native (reference) is "
            "Spark's own `groupBy(window, key).count()` on the same event sets: one state row per open "
            "window and key.",
        ]
    return lines


def _large_state(results: Dict[str, Any]) -> List[str]:
    b = results["benchmarks"].get("large_state")
    if not b:
        return []
    lines = [
        "",
        "| Large state (RocksDB) | Keys | Seconds | µs/record (steady) | State rows | SST bytes | "
        "SST bytes/row | SST bytes/key |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for system, points in b["curves"].items():
        for p in points:
            per_row = "" if p["state_sst_bytes_per_row"] is None else _n(p["state_sst_bytes_per_row"])
            lines.append(
                f"| {system} | {_n(p['keys'])} | {p['seconds']:.2f} | {p['steady_us_per_record']:.2f} | "
                f"{_n(p['state_rows'])} | {_n(p['state_sst_bytes'])} | {per_row} | "
                f"{_n(p['state_sst_bytes_per_key'])} |"
            )
    growth = b.get("cost_growth") or {}
    if growth:
        lines += [
            "",
            "Large state: steady cost per record at the most keys over that at the fewest (1 = flat): "
            + ", ".join(f"{k} x{v:.2f}" for k, v in growth.items())
            + ".",
        ]
    to_bare = [r for r in b["systems"] if r.get("time_ratio_to_reference") is not None]
    if to_bare:
        lines += [
            "",
            "Large state: spark-suppress's time over the hand-written `flatMapGroupsWithState`'s (the same grouping, "
            "none of Kafka's rules): "
            + ", ".join(f"{_n(r['keys'])} keys x{r['time_ratio_to_reference']:.2f}" for r in to_bare)
            + ".",
        ]
    return lines


def _kafka(results: Dict[str, Any]) -> List[str]:
    b = results["benchmarks"].get("kafka_streams")
    if not b:
        return []
    lines = [
        "",
        "| Kafka end to end | Runs: first event produced -> last final result consumed (s) | "
        "Of which starting (s) | Producing took (s) | Records/s (median run) |",
        "| --- | --- | --- | --- | ---: |",
    ]

    def each(runs: List[Dict[str, Any]], field: str) -> str:  # runs from before the start-up share was recorded
        return ", ".join(f"{r[field]:.2f}" if field in r else "-" for r in runs)

    for s in b["systems"]:
        lines.append(
            f"| {s['label']} | {each(s['runs'], 'seconds')} | {each(s['runs'], 'started_seconds')} | "
            f"{each(s['runs'], 'produce_seconds')} | {_n(s['records_per_s'])} |"
        )
    return lines


def _kafka_sustained(results: Dict[str, Any]) -> List[str]:
    """Benchmark 11, beside benchmark 9's cold starts: sustained rates, then final-result latencies by load."""
    b = results["benchmarks"].get("kafka_sustained")
    if not b:
        return []
    lines = [
        "",
        "| Kafka under sustained load | Job | Sustained records/s | Probes: rate (sustained?) |",
        "| --- | --- | ---: | --- |",
    ]
    for s in b["systems"]:
        probes = ", ".join(f"{_n(p['rate'])} ({'yes' if p['sustained'] else 'no'})" for p in s["probes"])
        lines.append(f"| {s['system']} | {s['job']} | {_n(s['sustained_records_per_s'])} | {probes} |")
    rows = [r for r in b["latency"] if not r.get("trigger_trial")]
    if rows:
        lines += [
            "",
            "| Final-result latency (ms) | Load | Offered records/s | Trigger | p50 | p99 | Windows |",
            "| --- | ---: | ---: | --- | ---: | ---: | ---: |",
        ]
        for r in sorted(rows, key=lambda r: (r["system"], r["load_share"])):
            lat = r["latency"]
            lines.append(
                f"| {r['system']} | {r['load_share']:.0%} | {_n(r['rate'])} | {r['trigger']} | {lat['p50_ms']} | "
                f"{lat['p99_ms']} | {_n(lat['windows'])} |"
            )
    lines += [""] + [f"Note (sustained load): {n}." for n in b.get("notes", [])]
    return lines


def _chains(results: Dict[str, Any]) -> List[str]:
    b = results["benchmarks"].get("chains")
    if not b:
        return []
    lines = [
        "",
        "| Chain: end-to-end delay of a final row (median run) | Seconds | Micro-batches: median / p95 | "
        "Seconds: median / p95 |",
        "| --- | ---: | ---: | ---: |",
    ]
    for s in b["systems"]:
        d = s.get("delay") or {}
        if not d.get("rows"):
            continue
        lines.append(
            f"| {s['label']} | {s['seconds']:.2f} | {d['batches']['median']:g} / {d['batches']['p95']:g} | "
            f"{d['seconds']['median']:.2f} / {d['seconds']['p95']:.2f} |"
        )
    lines += [
        "",
        "Chain delay: from the start of the micro-batch that read a final row's last input record to the end "
        "of the micro-batch that wrote the row (benchmarks/README.md, benchmark 10).",
    ]
    return lines


def _targets(results: Dict[str, Any]) -> List[str]:
    rows = []
    for name, b in results["benchmarks"].items():
        for t in b.get("targets", []):
            verdict = "met" if t["met"] else f"missed (x{t['missed_by']})"
            rows.append(
                f"| {b['title']} | {t['target']} | {t['comparison']} {t['threshold']}{t['unit'] and ' ' + t['unit']} | "
                f"{t['value']} | {verdict} |"
            )
    if not rows:
        return []
    return ["", "| Benchmark | Target | Wanted | Measured | Verdict |", "| --- | --- | --- | ---: | --- |"] + rows


def _notes(results: Dict[str, Any]) -> List[str]:
    lines = []
    for name, b in results["benchmarks"].items():
        for system, why in (b.get("skipped_systems") or {}).items():
            lines.append(f"- {name}: {system} not measured: {why}.")
        check = b.get("check") or {}
        for key in ("same_final_rows", "ok", "every_record_joined_once", "joined_as_of_kafka_rule"):
            if key in check:
                lines.append(f"- {b['title']}: result check `{key}` = {check[key]}.")
        wrong = {s["system"]: s["wrong_rows"] for s in b.get("systems", []) if "wrong_rows" in s}
        if wrong:
            lines.append(
                f"- {b['title']}: rows not joined with the version valid at the record's timestamp: "
                + ", ".join(f"{n} {w:,}" for n, w in wrong.items())
                + "."
            )
    for name, error in (results.get("errors") or {}).items():
        lines.append(f"- {name} failed: {error.splitlines()[0]}")
    return [""] + lines if lines else []


def _plot_files(results_path: str, benchmark: str = "*") -> List[str]:
    """The plots a run wrote next to its JSON: ``<stem>-<benchmark>.png``."""
    stem = os.path.abspath(results_path)[: -len(".json")]
    return sorted(glob.glob(glob.escape(stem) + f"-{benchmark}.png"))


def _plots(results_path: Optional[str], link_dir: str) -> List[str]:
    """Links to the run's plots (written next to its JSON), relative to the directory of the file they go in."""
    if not results_path:
        return []
    stem = results_path[: -len(".json")]
    found = _plot_files(results_path)
    if not found:
        return []
    links = [
        f"[{os.path.basename(f)[len(os.path.basename(stem)) + 1 : -len('.png')]}]({os.path.relpath(f, link_dir)})"
        for f in found
    ]
    return ["", "Plots of this run: " + ", ".join(links) + "."]


def summary(
    results: Dict[str, Any],
    source: Optional[str] = None,
    results_path: Optional[str] = None,
    link_dir: str = ROOT,
    carried: Optional[Dict[str, str]] = None,
) -> str:
    lines = _header(results, source) + _plots(results_path, link_dir) + _carried(carried or {}, link_dir, results)
    for part in (
        _throughput,
        _breakdown,
        _buffer_core,
        _scaling,
        _large_state,
        _kafka,
        _kafka_sustained,
        _chains,
        _targets,
        _notes,
    ):
        lines += part(results)
    return "\n".join(lines) + "\n"


def rewrite(markdown_path: str, table: str) -> None:
    with open(markdown_path) as fh:
        text = fh.read()
    # Only markers on lines of their own count: prose that names them (benchmarks/README.md does) is left alone.
    start = next((m.start() for m in re.finditer(rf"^{re.escape(START)}$", text, re.M)), -1)
    end = next((m.start() for m in re.finditer(rf"^{re.escape(END)}$", text, re.M)), -1)
    if start < 0 or end < 0 or end < start:
        raise SystemExit(
            f"report.py: {markdown_path} needs the markers {START} and {END} (in that order) around "
            "the place for the table"
        )
    with open(markdown_path, "w") as fh:
        fh.write(text[: start + len(START)] + "\n" + table + text[end:])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("markdown", nargs="*", help="files whose marked block is rewritten")
    p.add_argument("--results", help="a results JSON (default: the newest in --results-dir)")
    p.add_argument("--results-dir", default=RESULTS_DIR)
    p.add_argument(
        "--mode",
        choices=["full", "quick", "any"],
        default=None,
        help="which runs count as newest (default: full runs if there are any)",
    )
    args = p.parse_args(argv)
    path = args.results or latest_results(args.results_dir, args.mode)
    with open(path) as fh:
        results = json.load(fh)
    source = os.path.relpath(os.path.abspath(path), ROOT)
    carried = carry_missing(results, path, args.results_dir) if results.get("mode") == "full" else {}
    if not args.markdown:
        sys.stdout.write(summary(results, source, os.path.abspath(path), os.getcwd(), carried))
    for md in args.markdown:
        link_dir = os.path.dirname(os.path.abspath(md))
        rewrite(md, summary(results, source, os.path.abspath(path), link_dir, carried))
        print(f"report.py: rewrote the benchmark table in {md} from {os.path.relpath(path, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
