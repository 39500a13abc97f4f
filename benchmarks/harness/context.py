"""What every benchmark gets: the session, the settings and where to put data and scratch files."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional, Tuple

from .config import Settings


@dataclass
class Context:
    spark: Any
    settings: Settings
    work_dir: str  # scratch: checkpoints and outputs, removed after each run
    data_dir: str  # generated inputs, cached across runs
    results_dir: str
    shared: Dict[str, Any] = field(default_factory=dict)  # measurements benchmarks may reuse
    event_log: Optional[Any] = None  # profile.EventLog of the session, when it writes one: runs' breakdowns
    # (benchmark, what it has measured so far): run.py saves it in the results file, so that a long benchmark cut
    # short (benchmark 11 takes hours) keeps its finished parts. Not called by benchmarks of a few minutes.
    progress: Callable[[str, Dict[str, Any]], None] = lambda name, so_far: None

    def scratch(self, *parts: str) -> str:
        return os.path.join(self.work_dir, *parts)

    def warmup(self) -> Optional[Tuple[str, int]]:
        """(directory, records) of the warm-up event set, or None when the settings skip warm-ups."""
        from . import events

        shape = self.settings.warmup
        return None if shape is None else (events.events(self.data_dir, shape), shape.records)


def library_has(name: str) -> bool:
    """Whether the spark_suppress package on the path offers ``name`` (operators land on different branches)."""
    import spark_suppress

    return hasattr(spark_suppress, name)
