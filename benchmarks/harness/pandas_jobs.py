"""The benchmarks' jobs as a PySpark user would write them without spark-suppress: ``applyInPandasWithState``.

Both follow the same rules as the spark-suppress operator they stand in for, as closely as a straightforward
pandas implementation does, and use event-time timeouts so that results leave when the watermark passes. State is
one pickled Python object per group: PySpark 4.3's workers cannot read a state schema with array columns (the
worker fails parsing it with ``KeyError: 'elementType'``), and pickling is what such code does anyway.
"""

from __future__ import annotations

import heapq
import pickle
import sys

STATE_SCHEMA = "data binary"


def _ship_by_value() -> None:
    """Python workers cannot import this module (benchmarks/ is not on their path): pickle its functions whole."""
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])

WINDOW_COUNT_SCHEMA = "key string, window_start timestamp, window_end timestamp, count long"
RATE_LIMIT_SCHEMA = "key string, ts timestamp, value long"


def _millis(series):
    import numpy as np

    return series.values.astype("datetime64[ms]").astype(np.int64)


def window_counts(events, window_ms: int):
    """Events per key and tumbling window of ``window_ms``, emitted once the watermark reaches the window's end."""
    import numpy as np
    import pandas as pd

    _ship_by_value()

    def count(key, batches, state):
        windows = pickle.loads(state.get[0]) if state.exists else {}
        if not state.hasTimedOut:
            for pdf in batches:
                ms = _millis(pdf["ts"])
                starts, counts = np.unique(ms - ms % window_ms, return_counts=True)
                for s, c in zip(starts.tolist(), counts.tolist()):
                    windows[s] = windows.get(s, 0) + c
        watermark = state.getCurrentWatermarkMs()
        closed = sorted(s for s in windows if s + window_ms <= watermark)
        if closed:
            yield pd.DataFrame({
                "key": [key[0]] * len(closed),
                "window_start": pd.to_datetime(closed, unit="ms"),
                "window_end": pd.to_datetime([s + window_ms for s in closed], unit="ms"),
                "count": [windows.pop(s) for s in closed],
            })
        if windows:
            state.update((pickle.dumps(windows),))
            # Spark fires a timeout once the watermark is past it: at the earliest open window's end.
            state.setTimeoutTimestamp(min(windows) + window_ms - 1)
        else:
            state.remove()

    return events.groupBy("key").applyInPandasWithState(
        count, WINDOW_COUNT_SCHEMA, STATE_SCHEMA, "append", "EventTimeTimeout"
    )


def rate_limited(events, time_limit_ms: int, max_records: int, shards: int):
    """At most one update per key per ``time_limit_ms`` of event time, at most ``max_records`` keys buffered per
    shard (the oldest leaves early when full): suppress's ``untilTimeLimit(..., maxRecords(..).emitEarlyWhenFull())``.
    A bound on all keys of a partition needs them in one group, so rows are grouped by a hash shard of the key."""
    import pandas as pd
    from pyspark.sql import functions as F

    _ship_by_value()

    def limit(shard, batches, state):
        buffered = pickle.loads(state.get[0]) if state.exists else {}  # key -> [ts, value, buffer time]
        oldest = [(b, k) for k, (_, _, b) in buffered.items()]  # exactly the buffered entries
        heapq.heapify(oldest)
        out_keys, out_ts, out_values = [], [], []

        def evict_oldest():
            _, k = heapq.heappop(oldest)
            t, v, _ = buffered.pop(k)
            out_keys.append(k)
            out_ts.append(t)
            out_values.append(v)

        stream_time = state.getCurrentWatermarkMs()
        while oldest and oldest[0][0] <= stream_time - time_limit_ms:
            evict_oldest()
        if not state.hasTimedOut:
            frames = list(batches)
            if frames:
                pdf = pd.concat(frames).sort_values("seq", kind="stable")
                for k, t, v in zip(pdf["key"].tolist(), _millis(pdf["ts"]).tolist(), pdf["value"].tolist()):
                    if t > stream_time:
                        stream_time = t
                    entry = buffered.get(k)
                    if entry is None:
                        buffered[k] = [t, v, t]
                        heapq.heappush(oldest, (t, k))
                    else:
                        entry[0] = t
                        entry[1] = v
                    while oldest and oldest[0][0] <= stream_time - time_limit_ms:
                        evict_oldest()
                    while len(buffered) > max_records:
                        evict_oldest()
        if buffered:
            state.update((pickle.dumps(buffered),))
            state.setTimeoutTimestamp(oldest[0][0] + time_limit_ms - 1)
        else:
            state.remove()
        if out_keys:
            yield pd.DataFrame({"key": out_keys, "ts": pd.to_datetime(out_ts, unit="ms"), "value": out_values})

    return (
        events.withColumn("shard", F.pmod(F.hash("key"), F.lit(shards)))
        .groupBy("shard")
        .applyInPandasWithState(
            limit,
            RATE_LIMIT_SCHEMA,
            STATE_SCHEMA,
            "append",
            "EventTimeTimeout",
        )
    )
