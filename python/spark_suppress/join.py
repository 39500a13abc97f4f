"""The stream-table join with a grace period against a versioned table (Kafka's KIP-923 on KIP-889)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Optional

from ._columns import Columns, column_list, column_name
from ._durations import Duration, to_millis
from . import _connect
from ._jvm import dataframe_facade

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: Kafka's messages for the rules that tie the grace period to the table (the JVM checks them too).
GRACE_NEEDS_VERSIONED_TABLE = "KTable must be versioned to use a grace period in a stream table join."
GRACE_EXCEEDS_HISTORY = "History retention must be at least grace period."


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
    """
    if how not in ("inner", "left"):
        raise ValueError(f"how must be 'inner' or 'left', got {how!r}")
    grace_ms = None if grace is None else to_millis(grace, "grace")
    retention_ms = None if history_retention is None else to_millis(history_retention, "history_retention")
    if grace_ms is not None and retention_ms is None:
        raise ValueError(
            f"{GRACE_NEEDS_VERSIONED_TABLE} grace is {grace!r} but the table is not versioned: pass "
            "history_retention (at least as long as grace), or drop grace."
        )
    if grace_ms is not None and retention_ms is not None and grace_ms > retention_ms:
        raise ValueError(
            f"{GRACE_EXCEEDS_HISTORY} grace is {grace_ms} ms but history_retention is {retention_ms} ms; raise "
            "history_retention or shorten grace."
        )
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    if initial_versions is not None:
        from pyspark.sql import DataFrame

        if not isinstance(initial_versions, DataFrame):
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
    }
    if _connect.same_transport({"stream_df": stream_df, "table_df": table_df, "initial_versions": initial_versions}):
        return _connect.join_versioned(stream_df, table_df, initial_versions, spec)
    jdf = dataframe_facade(stream_df).joinVersioned(
        stream_df._jdf, table_df._jdf, None if initial_versions is None else initial_versions._jdf, json.dumps(spec)
    )
    from pyspark.sql import DataFrame

    return DataFrame(jdf, stream_df.sparkSession)
