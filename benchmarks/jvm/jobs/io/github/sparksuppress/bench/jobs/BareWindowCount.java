package io.github.sparksuppress.bench.jobs;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

import org.apache.spark.api.java.function.FlatMapGroupsWithStateFunction;
import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.GroupState;
import org.apache.spark.sql.streaming.GroupStateTimeout;
import org.apache.spark.sql.streaming.OutputMode;

import scala.Tuple4;

/**
 * The least a hand-written {@code flatMapGroupsWithState} job does for final counts per key and tumbling window, the
 * reference the large-state benchmark measures the engine against: grouped by key as spark-suppress groups, each
 * key's open windows and counts as its state, a window emitted once the watermark reaches its end (Spark's append
 * rule), an event-time timeout at the earliest open window's end, and a record whose window the watermark already
 * closed dropped. None of Kafka's rules (grace, stream time per record, the result's timestamp), no metrics.
 */
public final class BareWindowCount {
  private BareWindowCount() {}

  /**
   * Counts of {@code events} (a watermarked stream) per {@code keyColumn} (a string) and window of {@code windowMs}
   * over {@code tsColumn} (a timestamp): {@code key, window_start, window_end, count}.
   */
  public static Dataset<Row> counts(Dataset<Row> events, String keyColumn, String tsColumn, long windowMs) {
    Dataset<Event> typed = events
        .select(col(keyColumn).as("key"), expr("unix_millis(" + tsColumn + ")").as("ms"), col(tsColumn))
        .as(Encoders.bean(Event.class));
    Dataset<Tuple4<String, Long, Long, Long>> out = typed
        .groupByKey((MapFunction<Event, String>) Event::getKey, Encoders.STRING())
        .flatMapGroupsWithState(
            new Count(windowMs),
            OutputMode.Append(),
            Encoders.bean(OpenWindows.class),
            Encoders.tuple(Encoders.STRING(), Encoders.LONG(), Encoders.LONG(), Encoders.LONG()),
            GroupStateTimeout.EventTimeTimeout());
    return out.toDF("key", "start_ms", "end_ms", "count")
        .select(
            col("key"),
            expr("timestamp_millis(start_ms)").as("window_start"),
            expr("timestamp_millis(end_ms)").as("window_end"),
            col("count"));
  }

  private static final class Count
      implements FlatMapGroupsWithStateFunction<
          String, Event, OpenWindows, Tuple4<String, Long, Long, Long>> {
    private final long windowMs;

    Count(long windowMs) {
      this.windowMs = windowMs;
    }

    @Override
    public Iterator<Tuple4<String, Long, Long, Long>> call(
        String key, Iterator<Event> records, GroupState<OpenWindows> state) {
      long watermark = state.getCurrentWatermarkMs();
      OpenWindows open = state.exists() ? state.get() : new OpenWindows();
      long[] starts = open.getStarts();
      long[] counts = open.getCounts();
      int n = starts.length;
      while (records.hasNext()) {
        long ts = records.next().getMs();
        long start = Math.floorDiv(ts, windowMs) * windowMs;
        if (start + windowMs <= watermark) continue; // its window has been emitted
        int i = 0;
        while (i < n && starts[i] != start) i++;
        if (i == n) {
          if (n == starts.length) {
            starts = java.util.Arrays.copyOf(starts, Math.max(2, 2 * n));
            counts = java.util.Arrays.copyOf(counts, starts.length);
          }
          starts[n] = start;
          counts[n] = 0;
          n++;
        }
        counts[i]++;
      }
      List<Tuple4<String, Long, Long, Long>> closed = new ArrayList<>(1);
      int kept = 0;
      long earliestEnd = Long.MAX_VALUE;
      for (int i = 0; i < n; i++) {
        long end = starts[i] + windowMs;
        if (end <= watermark) {
          closed.add(new Tuple4<>(key, starts[i], end, counts[i]));
        } else {
          starts[kept] = starts[i];
          counts[kept] = counts[i];
          kept++;
          earliestEnd = Math.min(earliestEnd, end);
        }
      }
      if (kept == 0) {
        state.remove();
      } else {
        open.setStarts(java.util.Arrays.copyOf(starts, kept));
        open.setCounts(java.util.Arrays.copyOf(counts, kept));
        state.update(open);
        // Spark fires the timeout once the watermark passes it; a window closes when the watermark reaches its end.
        state.setTimeoutTimestamp(earliestEnd - 1);
      }
      return closed.iterator();
    }
  }
}
