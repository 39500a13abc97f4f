package io.github.sparksuppress.bench;

import org.openjdk.jmh.infra.Blackhole;

/**
 * One time-ordered buffer driven through the traces. Both implementations keep Kafka's suppression semantics:
 * one entry per key, ordered by (buffer time, key bytes), an update keeps the entry's first buffer time.
 */
public interface BufferUnderTest {
    /** Starts over with an empty buffer. */
    void reset();

    /** Puts every key of the trace once (into an empty buffer: all inserts). */
    void insertAll(BufferTrace trace);

    /** Puts a new value for every key, in {@code trace.updateOrder} (all keys buffered: all updates). */
    void updateAll(BufferTrace trace);

    /** Evicts oldest-first until the buffer is empty; returns how many entries left. */
    int evictAll(Blackhole sink);

    /** Replays a suppression: each put followed by the time-limit and size-bound evictions. */
    void replay(SuppressTrace trace, Blackhole sink);

    int numRecords();

    static BufferUnderTest named(String name) {
        switch (name) {
            case SparkSuppressBuffer.NAME: return new SparkSuppressBuffer();
            case KafkaStreamsBuffer.NAME: return new KafkaStreamsBuffer();
            default: throw new IllegalArgumentException("unknown buffer '" + name + "': expected "
                + SparkSuppressBuffer.NAME + " or " + KafkaStreamsBuffer.NAME);
        }
    }
}
