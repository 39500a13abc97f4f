package io.github.sparksuppress.bench;

import java.util.SplittableRandom;

/**
 * A rate-limiting suppression's workload ({@code untilTimeLimit(timeLimit, maxRecords(maxRecords).emitEarlyWhenFull())}):
 * {@code records} updates over {@code distinctKeys} keys, each put followed by the evictions Kafka's suppress
 * processor makes: every entry whose buffer time is at least {@code timeLimitMs} behind stream time, then the
 * oldest entries while more than {@code maxRecords} are buffered. It mixes inserts, updates and both kinds of
 * eviction in the proportions a real stream produces.
 */
public final class SuppressTrace {
    public final int records;
    public final long timeLimitMs;
    public final int maxRecords;
    public final byte[][] keys;
    public final byte[][] values;
    public final long[] timestamps;
    public final long[] entrySizes;

    public SuppressTrace(int records, int distinctKeys, long timeLimitMs, int maxRecords) {
        this.records = records;
        this.timeLimitMs = timeLimitMs;
        this.maxRecords = maxRecords;
        SplittableRandom random = new SplittableRandom(BufferTrace.SEED + 1);
        byte[][] keySpace = new byte[distinctKeys][];
        for (int k = 0; k < distinctKeys; k++) keySpace[k] = BufferTrace.key(k);
        keys = new byte[records][];
        values = new byte[records][];
        timestamps = new long[records];
        entrySizes = new long[records];
        for (int i = 0; i < records; i++) {
            keys[i] = keySpace[random.nextInt(distinctKeys)];
            values[i] = BufferTrace.value(random);
            timestamps[i] = BufferTrace.timestamp(i, random);
            entrySizes[i] = keys[i].length + values[i].length + 8L;
        }
    }
}
