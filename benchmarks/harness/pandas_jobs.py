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
            yield pd.DataFrame(
                {
                    "key": [key[0]] * len(closed),
                    "window_start": pd.to_datetime(closed, unit="ms"),
                    "window_end": pd.to_datetime([s + window_ms for s in closed], unit="ms"),
                    "count": [windows.pop(s) for s in closed],
                }
            )
        if windows:
            state.update((pickle.dumps(windows),))
            # Spark fires a timeout once the watermark is past it: at the earliest open window's end.
            state.setTimeoutTimestamp(min(windows) + window_ms - 1)
        else:
            state.remove()

    return events.groupBy("key").applyInPandasWithState(
        count, WINDOW_COUNT_SCHEMA, STATE_SCHEMA, "append", "EventTimeTimeout"
    )


def limit_step(buffered, stream_time: int, pdf, time_limit_ms: int, max_records: int):
    """One call of the rate limiter on a shard: lets out what the time limit or the bound says, then takes the
    rows of ``pdf`` (pandas, or None) in ``seq`` order. ``buffered`` (key -> [ts, value, buffer time]) is updated
    in place. Returns the emitted (keys, ts ms, values) and the oldest buffer time left (None if empty)."""
    oldest = [(b, k) for k, (_, _, b) in buffered.items()]  # exactly the buffered entries
    heapq.heapify(oldest)
    out_keys, out_ts, out_values = [], [], []

    def evict_oldest():
        _, k = heapq.heappop(oldest)
        t, v, _ = buffered.pop(k)
        out_keys.append(k)
        out_ts.append(t)
        out_values.append(v)

    while oldest and oldest[0][0] <= stream_time - time_limit_ms:
        evict_oldest()
    if pdf is not None and len(pdf):
        pdf = pdf.sort_values("seq", kind="stable")
        # Python ints, not numpy's: Spark's state and timeout setters take the former only.
        ms = (pdf["ms"].to_numpy() if "ms" in pdf else _millis(pdf["ts"])).tolist()
        for k, t, v in zip(pdf["key"].tolist(), ms, pdf["value"].tolist()):
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
    return (out_keys, out_ts, out_values), (oldest[0][0] if oldest else None)


def rate_limited(events, time_limit_ms: int, max_records: int, shards: int):
    """At most one update per key per ``time_limit_ms`` of event time, at most ``max_records`` keys buffered per
    shard (the oldest leaves early when full): suppress's ``untilTimeLimit(..., maxRecords(..).emitEarlyWhenFull())``.
    A bound on all keys of a partition needs them in one group, so rows are grouped by a hash shard of the key."""
    import pandas as pd
    from pyspark.sql import functions as F

    _ship_by_value()

    def limit(shard, batches, state):
        buffered = pickle.loads(state.get[0]) if state.exists else {}  # key -> [ts, value, buffer time]
        frames = [] if state.hasTimedOut else list(batches)
        pdf = pd.concat(frames) if frames else None
        out, oldest = limit_step(buffered, state.getCurrentWatermarkMs(), pdf, time_limit_ms, max_records)
        if buffered:
            state.update((pickle.dumps(buffered),))
            state.setTimeoutTimestamp(oldest + time_limit_ms - 1)
        else:
            state.remove()
        if out[0]:
            yield pd.DataFrame({"key": out[0], "ts": pd.to_datetime(out[1], unit="ms"), "value": out[2]})

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


def sliding_windows_of(ms, difference_ms: int):
    """Kafka's sliding windows over a key's record times ``ms`` (numpy int64), as (start, inclusive end) arrays:
    ``[t - d, t]`` for every record ``t``, and ``[s + 1, s + 1 + d]`` for every record ``s`` that a later record
    follows within ``d``; a window that both rules give once."""
    import numpy as np

    ms = np.unique(ms)
    follows = np.searchsorted(ms, ms + difference_ms, "right") - np.arange(len(ms)) > 1
    starts = np.unique(np.concatenate([ms - difference_ms, ms[follows] + 1]))
    return starts, starts + difference_ms


def sliding_counts(events, difference_ms: int):
    """Events per key and Kafka sliding window of ``difference_ms``, each window emitted once the watermark has
    passed its inclusive end: the watermark lags the newest record by the disorder, so by then every record the
    window holds has arrived. State per key: its record times still needed (pickled) and the watermark up to
    which windows were emitted."""
    import numpy as np
    import pandas as pd

    _ship_by_value()

    def count(key, batches, state):
        times, emitted_to = pickle.loads(state.get[0]) if state.exists else (np.empty(0, dtype=np.int64), None)
        if not state.hasTimedOut:
            for pdf in batches:
                times = np.concatenate([times, _millis(pdf["ts"])])
        times.sort()
        watermark = state.getCurrentWatermarkMs()
        starts, ends = sliding_windows_of(times, difference_ms)
        due = (ends < watermark) if emitted_to is None else (ends >= emitted_to) & (ends < watermark)
        if due.any():
            s, e = starts[due], ends[due]
            counts = np.searchsorted(times, e, "right") - np.searchsorted(times, s, "left")
            yield pd.DataFrame(
                {
                    "key": [key[0]] * len(s),
                    "window_start": pd.to_datetime(s, unit="ms"),
                    "window_end": pd.to_datetime(e + 1, unit="ms"),
                    "count": counts.astype(np.int64),
                }
            )
        pending = ends[ends >= watermark]
        # A window still to come starts at most d + 1 before its end: older records are no longer needed.
        times = times[times >= watermark - difference_ms - 1]
        if len(times):
            # Kept even with no window pending: a later record's windows reach back d before it.
            state.update((pickle.dumps((times, watermark)),))
            if len(pending):
                state.setTimeoutTimestamp(int(pending.min()))
        else:
            state.remove()

    return events.groupBy("key").applyInPandasWithState(
        count, WINDOW_COUNT_SCHEMA, STATE_SCHEMA, "append", "EventTimeTimeout"
    )


# Spark 4's stateful API (transformWithState): the same two jobs. It runs on the RocksDB state store only, and its
# Python processors reach their state through calls to the JVM, one per state access.
ROCKSDB_CONF = {
    "spark.sql.streaming.stateStore.providerClass": (
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
    )
}


def _utc(ms: int):
    from datetime import datetime, timezone

    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


def tws_window_counts(events, window_ms: int, rows_api: bool):
    """``window_counts`` with ``transformWithStateInPandas`` (or, ``rows_api``, the Row-based
    ``transformWithState``): per key a map state window start -> count and an event-time timer at each window's
    end, which emits and removes the window."""
    import numpy as np
    import pandas as pd
    from pyspark.sql import Row
    from pyspark.sql import functions as F
    from pyspark.sql.streaming import StatefulProcessor

    _ship_by_value()

    class WindowCounts(StatefulProcessor):
        def init(self, handle):
            self.handle = handle
            self.windows = handle.getMapState("windows", "start long", "count long")

        def _add(self, starts, counts):
            for start, c in zip(starts, counts):
                current = self.windows.getValue((start,))
                if current is None:
                    self.handle.registerTimer(start + window_ms)
                    self.windows.updateValue((start,), (c,))
                else:
                    self.windows.updateValue((start,), (current[0] + c,))

        def handleInputRows(self, key, rows, timerValues):
            if rows_api:
                per_window = {}
                for r in rows:
                    start = r.ms - r.ms % window_ms
                    per_window[start] = per_window.get(start, 0) + 1
                self._add(per_window.keys(), per_window.values())
            else:
                for pdf in rows:
                    ms = pdf["ms"].to_numpy()
                    starts, counts = np.unique(ms - ms % window_ms, return_counts=True)
                    self._add(starts.tolist(), counts.tolist())
            return iter([])

        def handleExpiredTimer(self, key, timerValues, expiredTimerInfo):
            start = expiredTimerInfo.getExpiryTimeInMs() - window_ms
            count = self.windows.getValue((start,))[0]
            self.windows.removeKey((start,))
            if rows_api:
                yield Row(key=key[0], window_start=_utc(start), window_end=_utc(start + window_ms), count=count)
            else:
                yield pd.DataFrame(
                    {
                        "key": [key[0]],
                        "window_start": pd.to_datetime([start], unit="ms"),
                        "window_end": pd.to_datetime([start + window_ms], unit="ms"),
                        "count": [count],
                    }
                )

        def close(self):
            pass

    grouped = events.withColumn("ms", F.unix_millis("ts")).groupBy("key")
    apply = grouped.transformWithState if rows_api else grouped.transformWithStateInPandas
    return apply(WindowCounts(), WINDOW_COUNT_SCHEMA, "Append", "EventTime")


def tws_rate_limited(events, time_limit_ms: int, max_records: int, shards: int, rows_api: bool):
    """``rate_limited`` with ``transformWithStateInPandas`` (or the Row-based ``transformWithState``): the same
    rule and shards, the shard's buffer pickled in a value state, one event-time timer at the oldest entry's time
    limit."""
    import pandas as pd
    from pyspark.sql import Row
    from pyspark.sql import functions as F
    from pyspark.sql.streaming import StatefulProcessor

    _ship_by_value()

    class RateLimit(StatefulProcessor):
        def init(self, handle):
            self.handle = handle
            self.buffer = handle.getValueState("buffer", STATE_SCHEMA)

        def _step(self, pdf, watermark):
            buffered = pickle.loads(self.buffer.get()[0]) if self.buffer.exists() else {}
            out, oldest = limit_step(buffered, watermark, pdf, time_limit_ms, max_records)
            for t in list(self.handle.listTimers()):
                self.handle.deleteTimer(t)
            if buffered:
                self.buffer.update((pickle.dumps(buffered),))
                self.handle.registerTimer(oldest + time_limit_ms)
            else:
                self.buffer.clear()
            keys, ts, values = out
            if not keys:
                return
            if rows_api:
                for k, t, v in zip(keys, ts, values):
                    yield Row(key=k, ts=_utc(t), value=v)
            else:
                yield pd.DataFrame({"key": keys, "ts": pd.to_datetime(ts, unit="ms"), "value": values})

        def handleInputRows(self, key, rows, timerValues):
            if rows_api:
                rows = list(rows)
                pdf = pd.DataFrame(
                    {
                        "key": [r.key for r in rows],
                        "ms": [r.ms for r in rows],
                        "value": [r.value for r in rows],
                        "seq": [r.seq for r in rows],
                    }
                )
            else:
                frames = list(rows)
                pdf = pd.concat(frames) if frames else None
            yield from self._step(pdf, timerValues.getCurrentWatermarkInMs())

        def handleExpiredTimer(self, key, timerValues, expiredTimerInfo):
            yield from self._step(None, timerValues.getCurrentWatermarkInMs())

        def close(self):
            pass

    grouped = (
        events.withColumn("ms", F.unix_millis("ts"))
        .withColumn("shard", F.pmod(F.hash("key"), F.lit(shards)))
        .groupBy("shard")
    )
    apply = grouped.transformWithState if rows_api else grouped.transformWithStateInPandas
    return apply(RateLimit(), RATE_LIMIT_SCHEMA, "Append", "EventTime")
