"""Shared pieces of the conformance runner: vectors, results, step-by-step comparison."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The repository's copy of the vectors (`make sync-vectors` refreshes it from ../shared/conformance).
DEFAULT_DIR = os.path.join(ROOT, "tests", "conformance", "vectors")
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def vector_dir() -> str:
    return os.environ.get("CONFORMANCE_DIR") or DEFAULT_DIR


def load_vectors(directory: str) -> List[Tuple[str, Dict[str, Any]]]:
    """All vectors of every ``*.json`` family file in ``directory``, with their file names."""
    out = []
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(directory, name)) as f:
            family = json.load(f)
        for v in family.get("vectors", []):
            out.append((name, v))
    return out


def ts(ms: int) -> datetime:
    """An aware UTC datetime for epoch milliseconds (Spark reads it as that instant)."""
    return EPOCH + timedelta(milliseconds=ms)


@dataclass
class Result:
    status: str  # PASS | FAIL | SKIP
    detail: str = ""


class Skip(Exception):
    """Raised by a handler: the vector cannot run here, for the given reason."""


class Mismatch(Exception):
    """Raised by a handler: the first difference between expected and actual."""


OutKey = Tuple[Any, ...]


def group_expected(
    expected: Iterable[Dict[str, Any]], key_of, value_of=lambda o: o["value"]
) -> Dict[int, Dict[OutKey, List[Tuple[Any, int]]]]:
    """Expected outputs by step, then by ``key_of(output)``: the ``(value_of(output), ts)`` pairs in listed order."""
    steps: Dict[int, Dict[OutKey, List[Tuple[Any, int]]]] = defaultdict(lambda: defaultdict(list))
    for o in expected:
        steps[o["after_seq"]][key_of(o)].append((value_of(o), o["ts"]))
    return steps


def records_by_step(records: Iterable[Dict[str, Any]], seq_field: str = "seq") -> Dict[int, List[Dict[str, Any]]]:
    steps: Dict[int, List[Dict[str, Any]]] = defaultdict(list)
    for r in records:
        steps[r[seq_field]].append(r)
    return steps


def compare_step(seq: int, expected: Dict[OutKey, List[Tuple[Any, int]]], actual: Dict[OutKey, List[Tuple[Any, int]]]):
    """Per key (and window) the outputs of a step must match in order; across keys order is free."""
    exp = {k: v for k, v in expected.items() if v}
    act = {k: v for k, v in actual.items() if v}
    if exp == act:
        return
    for k in sorted(set(exp) | set(act), key=repr):
        if exp.get(k, []) != act.get(k, []):
            raise Mismatch(f"after seq {seq}, key {k}: expected {exp.get(k, [])}, got {act.get(k, [])}")


def close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def metrics_by_step(v: Dict[str, Any], last_seq: int) -> Dict[int, Dict[str, float]]:
    """``expected_metrics`` by step: a list of ``{after_seq, metric: value}``, or one mapping meaning "after the run".

    Values that are not numbers (a note, a range in words) are left out: there is nothing to compare them with.
    """
    raw = v.get("expected_metrics")
    entries = [raw] if isinstance(raw, dict) else raw if isinstance(raw, list) else []
    out: Dict[int, Dict[str, float]] = defaultdict(dict)
    for e in entries:
        if not isinstance(e, dict):
            continue
        seq = e.get("after_seq", last_seq)
        if not _is_number(seq):
            continue
        for metric, value in e.items():
            if metric != "after_seq" and _is_number(value):
                out[int(seq)][metric] = float(value)
    return out


def check_metrics(query, name: str, wanted: Optional[Dict[str, float]], seq: int) -> None:
    if not wanted:
        return
    import spark_suppress as ss

    got = ss.metrics(query).get(name, {})
    for metric, want in wanted.items():
        if not close(got.get(metric, float("nan")), want):
            raise Mismatch(f"after seq {seq}: metric {metric} expected {want}, got {got.get(metric)}")


def run_steps(
    v: Dict[str, Any],
    name: str,
    driver,
    input_seqs: Iterable[int],
    expected: Dict[int, Dict[OutKey, List[Tuple[Any, int]]]],
    feed: Callable[[int], List[Any]],
    render: Callable[[Any], Tuple[OutKey, Tuple[Any, int]]],
    step_error: Optional[Callable[[int, Exception], None]] = None,
    after_step: Optional[Callable[[int], None]] = None,
) -> None:
    """Feed a vector one step at a time and compare each step's outputs and metrics with the vector's.

    ``feed(seq)`` runs step ``seq`` (also steps with no input record, which may still emit) and returns the rows
    emitted; ``render(row)`` turns one into ``(key, (value, ts))`` as ``expected`` groups them. With
    ``error_after_seq`` that step must raise (the micro-batch fails as a whole, so it emits nothing): ``step_error``
    checks the exception, raising :class:`Mismatch` when it is not the expected kind.
    """
    seqs = list(input_seqs)
    last = max(max(seqs, default=-1), max(expected, default=-1))
    metrics = metrics_by_step(v, last)
    error_step = v.get("error_after_seq")
    for seq in range(last + 1):
        if error_step is not None and seq == error_step:
            try:
                feed(seq)
            except Exception as e:
                if step_error is None:
                    raise Mismatch(f"after seq {seq}: no error is expected of this operator, got {str(e)[:300]}")
                step_error(seq, e)
                return
            raise Mismatch(f"after seq {seq}: expected {v.get('expected_error')}, but the step succeeded")
        actual: Dict[OutKey, List[Tuple[Any, int]]] = defaultdict(list)
        for row in feed(seq):
            key, out = render(row)
            actual[key].append(out)
        compare_step(seq, expected.get(seq, {}), actual)
        check_metrics(driver.query, name, metrics.get(seq), seq)
        if after_step is not None:
            after_step(seq)
    if error_step is not None:
        raise Mismatch(f"expected {v.get('expected_error')} after seq {error_step}, but the input ended before it")


def fails_at_build(v: Dict[str, Any]) -> bool:
    """The vector expects the operator to be refused while it is built (``error_at``), not while it runs."""
    return v.get("error_at") is not None and v.get("error_after_seq") is None


def expect_build_error(v: Dict[str, Any], kind: Optional[Tuple[str, str]], build: Callable[[], Any]) -> None:
    """``build()`` must refuse the configuration with the error ``kind``: ``(what, marker)``, derived from the
    vector's config, where ``marker`` is a part of our own message for it (None: the config shows no reason).

    Kafka's exception class and wording differ from ours, so the vector's ``expected_error`` text is not compared.
    """
    if kind is None:
        raise Mismatch(f"the configuration describes no build error known here (Kafka: {v.get('expected_error')})")
    what, marker = kind
    try:
        build()
    except Exception as e:  # IllegalArgumentException from the JVM, in Python's spelling
        if marker in str(e):
            return
        raise Mismatch(f"expected an error for {what}, got {type(e).__name__}: {str(e)[:300]}")
    raise Mismatch(f"expected an error for {what} when the operator is built, but it was built")


def size_model_skip(v: Dict[str, Any]) -> Optional[str]:
    """Why a vector whose outcome rests on Kafka's byte estimate of a topic name cannot run here, or None."""
    sizes = v.get("kafka_entry_sizes_bytes")
    if v.get("size_model_dependent") and isinstance(sizes, str):
        return (
            "size_model_dependent: Kafka's estimate counts the record's topic name (a ~90-char repartition topic "
            f"here: {sizes}); spark-suppress's entry size (docs/suppress.md) has no topic, so the byte bound bites "
            "elsewhere"
        )
    return None
