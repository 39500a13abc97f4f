"""Type checks of column arguments shared by the operator wrappers (the JVM checks them against the real schema)."""

from __future__ import annotations

from typing import List, Optional, Sequence, Union

Columns = Union[str, Sequence[str]]


def column_list(value: Columns, parameter: str) -> List[str]:
    if isinstance(value, str):
        names = [value]
    elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        names = list(value)
    else:
        raise TypeError(f"{parameter} must be a column name or a list of column names, got {value!r}")
    return names


def column_name(value: str, parameter: str) -> str:
    if not isinstance(value, str) or not value:
        raise TypeError(f"{parameter} must be a column name, got {value!r}")
    return value


def check_name(name: Optional[str]) -> Optional[str]:
    """``name`` if it is a string or None; whether it is a usable name is the JVM's to say."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a string, got {name!r}")
    return name
