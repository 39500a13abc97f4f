"""The stream-table join with a grace period against a versioned table (Kafka's KIP-923 on KIP-889)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from . import _spec, _transport
from ._columns import Columns, check_name, column_list, column_name
from ._durations import Duration, to_millis
from ._pyspark import is_dataframe

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def join_versioned(
    stream_df: "DataFrame",
    table_df: "DataFrame",
    on: Columns,
    stream_timestamp: str,
    table_timestamp: str,
    grace: Optional[Duration] = None,
    history_retention: Optional[Duration] = None,
    how: str = "inner",
    tombstone: Optional[str] = None,
    initial_versions: Optional["DataFrame"] = None,
    name: Optional[str] = None,
    release_on_watermark: bool = True,
    idle_timeout: Optional[Duration] = None,
) -> "DataFrame":
    """Join each stream record with the table's version valid at the record's own timestamp (KIP-923 on KIP-889).

    No watermark is needed on either input. The join waits ``grace`` for table updates that arrive out of order.

    Parameters
    ----------
    stream_df : pyspark.sql.DataFrame
        The streaming DataFrame of records to join.
    table_df : pyspark.sql.DataFrame
        A streaming changelog: the key column(s) ``on`` (same names and types as the stream's), the event-time
        column ``table_timestamp``, value columns, and optionally a boolean ``tombstone`` column.
    on : str or list of str
        The key column(s) of both inputs.
    stream_timestamp : str
        The stream's event-time column.
    table_timestamp : str
        The changelog's event-time column.
    grace : datetime.timedelta or int, optional
        Stream records wait until the stream has moved ``grace`` past them, so table updates that arrive out of
        order are still seen; a record later than that is joined at once. Needs ``history_retention >= grace``.
    history_retention : datetime.timedelta or int, optional
        Makes the table versioned: it keeps each key's versions for that long behind the largest timestamp it
        accepted and refuses older writes. Without it only the latest write per key counts.
    how : str
        ``"inner"`` or ``"left"``.
    tombstone : str, optional
        A boolean column of the changelog; true deletes the key.
    initial_versions : pyspark.sql.DataFrame, optional
        A static DataFrame with the changelog's columns that the table starts with.
    name : str, optional
        The operator's name, used in errors and metrics.
    release_on_watermark : bool
        Beyond Kafka, on by default: with a ``grace`` period and a watermark on the stream, a waiting record also
        leaves once the query's watermark has passed its timestamp + grace and every stream record its shard has
        seen, in the next micro-batch that reads data. Where Kafka would emit, its timing is unchanged. False
        keeps Kafka's rule only (records leave with later stream records of their own shard).
    idle_timeout : datetime.timedelta or int, optional
        Beyond Kafka; needs ``grace``, the release on the watermark and a watermarked stream: once a shard's
        stream time has not moved for that much wall-clock time, its release time runs on with the wall clock.
        Not deterministic; needs a processing-time trigger. See docs/join.md.

    Returns
    -------
    pyspark.sql.DataFrame
        The stream's columns, then the table's value columns.

    Raises
    ------
    TypeError
        If an argument has the wrong type, or the DataFrames come from a classic and a Spark Connect session.
    pyspark.errors.IllegalArgumentException
        If a value is refused when the join is built (key columns that differ, ``history_retention < grace``...).
    spark_suppress.JarNotFoundError
        If the session's JVM (or Connect server) does not have spark-suppress's jar or plugin.

    Examples
    --------
    >>> from datetime import timedelta
    >>> import spark_suppress as ss
    >>> enriched = ss.join_versioned(  # doctest: +SKIP
    ...     orders, tiers, on="customer", stream_timestamp="order_ts", table_timestamp="changed_at",
    ...     grace=timedelta(seconds=30), history_retention=timedelta(minutes=5), how="left")
    """
    if not isinstance(how, str):
        raise TypeError(f"how must be 'inner' or 'left', got {how!r}")
    if not isinstance(release_on_watermark, bool):
        raise TypeError(f"release_on_watermark must be True or False, got {release_on_watermark!r}")
    grace_ms = None if grace is None else to_millis(grace, "grace")
    retention_ms = None if history_retention is None else to_millis(history_retention, "history_retention")
    check_name(name)
    if initial_versions is not None and not is_dataframe(initial_versions):
        raise TypeError(f"initial_versions must be a static DataFrame, got {initial_versions!r}")
    m = _spec.messages()
    spec = m.JoinVersionedSpec(
        on=column_list(on, "on"),
        stream_timestamp=column_name(stream_timestamp, "stream_timestamp"),
        table_timestamp=column_name(table_timestamp, "table_timestamp"),
        grace_ms=grace_ms,
        history_retention_ms=retention_ms,
        how=_spec.choice(m.JoinType, how, "how"),
        tombstone=None if tombstone is None else column_name(tombstone, "tombstone"),
        name=name,
        release_on_watermark=release_on_watermark,
        idle_timeout_ms=None if idle_timeout is None else to_millis(idle_timeout, "idle_timeout"),
    )
    transport = _transport.of(stream_df=stream_df, table_df=table_df, initial_versions=initial_versions)
    return transport.join_versioned(stream_df, table_df, initial_versions, spec)
