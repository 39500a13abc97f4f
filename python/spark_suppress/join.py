"""The stream-table join with a grace period against a versioned table (Kafka's KIP-923 on KIP-889)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Optional

from ._columns import Columns, column_list, column_name
from ._durations import Duration, to_millis
from . import _connect
from ._jvm import dataframe_facade
from .suppressed import check_name

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
    """Join each stream record with the table's version valid at the record's own timestamp.

    ``table_df`` is a streaming changelog: the key column(s) ``on`` (same names and types as the stream's), the
    event-time column ``table_timestamp``, value columns, and optionally a boolean ``tombstone`` column (true
    deletes the key). With ``history_retention`` the table is versioned: it keeps each key's versions for that
    long behind the largest timestamp it accepted and refuses older writes; without it only the latest write per
    key counts. With ``grace`` (needs ``history_retention >= grace``) stream records wait until the stream has
    moved ``grace`` past them, so table updates that arrive out of order are still seen; a record later than that
    is joined at once. ``how`` is ``"inner"`` or ``"left"``. ``initial_versions`` is a static DataFrame with the
    changelog's columns that the table starts with. The output has the stream's columns, then the table's value
    columns. No watermark is needed on either input. Durations are ``timedelta`` or integer milliseconds.

    With a ``grace`` period and a watermark on the stream (beyond Kafka, on by default): a waiting record also leaves
    once the query's watermark has passed its timestamp + grace and every stream record its shard has seen, so a
    shard that gets no more stream records does not keep its records; it leaves in the next micro-batch that reads
    data. Where Kafka would emit, its timing is unchanged. ``release_on_watermark=False`` keeps Kafka's rule only
    (records leave with later stream records of their own shard).

    ``idle_timeout=timedelta(...)`` (beyond Kafka; needs ``grace``, the release on the watermark and a watermarked
    stream): once a shard's stream time has not moved for that much wall-clock time, its release time runs on with
    the wall clock, so waiting records leave although no record arrives. Not deterministic; needs a processing-time
    trigger (``trigger(processingTime=...)``). See docs/join.md.
    """
    if not isinstance(how, str):
        raise TypeError(f"how must be 'inner' or 'left', got {how!r}")
    if not isinstance(release_on_watermark, bool):
        raise TypeError(f"release_on_watermark must be True or False, got {release_on_watermark!r}")
    grace_ms = None if grace is None else to_millis(grace, "grace")
    retention_ms = None if history_retention is None else to_millis(history_retention, "history_retention")
    check_name(name)
    if initial_versions is not None:
        from ._pyspark import is_dataframe

        if not is_dataframe(initial_versions):
            raise TypeError(f"initial_versions must be a static DataFrame, got {initial_versions!r}")
    spec = {
        "on": column_list(on, "on"),
        "streamTimestamp": column_name(stream_timestamp, "stream_timestamp"),
        "tableTimestamp": column_name(table_timestamp, "table_timestamp"),
        "graceMs": grace_ms,
        "historyRetentionMs": retention_ms,
        "how": how,
        "tombstone": None if tombstone is None else column_name(tombstone, "tombstone"),
        "name": name,
        "releaseOnWatermark": release_on_watermark,
        "idleTimeoutMs": None if idle_timeout is None else to_millis(idle_timeout, "idle_timeout"),
    }
    if _connect.same_transport({"stream_df": stream_df, "table_df": table_df, "initial_versions": initial_versions}):
        return _connect.join_versioned(stream_df, table_df, initial_versions, spec)
    jdf = dataframe_facade(stream_df).joinVersioned(
        stream_df._jdf, table_df._jdf, None if initial_versions is None else initial_versions._jdf, json.dumps(spec)
    )
    from pyspark.sql import DataFrame

    return DataFrame(jdf, stream_df.sparkSession)
