"""Shared pieces of the conformance runner: vectors, results, step-by-step comparison."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, Iterable, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_DIR = os.path.normpath(os.path.join(ROOT, "..", "shared", "conformance", "vectors"))
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


def group_expected(expected: Iterable[Dict[str, Any]], key_of) -> Dict[int, Dict[OutKey, List[Tuple[Any, int]]]]:
    steps: Dict[int, Dict[OutKey, List[Tuple[Any, int]]]] = defaultdict(lambda: defaultdict(list))
    for o in expected:
        steps[o["after_seq"]][key_of(o)].append((o["value"], o["ts"]))
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
