package io.github.sparksuppress.bench;

import java.util.function.Consumer;

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

    /**
     * Evicts oldest-first until the buffer is empty, handing each evicted record to {@code out}; returns how many
     * entries left. JMH passes its Blackhole ({@code sink::consume}); {@link BufferAgreement} a recorder.
     */
    int evictAll(Consumer<Object> out);

    /** Replays a suppression: each put followed by the time-limit and size-bound evictions, handed to {@code out}. */
    void replay(SuppressTrace trace, Consumer<Object> out);

    /** An evicted record as handed to {@code out}, as "key value timestamp" (bytes in hex), for comparing buffers. */
    String describe(Object evicted);

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
