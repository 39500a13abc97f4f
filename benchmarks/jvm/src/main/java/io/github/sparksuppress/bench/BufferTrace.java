package io.github.sparksuppress.bench;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * The operations both buffers replay, drawn once from a fixed seed: {@code size} distinct keys inserted with
 * mostly increasing timestamps (up to {@code DISORDER_MS} out of order, as a real stream is), then updates that
 * hit the buffered keys in a random order with new values.
 */
public final class BufferTrace {
    public static final long SEED = 20_240_611L;
    public static final long START_MS = 1_700_000_000_000L;
    /** Records per millisecond of event time, and how far a record may arrive behind the newest one. */
    public static final int RECORDS_PER_MS = 10;
    public static final int DISORDER_MS = 2_000;
    public static final int VALUE_BYTES = 32;

    public final int size;
    public final byte[][] keys;
    public final byte[][] values;
    public final byte[][] updateValues;
    public final long[] timestamps;
    /** Which key the i-th update hits: a permutation of the keys. */
    public final int[] updateOrder;
    /** The size a caller hands our buffer with each put (the Spark adapter computes it from the row). */
    public final long[] entrySizes;

    public BufferTrace(int size) {
        this.size = size;
        SplittableRandom random = new SplittableRandom(SEED);
        keys = new byte[size][];
        values = new byte[size][];
        updateValues = new byte[size][];
        timestamps = new long[size];
        entrySizes = new long[size];
        int[] ids = permutation(size, random);
        for (int i = 0; i < size; i++) {
            keys[i] = key(ids[i]);
            values[i] = value(random);
            updateValues[i] = value(random);
            timestamps[i] = timestamp(i, random);
            entrySizes[i] = keys[i].length + values[i].length + 8L;
        }
        updateOrder = permutation(size, random);
    }

    static byte[] key(int id) {
        return String.format("key-%08d", id).getBytes(StandardCharsets.UTF_8);
    }

    static byte[] value(SplittableRandom random) {
        byte[] v = new byte[VALUE_BYTES];
        for (int i = 0; i < v.length; i++) v[i] = (byte) random.nextInt(256);
        return v;
    }

    static long timestamp(long index, SplittableRandom random) {
        return START_MS + index / RECORDS_PER_MS - random.nextInt(DISORDER_MS);
    }

    static int[] permutation(int n, SplittableRandom random) {
        int[] p = new int[n];
        for (int i = 0; i < n; i++) p[i] = i;
        for (int i = n - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = p[i];
            p[i] = p[j];
            p[j] = t;
        }
        return p;
    }
}
