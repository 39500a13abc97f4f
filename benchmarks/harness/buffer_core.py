"""Benchmark 3: the suppression buffer core against Kafka Streams' in-memory time-ordered buffer, with JMH.

The JMH benchmarks live in the sbt project ``bench`` (benchmarks/jvm): inserts, updates and evictions of the same
operation trace, and a whole rate-limiting suppression replayed on each buffer. Each fork runs one buffer only.
Check, once before JMH and outside its measurements (``BufferAgreement``): for each operation both buffers evict
the same records in the same order.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shlex
import subprocess
from typing import Any, Dict, List, Optional

from . import checks
from .measure import log, target

NAME = "buffer_core"
OPERATIONS = [
    ("insert", "BufferOperationsBenchmark.insert", "size"),
    ("update", "BufferOperationsBenchmark.update", "size"),
    ("evict", "BufferOperationsBenchmark.evict", "size"),
    ("suppress", "SuppressLoopBenchmark.suppress", "records"),
]
BUFFERS = ["spark-suppress", "kafka-streams"]


def _fingerprint(root: str) -> str:
    digest = hashlib.sha256()
    dirs = [
        os.path.join(root, "benchmarks", "jvm", "src"),
        os.path.join(root, "jvm", "src", "main", "scala", "io", "github", "sparksuppress", "core"),
    ]
    files = [os.path.join(root, "build.sbt")]
    for d in dirs:
        for base, _, names in os.walk(d):
            files += [os.path.join(base, n) for n in names]
    for f in sorted(files):
        digest.update(f.encode())
        with open(f, "rb") as fh:
            digest.update(fh.read())
    return digest.hexdigest()


def classpath(root: str, work_dir: str) -> str:
    """Compiles the benchmark project with sbt (only when its sources changed) and returns its runtime classpath."""
    cache = os.path.join(work_dir, "jvm-classpath.json")
    fingerprint = _fingerprint(root)
    if os.path.exists(cache):
        with open(cache) as fh:
            cached = json.load(fh)
        if cached.get("fingerprint") == fingerprint and all(
            os.path.exists(p) for p in cached["classpath"].split(os.pathsep)
        ):
            return cached["classpath"]
    log("compiling the JMH benchmarks (sbt bench/compile)")
    proc = subprocess.run(
        [
            os.path.join(root, "build", "sbt"),
            "-Dsbt.log.noformat=true",
            "bench/compile",
            "export bench/Runtime/fullClasspath",
        ],
        cwd=root,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"sbt bench/compile failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}")
    lines = [s for s in proc.stdout.splitlines() if "benchmarks" in s and os.pathsep in s and not s.startswith("[")]
    if not lines:
        raise RuntimeError(f"no classpath in sbt's output:\n{proc.stdout[-4000:]}")
    cp = lines[-1].strip()
    os.makedirs(work_dir, exist_ok=True)
    with open(cache, "w") as fh:
        json.dump({"fingerprint": fingerprint, "classpath": cp}, fh)
    return cp


def jar_version(cp: str, artifact: str) -> str:
    """The version of ``artifact``'s main jar on the classpath (Maven's file naming)."""
    for entry in cp.split(os.pathsep):
        name = os.path.basename(entry)
        if name.startswith(artifact + "-") and name.endswith(".jar"):
            version = name[len(artifact) + 1 : -len(".jar")]
            if version[:1].isdigit() and "-" not in version:
                return version
    return "unknown"


# The two JMH runs: evictions alone, with more forks and iterations (see config.py), and everything else.
EVICT_RUN = r"BufferOperationsBenchmark\.evict$"
OTHER_RUN = r"BufferOperationsBenchmark\.(insert|update)$|SuppressLoopBenchmark"


def jmh_command(cp: str, jmh: Dict[str, Any], out: str, evict: bool) -> List[str]:
    forks, iterations = (jmh["evict_forks"], jmh["evict_iterations"]) if evict else (jmh["forks"], jmh["iterations"])
    return [
        "java",
        "-cp",
        cp,
        "org.openjdk.jmh.Main",
        EVICT_RUN if evict else OTHER_RUN,
        "-f",
        str(forks),
        "-wi",
        str(jmh["warmup_iterations"]),
        "-i",
        str(iterations),
        "-w",
        str(jmh["iteration_time"]),
        "-r",
        str(jmh["iteration_time"]),
        "-p",
        f"size={jmh['size']}",
        "-p",
        f"records={jmh['records']}",
        "-p",
        f"distinctKeys={jmh['distinct_keys']}",
        "-p",
        f"timeLimitMs={jmh['time_limit_ms']}",
        "-p",
        f"maxRecords={jmh['max_records']}",
        "-rf",
        "json",
        "-rff",
        out,
    ] + shlex.split(os.environ.get("BENCH_JMH_ARGS", ""))


def _number(x) -> Optional[float]:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) or math.isinf(v) else v


def _ops_per_second(entry: Dict[str, Any], ops: int) -> Dict[str, Any]:
    m = entry["primaryMetric"]
    if m["scoreUnit"] != "ms/op":
        raise RuntimeError(f"unexpected JMH unit {m['scoreUnit']}")
    score = m["score"]
    raw = [v for fork in m.get("rawData", []) for v in fork]
    low, high = (_number(c) for c in m["scoreConfidence"])
    if low is None or high is None:  # too few measurements for JMH's interval: the range measured
        low, high = min(raw), max(raw)
    return {
        "ops_per_s": round(ops / (score / 1000), 1),
        # JMH's 99.9% confidence interval of the time (or the measured range), as operations per second
        "ops_per_s_ci": [round(ops / (high / 1000), 1), round(ops / (max(low, 1e-9) / 1000), 1)],
        "ms_per_invocation": round(score, 4),
        "ms_error_999": _number(m.get("scoreError")),
        "operations_per_invocation": ops,
        "measurements": len(raw),
    }


def agreement(cp: str, work_dir: str, jmh: Dict[str, Any]) -> Dict[str, Any]:
    """Both buffers driven through the traces JMH measures, their evictions compared per operation."""
    out = os.path.join(work_dir, "buffer-agreement")
    cmd = [
        "java",
        "-Xmx2g",
        "-cp",
        cp,
        "io.github.sparksuppress.bench.BufferAgreement",
        out,
        str(jmh["size"]),
        str(jmh["records"]),
        str(jmh["distinct_keys"]),
        str(jmh["time_limit_ms"]),
        str(jmh["max_records"]),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"BufferAgreement failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}")
    result: Dict[str, Any] = {"operations": {}}
    for op in ("insert", "update", "evict", "suppress"):
        files = [os.path.join(out, f"{b}-{op}.txt") for b in BUFFERS]
        with open(files[0]) as ours, open(files[1]) as kafka:
            result["operations"][op] = checks.compare_evictions(
                (s.rstrip("\n") for s in ours), (s.rstrip("\n") for s in kafka)
            )
    result["ok"] = all(c["same"] for c in result["operations"].values())
    return result


def run(root: str, work_dir: str, jmh: Dict[str, Any]) -> Dict[str, Any]:
    cp = classpath(root, work_dir)
    check = agreement(cp, work_dir, jmh)
    log(f"{NAME}: both buffers evict the same records in the same order: {check['ok']}")
    entries: List[Dict[str, Any]] = []
    failures: List[str] = []
    commands: List[str] = []
    for evict in (False, True):
        out = os.path.join(work_dir, "jmh-result-evict.json" if evict else "jmh-result.json")
        cmd = jmh_command(cp, jmh, out, evict)
        commands.append(" ".join(shlex.quote(c) for c in cmd[3:]))
        log("running JMH: " + commands[-1])
        if os.path.exists(out):
            os.remove(out)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0 or not os.path.exists(out):
            raise RuntimeError(f"JMH failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}")
        with open(out) as fh:
            entries += json.load(fh)
        failures += [s for s in proc.stdout.splitlines() if "<failure>" in s]
    operations: List[Dict[str, Any]] = []
    targets: List[Dict[str, Any]] = []
    for op, bench, ops_param in OPERATIONS:
        row: Dict[str, Any] = {"operation": op}
        for e in entries:
            if e["benchmark"].endswith(bench) and e["params"]["buffer"] in BUFFERS:
                row[e["params"]["buffer"]] = _ops_per_second(e, int(e["params"][ops_param]))
        if all(b in row for b in BUFFERS):
            ours, kafka = row["spark-suppress"], row["kafka-streams"]
            row["speedup"] = round(ours["ops_per_s"] / kafka["ops_per_s"], 3)
            # the least favourable ends of both intervals
            row["speedup_worst_case"] = round(ours["ops_per_s_ci"][0] / kafka["ops_per_s_ci"][1], 3)
            targets.append(target(f"{op}: operations per second over Kafka's buffer", row["speedup"], ">=", 1.5, "x"))
        operations.append(row)
        log(f"{NAME} {op}: " + ", ".join(f"{b} {row[b]['ops_per_s']:,.0f} ops/s" for b in BUFFERS if b in row))
    return {
        "title": "Suppression buffer core vs Kafka Streams' in-memory buffer (JMH)",
        "params": dict(jmh),
        "jmh_commands": commands,
        "versions": {
            "kafka-streams": jar_version(cp, "kafka-streams"),
            "jmh": jar_version(cp, "jmh-core"),
            "scala": jar_version(cp, "scala-library"),
        },
        "operations": operations,
        "check": check,
        "failures": failures,
        "targets": targets,
    }
