package io.github.sparksuppress.bench;

import io.github.sparksuppress.core.BufferTimeRule;
import io.github.sparksuppress.core.KeyOps;
import io.github.sparksuppress.core.SuppressionBuffer;
import java.util.function.Consumer;

import io.github.sparksuppress.core.BufferedRecord;

/** spark-suppress's {@link SuppressionBuffer} (byte-array keys, as the Spark adapter keys it). */
public final class SparkSuppressBuffer implements BufferUnderTest {
    public static final String NAME = "spark-suppress";

    private SuppressionBuffer<byte[], byte[]> buffer;

    public SparkSuppressBuffer() {
        reset();
    }

    @Override
    public void reset() {
        buffer = new SuppressionBuffer<>(BufferTimeRule.First$.MODULE$, KeyOps.bytes());
    }

    @Override
    public void insertAll(BufferTrace t) {
        for (int i = 0; i < t.size; i++) {
            buffer.put(t.keys[i], t.values[i], t.timestamps[i], t.timestamps[i], t.entrySizes[i]);
        }
    }

    @Override
    public void updateAll(BufferTrace t) {
        for (int i = 0; i < t.size; i++) {
            int k = t.updateOrder[i];
            buffer.put(t.keys[k], t.updateValues[i], t.timestamps[k], t.timestamps[k], t.entrySizes[k]);
        }
    }

    @Override
    public int evictAll(Consumer<Object> out) {
        int n = 0;
        while (buffer.nonEmpty()) {
            out.accept(buffer.evictOldest());
            n++;
        }
        return n;
    }

    @Override
    public void replay(SuppressTrace t, Consumer<Object> out) {
        long streamTime = Long.MIN_VALUE;
        for (int i = 0; i < t.records; i++) {
            long ts = t.timestamps[i];
            buffer.put(t.keys[i], t.values[i], ts, ts, t.entrySizes[i]);
            if (ts > streamTime) streamTime = ts;
            long expiry = streamTime - t.timeLimitMs;
            while (buffer.minBufferTime() <= expiry) out.accept(buffer.evictOldest());
            while (buffer.numRecords() > t.maxRecords) out.accept(buffer.evictOldest());
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    public String describe(Object evicted) {
        BufferedRecord<byte[], byte[]> r = (BufferedRecord<byte[], byte[]>) evicted;
        return BufferAgreement.line(r.key(), r.value(), r.timestamp());
    }

    @Override
    public int numRecords() {
        return buffer.numRecords();
    }
}
