package io.github.sparksuppress.bench;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.Properties;
import java.util.function.Consumer;

import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.internals.Change;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.internals.ProcessorRecordContext;
import org.apache.kafka.streams.state.internals.InMemoryTimeOrderedKeyValueChangeBuffer;
import org.apache.kafka.streams.state.internals.TimeOrderedKeyValueBuffer;
import org.apache.kafka.test.MockInternalProcessorContext;

/**
 * Kafka Streams' {@code InMemoryTimeOrderedKeyValueChangeBuffer}, the buffer behind {@code suppress}, hosted the
 * way Kafka's own buffer tests host it. Changelogging is disabled, so it does no work for fault tolerance here,
 * and the records and record contexts Kafka's processor would hand it are built once per trace, outside the
 * measurement, as our buffer's inputs are.
 */
public final class KafkaStreamsBuffer implements BufferUnderTest {
    public static final String NAME = "kafka-streams";
    private static final String STORE = "suppress-buffer";

    private final MockInternalProcessorContext<Object, Object> context;
    private InMemoryTimeOrderedKeyValueChangeBuffer<byte[], byte[], Change<byte[]>> buffer;

    private BufferTrace prepared;
    private KafkaRecords inserts;
    private KafkaRecords updates;
    private SuppressTrace preparedReplay;
    private KafkaRecords replayRecords;

    public KafkaStreamsBuffer() {
        Properties config = new Properties();
        config.setProperty(StreamsConfig.APPLICATION_ID_CONFIG, "spark-suppress-benchmark");
        config.setProperty(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        File stateDir;
        try {
            stateDir = Files.createTempDirectory("kafka-buffer-bench").toFile();
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
        stateDir.deleteOnExit();
        context = new MockInternalProcessorContext<>(config, new TaskId(0, 0), stateDir);
        reset();
    }

    @Override
    public void reset() {
        if (buffer != null) buffer.close();
        buffer = new InMemoryTimeOrderedKeyValueChangeBuffer.Builder<>(STORE, Serdes.ByteArray(), Serdes.ByteArray())
            .withLoggingDisabled()
            .build();
        buffer.init((StateStoreContext) context, buffer);
    }

    private void prepare(BufferTrace t) {
        if (prepared == t) return;
        int[] identity = new int[t.size];
        int[] keyOfUpdate = new int[t.size];
        long[] updateTimes = new long[t.size];
        for (int i = 0; i < t.size; i++) {
            identity[i] = i;
            keyOfUpdate[i] = t.updateOrder[i];
            updateTimes[i] = t.timestamps[t.updateOrder[i]];
        }
        inserts = new KafkaRecords(t.keys, identity, t.values, t.timestamps);
        updates = new KafkaRecords(t.keys, keyOfUpdate, t.updateValues, updateTimes);
        prepared = t;
    }

    @Override
    public void insertAll(BufferTrace t) {
        prepare(t);
        putAll(inserts);
    }

    @Override
    public void updateAll(BufferTrace t) {
        prepare(t);
        putAll(updates);
    }

    private void putAll(KafkaRecords r) {
        for (int i = 0; i < r.records.length; i++) {
            buffer.put(r.records[i].timestamp(), r.records[i], r.contexts[i]);
        }
    }

    @Override
    public int evictAll(Consumer<Object> out) {
        int before = buffer.numRecords();
        buffer.evictWhile(() -> true, out::accept);
        return before - buffer.numRecords();
    }

    @Override
    public void replay(SuppressTrace t, Consumer<Object> out) {
        if (preparedReplay != t) {
            int[] identity = new int[t.records];
            for (int i = 0; i < t.records; i++) identity[i] = i;
            replayRecords = new KafkaRecords(t.keys, identity, t.values, t.timestamps);
            preparedReplay = t;
        }
        final InMemoryTimeOrderedKeyValueChangeBuffer<byte[], byte[], Change<byte[]>> b = buffer;
        long streamTime = Long.MIN_VALUE;
        for (int i = 0; i < t.records; i++) {
            Record<byte[], Change<byte[]>> record = replayRecords.records[i];
            long ts = record.timestamp();
            b.put(ts, record, replayRecords.contexts[i]);
            if (ts > streamTime) streamTime = ts;
            // Kafka's suppress processor: evict what the time limit lets out, then enforce the bound.
            final long expiry = streamTime - t.timeLimitMs;
            b.evictWhile(() -> b.minTimestamp() <= expiry, out::accept);
            if (b.numRecords() > t.maxRecords) b.evictWhile(() -> b.numRecords() > t.maxRecords, out::accept);
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    public String describe(Object evicted) {
        TimeOrderedKeyValueBuffer.Eviction<byte[], Change<byte[]>> e =
            (TimeOrderedKeyValueBuffer.Eviction<byte[], Change<byte[]>>) evicted;
        return BufferAgreement.line(e.key(), e.value().newValue, e.recordContext().timestamp());
    }

    @Override
    public int numRecords() {
        return buffer.numRecords();
    }

    /** The records and record contexts Kafka's suppress processor passes to {@code put}. */
    private static final class KafkaRecords {
        final Record<byte[], Change<byte[]>>[] records;
        final ProcessorRecordContext[] contexts;

        @SuppressWarnings("unchecked")
        KafkaRecords(byte[][] keySpace, int[] keyIndex, byte[][] values, long[] timestamps) {
            records = new Record[values.length];
            contexts = new ProcessorRecordContext[values.length];
            for (int i = 0; i < values.length; i++) {
                records[i] = new Record<>(keySpace[keyIndex[i]], new Change<>(values[i], null), timestamps[i]);
                contexts[i] = new ProcessorRecordContext(timestamps[i], i, 0, "input", new RecordHeaders());
            }
        }
    }
}
