"""Conformance runner: every Kafka-derived vector through the real Spark operators, one record per micro-batch.

Usage: python tests/conformance/run.py [--only SUBSTRING] [--chains-only | --no-chains]   (vectors from
$CONFORMANCE_DIR, default tests/conformance/vectors, and chain vectors from $CHAINS_DIR, several joined by ':', default
the folders `chains` and `chains_filter` beside them). Prints PASS/FAIL/SKIP per vector and a total; exits 1 on any
failure.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
# tests/ itself too: its helper modules (connect_server, session_conf) import each other by their own names.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.conformance import chain_cases, emit_cases, join_cases, suppress_cases  # noqa: E402
from tests.conformance.common import Mismatch, Skip, load_vectors, vector_dir  # noqa: E402

# SPARK_SUPPRESS_CONNECT=1 (make conformance-connect): the same vectors through a Spark Connect session, served by
# an in-process local Connect server on loopback with spark-suppress's plugins; nothing else changes.
CONNECT = os.environ.get("SPARK_SUPPRESS_CONNECT") == "1"


def chains_dirs() -> List[str]:
    """The chain vectors' folders: $CHAINS_DIR (several joined with os.pathsep), else the folders `chains` and
    `chains_filter` beside the vectors' that exist."""
    explicit = os.environ.get("CHAINS_DIR")
    if explicit:
        return [d for d in explicit.split(os.pathsep) if d]
    beside = os.path.dirname(vector_dir())
    folders = [os.path.normpath(os.path.join(beside, f)) for f in ("chains", "chains_filter")]
    return [d for d in folders if os.path.isdir(d)]


def session():
    from pyspark.sql import SparkSession
    from session_conf import quick

    import spark_suppress as ss

    conf = {
        # One state partition, as the Kafka tests run one task: buffer bounds hold per partition.
        "spark.sql.shuffle.partitions": "1",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.streaming.noDataMicroBatches.enabled": "true",
    }
    if CONNECT:
        from tests import connect_server

        spark, _ = connect_server.start("spark-suppress-conformance", conf)
        connect_server.server_session().sparkContext.setLogLevel("ERROR")
        return spark
    conf = quick(conf)
    builder = SparkSession.builder.master("local[2]").appName("spark-suppress-conformance").config(map=conf)
    spark = ss.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def handlers():
    """The module that runs each vector feature: its ``run``, and optionally ``skip_reason(v)`` (why a vector cannot
    run here, e.g. a Kafka-only error, decided from its config) and ``optional_note(v)`` (added to an optional
    vector's reason)."""
    return {"suppress": suppress_cases, "emit_strategy": emit_cases, "grace_join": join_cases}


def skip_reason(module, v) -> Optional[str]:
    """Why a vector is skipped (optional, or what its config needs has no counterpart here), or None when it runs.

    Decided from the vector's fields, never its id: the runner must work on vectors it has not seen."""
    if "optional" in v:
        note = getattr(module, "optional_note", lambda _: None)(v)
        return f"optional: {v['optional']}" + (f"; {note}" if note else "")
    reason = getattr(module, "skip_reason", None)
    return reason(v) if reason is not None else None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", default=None, help="run only vectors whose id contains this")
    parser.add_argument(
        "--join-stream-watermark",
        action="store_true",
        help="run the stream-table join vectors only, their stream with a 0-second watermark (the join "
        "then also releases starved shards on it; Kafka's timing must hold)",
    )
    chains = parser.add_mutually_exclusive_group()
    chains.add_argument("--chains-only", action="store_true", help="run only the chain vectors")
    chains.add_argument("--no-chains", action="store_true", help="run only the single-operator vectors")
    parser.add_argument(
        "--jobs",
        type=int,
        default=int(os.environ.get("CONFORMANCE_JOBS", "1")),
        help="vectors run at once, each its own query (default 1, or $CONFORMANCE_JOBS)",
    )
    args = parser.parse_args(argv)
    if args.join_stream_watermark:
        join_cases.STREAM_WATERMARK = "0 seconds"

    directory = vector_dir()
    vectors = [] if args.chains_only else load_vectors(directory)
    print(f"conformance vectors from {directory}: {len(vectors)}" + (" (Spark Connect)" if CONNECT else ""))
    for chains in [] if args.no_chains else chains_dirs():
        chain_vectors = load_vectors(chains)
        print(f"chain vectors from {chains}: {len(chain_vectors)}")
        vectors += chain_vectors
    spark = session()
    table = handlers()

    def run_one(i: int, family: str, v: dict) -> Tuple[str, str]:
        """(PASS | FAIL | SKIP | "", the line to print) for one vector; "" for a vector this run leaves out."""
        vid = v["id"]
        if args.only and args.only not in vid:
            return "", ""
        started = time.time()
        module = chain_cases if chain_cases.handles(v) else table.get(v.get("feature"))
        if args.join_stream_watermark and module is not join_cases:
            return "", ""
        try:
            if module is None:
                raise Mismatch(f"no runner for feature {v.get('feature')!r} (from {family})")
            reason = skip_reason(module, v)
            if reason is not None:
                raise Skip(reason)
            module.run(spark, v, f"v{i}")
        except Skip as s:
            return "SKIP", f"SKIP {vid}: {s}"
        except Mismatch as m:
            return "FAIL", f"FAIL {vid}: {m}"
        except Exception as e:  # an unexpected error is a failure with its cause
            if os.environ.get("CONFORMANCE_TRACEBACK"):
                traceback.print_exc()
            return "FAIL", f"FAIL {vid}: {type(e).__name__}: {str(e)[:500]}"
        return "PASS", f"PASS {vid} ({time.time() - started:.1f}s)"

    # Each vector is its own query on its own input, so --jobs N runs N at once (one record per micro-batch leaves
    # the cores mostly idle); lines print in the vectors' order whatever order they finish in.
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(run_one, i, family, v) for i, (family, v) in enumerate(vectors)]
        for future in futures:
            status, line = future.result()
            if status:
                counts[status] += 1
                print(line, flush=True)
    passed, failed, skipped = counts["PASS"], counts["FAIL"], counts["SKIP"]
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    if CONNECT:
        from tests import connect_server

        connect_server.stop(spark)
    else:
        spark.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
