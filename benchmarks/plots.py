#!/usr/bin/env python3
"""PNG plots of a results file, written next to it: ``<results stem>-<benchmark>.png``.

benchmarks/plots.py [RESULTS.json]     # default: the newest results file
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict, List

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"anchor": "#7f7f7f", "floor": "#bcbd22", "library": "#1f77b4", "python": "#d62728", "reference": "#9467bd"}


def _bars(ax, systems: List[Dict[str, Any]], title: str) -> None:
    labels = [s["label"] for s in systems]
    values = [s["records_per_s"] for s in systems]
    colors = [COLORS.get(s["role"], "#333333") for s in systems]
    y = range(len(systems))
    ax.barh(y, values, color=colors)
    ax.set_yticks(list(y))
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("records per second (log scale; higher is better)")
    ax.set_title(title, fontsize=10)
    for i, s in enumerate(systems):
        note = f" {s['records_per_s']:,.0f}/s"
        if s.get("time_ratio_to_anchor") is not None:
            note += f"  time x{s['time_ratio_to_anchor']:.2f} of anchor"
        elif s.get("time_ratio_to_floor") is not None:
            note += f"  time x{s['time_ratio_to_floor']:.2f} of floor"
        ax.text(values[i], i, note, va="center", fontsize=7)
    ax.set_xlim(min(values) / 2, max(values) * 20)


def _save(fig, out: str) -> bool:
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return True


# Benchmarks whose systems are plotted as records/s bars (one bar per system and job).
THROUGHPUT = ["final_results", "rate_limit", "window_kinds", "python_stateful", "large_state", "kafka_streams"]


def throughput(results: Dict[str, Any], name: str, out: str) -> bool:
    b = results["benchmarks"].get(name)
    if not b:
        return False
    fig, ax = plt.subplots(figsize=(9, 0.6 * len(b["systems"]) + 1.5))
    records = b["params"].get("records", b["params"].get("stream_records"))
    _bars(ax, b["systems"], f"{b['title']} ({records:,} records)")
    return _save(fig, out)


def buffer_core(results: Dict[str, Any], out: str) -> bool:
    b = results["benchmarks"].get("buffer_core")
    if not b:
        return False
    ops = [o for o in b["operations"] if "spark-suppress" in o and "kafka-streams" in o]
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.38
    for j, (buffer, color) in enumerate([("spark-suppress", COLORS["library"]), ("kafka-streams", COLORS["anchor"])]):
        xs = [i + (j - 0.5) * width for i in range(len(ops))]
        vals = [o[buffer]["ops_per_s"] / 1e6 for o in ops]
        lo = [v - o[buffer]["ops_per_s_ci"][0] / 1e6 for v, o in zip(vals, ops)]
        hi = [o[buffer]["ops_per_s_ci"][1] / 1e6 - v for v, o in zip(vals, ops)]
        ax.bar(xs, vals, width, yerr=[lo, hi], capsize=3, color=color, label=buffer)
    ax.set_xticks(range(len(ops)))
    ax.set_xticklabels([f"{o['operation']}\n(x{o['speedup']:.2f})" for o in ops])
    ax.set_ylabel("million operations per second")
    ax.set_title("Suppression buffer: spark-suppress vs Kafka Streams (JMH, 99.9% CI)", fontsize=10)
    ax.legend()
    return _save(fig, out)


def scaling(results: Dict[str, Any], out: str) -> bool:
    b = results["benchmarks"].get("scaling")
    if not b:
        return False
    p = b["params"]
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    for c in b["curves"]:
        along_records = sorted(
            (pt for pt in c["points"] if pt["keys"] == p["fixed_keys"]), key=lambda pt: pt["records"]
        )
        along_keys = sorted(
            (pt for pt in c["points"] if pt["records"] == p["fixed_records"]), key=lambda pt: pt["keys"]
        )
        reference = c.get("role") == "reference"
        fmt, style = ("o:", dict(color=COLORS["anchor"])) if reference else ("o-", {})
        name = c["system"] + (" (reference)" if reference else "")
        if not reference:  # the reference runs at the fixed number of records only
            axes[0].plot(
                [pt["records"] for pt in along_records],
                [pt["steady_us_per_record"] for pt in along_records],
                "o-",
                label=f"{name} (steady)",
            )
            axes[0].plot(
                [pt["records"] for pt in along_records],
                [pt["us_per_record"] for pt in along_records],
                "o--",
                alpha=0.5,
                label=f"{name} (wall)",
            )
        axes[1].plot(
            [pt["keys"] for pt in along_keys],
            [pt["steady_us_per_record"] for pt in along_keys],
            fmt,
            label=name,
            **style,
        )
        axes[2].plot(
            [pt["keys"] for pt in along_keys],
            [pt["state_overhead_bytes_per_key"] for pt in along_keys],
            fmt,
            label=f"{name}: in memory",
            **style,
        )
        if not reference:
            axes[2].plot(
                [pt["keys"] for pt in along_keys],
                [pt["encoded_overhead_bytes_per_key"] for pt in along_keys],
                "s--",
                label=f"{name}: encoded",
            )
    axes[0].set_title(f"time per record vs records ({p['fixed_keys']:,} keys)", fontsize=10)
    axes[1].set_title(f"time per record vs keys ({p['fixed_records']:,} records)", fontsize=10)
    axes[2].set_title("state bytes per buffered key beyond the user's", fontsize=10)
    axes[2].axhline(200, color="#999999", linestyle=":", label="target 200 B")
    for ax, xl, yl in (
        (axes[0], "records", "µs per record"),
        (axes[1], "distinct keys", "µs per record"),
        (axes[2], "distinct keys", "bytes per buffered key"),
    ):
        ax.set_xscale("log")
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7)
    return _save(fig, out)


def join(results: Dict[str, Any], out: str) -> bool:
    b = results["benchmarks"].get("join")
    if not b:
        return False
    grace = [s for s in b["systems"] if s["system"].startswith("grace-")]
    static = next((s for s in b["systems"] if s["system"] == "stream-static"), None)
    xs = [int(s["system"][len("grace-") : -2]) / 1000 for s in grace]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    axes[0].plot(xs, [s["records_per_s"] for s in grace], "o-", color=COLORS["library"], label="join_versioned")
    if static:
        axes[0].axhline(static["records_per_s"], color=COLORS["anchor"], linestyle="--", label="stream-static join")
    axes[0].set_xlabel("grace (s)")
    axes[0].set_ylabel("stream records per second")
    axes[0].set_ylim(bottom=0)
    axes[0].set_title("join throughput vs grace", fontsize=10)
    axes[0].legend(fontsize=8)
    axes[1].plot(xs, [s.get("peak_state_bytes", 0) / 1e6 for s in grace], "o-", color=COLORS["library"])
    axes[1].set_xlabel("grace (s)")
    axes[1].set_ylabel("peak state in memory (MB)")
    axes[1].set_title("state of the join vs grace", fontsize=10)
    return _save(fig, out)


def chains(results: Dict[str, Any], out: str) -> bool:
    b = results["benchmarks"].get("chains")
    if not b:
        return False
    systems = b["systems"]
    names = [s["system"] for s in systems]
    colors = [COLORS.get(s["role"], "#333333") for s in systems]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    axes[0].bar(names, [s["seconds"] for s in systems], color=colors)
    axes[0].set_ylabel("seconds (median run)")
    axes[0].set_title(f"total time, {b['params']['records']:,} records", fontsize=10)
    for i, s in enumerate(systems):
        axes[0].text(
            i,
            s["seconds"],
            f"{s['seconds']:.1f} s (x{s.get('time_ratio_to_anchor', 1):.2f})",
            ha="center",
            va="bottom",
            fontsize=8,
        )
    for ax, unit in ((axes[1], "seconds"), (axes[2], "batches")):
        width = 0.38
        for j, stat in enumerate(("median", "p95")):
            xs = [i + (j - 0.5) * width for i in range(len(systems))]
            ax.bar(
                xs,
                [(s.get("delay") or {}).get(unit, {}).get(stat, 0) for s in systems],
                width,
                color=colors,
                alpha=1.0 if stat == "median" else 0.5,
                label=stat,
            )
        ax.set_xticks(range(len(systems)))
        ax.set_xticklabels(names)
        ax.set_ylabel(f"delay ({unit})")
        ax.set_title(f"delay of a final row ({unit}): median, p95 paler", fontsize=10)
    return _save(fig, out)


def kafka_sustained(results: Dict[str, Any], out: str) -> bool:
    """Final-result latency (p50 solid, p99 dashed) against offered load, one line per system; the sustained
    rates in the title."""
    b = results["benchmarks"].get("kafka_sustained")
    if not b or not b["latency"]:
        return False
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for system, color in (("kafka-streams", COLORS["anchor"]), ("spark-suppress", COLORS["library"])):
        rows = sorted(
            (r for r in b["latency"] if r["system"] == system and not r.get("trigger_trial")), key=lambda r: r["rate"]
        )
        rows = [r for r in rows if r["latency"]["windows"]]
        if not rows:
            continue
        trigger = f", trigger {rows[0]['trigger']}" if system == "spark-suppress" else ""
        for stat, style in (("p50_ms", "o-"), ("p99_ms", "s--")):
            ax.plot(
                [r["rate"] for r in rows],
                [r["latency"][stat] / 1000 for r in rows],
                style,
                color=color,
                label=f"{system} {stat[:3]}{trigger}",
            )
    rates = "\n".join(
        f"{job}: "
        + ", ".join(f"{s['system']} {s['sustained_records_per_s']:,}/s" for s in b["systems"] if s["job"] == job)
        for job in dict.fromkeys(s["job"] for s in b["systems"])
    )
    ax.set_xlabel("offered records per second")
    ax.set_ylabel("seconds from the closing record to the final result")
    ax.set_ylim(bottom=0)
    ax.set_title(f"Final-result latency vs offered load; sustained records/s:\n{rates}", fontsize=8)
    ax.legend(fontsize=7)
    return _save(fig, out)


def write_all(results_path: str) -> List[str]:
    with open(results_path) as fh:
        results = json.load(fh)
    stem = os.path.splitext(results_path)[0]
    written = []
    bars = [(n, lambda r, o, n=n: throughput(r, n, o)) for n in THROUGHPUT]
    for name, fn in bars + [
        ("buffer_core", buffer_core),
        ("scaling", scaling),
        ("join", join),
        ("chains", chains),
        ("kafka_sustained", kafka_sustained),
    ]:
        out = f"{stem}-{name}.png"
        if fn(results, out):
            written.append(out)
    return written


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import report

    path = sys.argv[1] if len(sys.argv) > 1 else report.latest_results(mode="any")
    for png in write_all(path):
        print(png)
