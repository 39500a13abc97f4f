"""Testing pipelines one micro-batch at a time, as Kafka users do with ``TopologyTestDriver``.

::

    driver = TestDriver(spark, "user STRING, ts TIMESTAMP, n LONG", timestamp="ts")
    driver.start(ss.suppress(driver.input, key="user", timestamp="ts", suppressed=...))
    emitted = driver.step([("alice", datetime(2024, 1, 1), 1)])   # rows emitted while processing this batch
    driver.stop()

Each ``step`` runs its micro-batch to completion, including the no-data batch a moved watermark triggers, so
timers that became due fire within the step. Nothing waits on the wall clock, except ``idle(duration)``, which lets
wall-clock time pass without input (for ``idle_timeout``). On a Spark Connect session the same class works through
Connect calls only (``_connect_testing``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Union

from . import _transport
from ._durations import Duration, to_millis

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Row, SparkSession
    from pyspark.sql.streaming import StreamingQuery
    from pyspark.sql.types import StructType


class TestDriver:
    """Feeds rows into a pipeline as one micro-batch per :meth:`step` and returns what it emitted.

    ``TestDriver(spark, schema, timestamp)`` has one input, :attr:`input`. For pipelines with several inputs
    (a join), create ``TestDriver(spark)`` and call :meth:`add_input` for each, then ``step(rows, input=name)``.
    On a classic session the driver runs on the JVM (MemoryStream in, foreachBatch out); on a Spark Connect session
    through public Connect calls (file streams in and out, so client and server share a file system).

    Parameters
    ----------
    spark : pyspark.sql.SparkSession
        A session with spark-suppress's jar (classic) or plugin (Spark Connect).
    schema : pyspark.sql.types.StructType or str, optional
        The schema (or DDL string) of the one input; without it, add inputs with :meth:`add_input`.
    timestamp : str, optional
        The input's event-time column, watermarked with ``watermark_delay``; required with ``schema``.
    watermark_delay : str
        The watermark's delay (``"0 seconds"`` gives Kafka's exact timing).

    Raises
    ------
    ValueError
        If ``schema`` is given without ``timestamp``.
    spark_suppress.JarNotFoundError
        If the session's JVM does not have spark-suppress's jar.

    Examples
    --------
    >>> from datetime import datetime
    >>> import spark_suppress as ss
    >>> from spark_suppress.testing import TestDriver
    >>> with TestDriver(spark, "user STRING, ts TIMESTAMP, n LONG", timestamp="ts") as driver:  # doctest: +SKIP
    ...     driver.start(ss.suppress(driver.input, key="user", timestamp="ts", suppressed=limit))
    ...     emitted = driver.step([("alice", datetime(2024, 1, 1), 1)])
    """

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        spark: "SparkSession",
        schema: Union["StructType", str, None] = None,
        timestamp: Optional[str] = None,
        watermark_delay: str = "0 seconds",
    ) -> None:
        if schema is not None and timestamp is None:
            raise ValueError("timestamp must name the event-time column of the input")
        self._driver = _transport.driver(spark)
        self._schemas: Dict[str, "StructType"] = {}
        if schema is not None:
            self.add_input("input", schema, timestamp, watermark_delay)

    def add_input(
        self,
        name: str,
        schema: Union["StructType", str],
        timestamp: Optional[str] = None,
        watermark_delay: str = "0 seconds",
    ) -> "DataFrame":
        """Add an input stream and return it, to build the pipeline from.

        Parameters
        ----------
        name : str
            The input's name, for ``step(rows, input=name)``.
        schema : pyspark.sql.types.StructType or str
            Its schema or DDL string.
        timestamp : str, optional
            Its event-time column, watermarked with ``watermark_delay``; None for no watermark (a join's table).
        watermark_delay : str
            The watermark's delay.

        Returns
        -------
        pyspark.sql.DataFrame
            The streaming input.

        Raises
        ------
        ValueError
            On Spark Connect, if the driver has started or an input of that name exists.

        Examples
        --------
        >>> driver = TestDriver(spark)  # doctest: +SKIP
        >>> orders = driver.add_input("orders", "customer STRING, ts TIMESTAMP", timestamp="ts")  # doctest: +SKIP
        """
        from pyspark.sql.types import StructType

        struct = schema if isinstance(schema, StructType) else self._driver.parse_schema(schema)
        df = self._driver.add_input(name, struct, timestamp, watermark_delay)
        self._schemas[name] = struct
        return df

    @property
    def input(self) -> "DataFrame":
        """The only input stream (drivers created with a schema).

        Returns
        -------
        pyspark.sql.DataFrame
            The streaming input.

        Raises
        ------
        ValueError
            If the driver has several inputs, or none.

        Examples
        --------
        >>> driver.start(driver.input.where("n > 0"))  # doctest: +SKIP
        """
        if len(self._schemas) != 1:
            raise ValueError(f"this driver has {len(self._schemas)} inputs; name the one to use")
        return self._driver.input()

    @property
    def schema(self) -> "StructType":
        """The only input's schema.

        Returns
        -------
        pyspark.sql.types.StructType
            The schema.

        Raises
        ------
        ValueError
            If the driver has several inputs, or none.

        Examples
        --------
        >>> driver.schema.fieldNames()  # doctest: +SKIP
        ['user', 'ts', 'n']
        """
        if len(self._schemas) != 1:
            raise ValueError(f"this driver has {len(self._schemas)} inputs; name the one you mean")
        return next(iter(self._schemas.values()))

    def start(self, pipeline: "DataFrame") -> "TestDriver":
        """Start running ``pipeline`` (computed from the inputs) with a fresh checkpoint.

        Parameters
        ----------
        pipeline : pyspark.sql.DataFrame
            The streaming DataFrame to run.

        Returns
        -------
        TestDriver
            This driver.

        Raises
        ------
        ValueError
            On Spark Connect, if the driver is already started.

        Examples
        --------
        >>> driver.start(ss.suppress(driver.input, key="user", timestamp="ts", suppressed=limit))  # doctest: +SKIP
        """
        self._driver.start(pipeline)
        return self

    def step(self, rows: Iterable[Any], input: Optional[str] = None) -> List["Row"]:
        """Feed ``rows`` as one micro-batch to ``input`` and return the rows emitted while processing it.

        The step runs to completion, including the no-data batch a moved watermark triggers, so timers that
        became due fire within it.

        Parameters
        ----------
        rows : iterable
            Tuples, dicts or Rows of the input's schema.
        input : str, optional
            The input's name; by default the only input.

        Returns
        -------
        list of pyspark.sql.Row
            What the pipeline emitted, in order.

        Raises
        ------
        ValueError
            If ``input`` is missing while the driver has several inputs, or names none of them, or a row does not
            fit the input's schema (a missing value of a non-nullable column, a row of the wrong length).
        TypeError
            If a value's type does not fit its column (the message gives the row and the input's schema).

        Examples
        --------
        >>> driver.step([("alice", datetime(2024, 1, 1), 1)])  # doctest: +SKIP
        []
        """
        if input is None:
            if len(self._schemas) != 1:
                raise ValueError(f"this driver has {len(self._schemas)} inputs; pass input=<name>")
            input = next(iter(self._schemas))
        if input not in self._schemas:
            raise ValueError(f"no input named {input!r}; inputs: {sorted(self._schemas)}")
        schema = self._schemas[input]
        rows = list(rows)
        _check_rows(schema, rows)
        return self._driver.step(input, schema, rows)

    def advance(self) -> List["Row"]:
        """Run whatever is pending (e.g. after :meth:`restart`) and return what was emitted.

        Returns
        -------
        list of pyspark.sql.Row
            What the pipeline emitted.

        Examples
        --------
        >>> driver.restart().advance()  # doctest: +SKIP
        []
        """
        return self._driver.advance()

    def idle(self, duration: Duration) -> List["Row"]:
        """Let ``duration`` of wall-clock time pass without input and return what was emitted meanwhile.

        For ``idle_timeout``: waits until a micro-batch that started at least ``duration`` after the last one that
        moved the query's time (input rows or a new watermark) has completed. Real time passes, so keep durations
        small. Spark runs no micro-batch after :meth:`restart` until input arrives, so idling right after a
        restart is refused: :meth:`step` first.

        Parameters
        ----------
        duration : datetime.timedelta or int
            The wall-clock time to let pass (an int is milliseconds).

        Returns
        -------
        list of pyspark.sql.Row
            What the pipeline emitted meanwhile (e.g. what an ``idle_timeout`` released).

        Raises
        ------
        TypeError
            If ``duration`` is neither a ``timedelta`` nor an int.
        RuntimeError
            Right after :meth:`restart`, before any step.

        Examples
        --------
        >>> driver.idle(timedelta(milliseconds=300))  # doctest: +SKIP
        [Row(user='alice', ts=datetime.datetime(2024, 1, 1, 0, 0), n=1)]
        """
        return self._driver.idle(to_millis(duration, "duration"))

    def restart(self) -> "TestDriver":
        """Stop the query and start it again from its checkpoint (state and pending input survive).

        Returns
        -------
        TestDriver
            This driver.

        Examples
        --------
        >>> driver.restart()  # doctest: +SKIP
        """
        self._driver.restart()
        return self

    def stop(self) -> None:
        """Stop the query and delete its checkpoint: a stopped driver can be started again, not restarted.

        Examples
        --------
        >>> driver.stop()  # doctest: +SKIP
        """
        self._driver.stop()

    @property
    def query(self) -> "StreamingQuery":
        """The running query (e.g. for :func:`spark_suppress.metrics`).

        Returns
        -------
        pyspark.sql.streaming.StreamingQuery
            The query the driver runs.

        Examples
        --------
        >>> ss.metrics(driver.query)  # doctest: +SKIP
        {}
        """
        result: "StreamingQuery" = self._driver.query()
        return result

    def __enter__(self) -> "TestDriver":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _check_rows(schema: "StructType", rows: List[Any]) -> None:
    """Checks each row against the input's schema as ``createDataFrame`` does, on both transports, so a wrong value is
    refused before anything runs (Spark Connect's own conversion fails on some with a bare AssertionError), with the
    row and the schema in the message (PySpark 3.5's names neither)."""
    from pyspark.sql.types import _make_type_verifier

    verify = _make_type_verifier(schema)
    for i, row in enumerate(rows):
        try:
            verify(row)
        except (TypeError, ValueError) as e:
            error = TypeError if isinstance(e, TypeError) else ValueError
            raise error(f"row {i} of the step, {row!r}, does not fit the input {schema.simpleString()}: {e}") from None
