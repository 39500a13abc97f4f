"""The operators' spec messages (``proto/spark_suppress/spec.proto``): the one wire contract of both transports.

Each operator builds its spec message once (``suppress.py``, ``aggregate.py``, ``join.py``); py4j passes its bytes
to the JVM facade and Spark Connect carries the same bytes in its relation message. The generated module needs the
``protobuf`` package, which classic PySpark does not bring (``pyspark[connect]`` and ``pyspark-client`` do), so it
is imported here on first use, with an error that names the fix.
"""

from __future__ import annotations

from typing import Any, Dict

# What the generated Python code needs: protoc 33.5's gencode checks for a runtime at least this new on import. The
# wheel declares the same requirement (python/pyproject.toml; test_packaging keeps the two equal).
PROTOBUF_REQUIREMENT = "protobuf>=6.33.5"


def messages() -> Any:
    """The generated module of ``spec.proto``.

    Raises
    ------
    ImportError
        If the ``protobuf`` package is missing or older than the generated code needs, naming the fix.
    """
    try:
        from .proto import spec_pb2
    except Exception as e:  # ImportError, or protobuf's VersionError for a runtime older than the gencode
        if not isinstance(e, ImportError) and type(e).__name__ != "VersionError":
            raise
        raise ImportError(
            "spark_suppress sends each operator's configuration as a protobuf message and needs the protobuf "
            f"package ({PROTOBUF_REQUIREMENT}), which classic PySpark does not install: "
            f"pip install '{PROTOBUF_REQUIREMENT}' (the spark-suppress wheel declares it; an install with --no-deps "
            f"skips it). The import failed with: {e}"
        ) from e
    return spec_pb2


def choice(enum: Any, value: str, parameter: str) -> int:
    """The number of ``value`` in ``enum``, whose values spell the Python API's choices in upper case after the
    enum's prefix (``clock="processing"`` is ``CLOCK_PROCESSING``).

    Raises
    ------
    pyspark.errors.IllegalArgumentException
        If ``value`` is not one of the choices, naming the parameter, the value and the choices: the class the JVM's
        refusals of other values arrive as, so one class covers every bad value.
    """
    names: Dict[str, int] = dict(enum.items())
    prefix = next(n for n, number in names.items() if number == 0).removesuffix("UNSPECIFIED")
    choices = {n[len(prefix) :].lower(): number for n, number in names.items() if number != 0}
    if value not in choices:
        from pyspark.errors import IllegalArgumentException

        spelled = " or ".join(repr(c) for c in choices)
        raise IllegalArgumentException(f"{parameter} must be {spelled}, got {value!r}")
    return choices[value]
