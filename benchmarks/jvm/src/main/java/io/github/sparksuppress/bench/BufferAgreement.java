package io.github.sparksuppress.bench;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * The result check of the buffer benchmarks, run once before JMH and never timed: drives both buffers through the
 * traces JMH measures and writes, per buffer and operation, the records it evicted in order (one line each:
 * key, value, timestamp). benchmarks/harness/buffer_core.py compares the two buffers' files line by line, so a
 * buffer that evicts other records, or the same in another order, fails the benchmark.
 *
 * <p>What each operation leaves observable: {@code insert} and {@code update} the buffer's order afterwards (read by
 * evicting everything), {@code evict} the evictions themselves, {@code suppress} what the suppression emitted,
 * followed by what it left buffered.
 *
 * <p>Usage: {@code BufferAgreement <outDir> <size> <records> <distinctKeys> <timeLimitMs> <maxRecords>}.
 */
public final class BufferAgreement {
    public static final String[] OPERATIONS = {"insert", "update", "evict", "suppress"};

    private BufferAgreement() {}

    public static void main(String[] args) throws IOException {
        if (args.length != 6) {
            System.err.println(
                "usage: BufferAgreement <outDir> <size> <records> <distinctKeys> <timeLimitMs> <maxRecords>");
            System.exit(2);
        }
        Path out = Paths.get(args[0]);
        Files.createDirectories(out);
        BufferTrace trace = new BufferTrace(Integer.parseInt(args[1]));
        SuppressTrace replay = new SuppressTrace(Integer.parseInt(args[2]), Integer.parseInt(args[3]),
            Long.parseLong(args[4]), Integer.parseInt(args[5]));
        for (String name : new String[] {SparkSuppressBuffer.NAME, KafkaStreamsBuffer.NAME}) {
            BufferUnderTest under = BufferUnderTest.named(name);
            for (String op : OPERATIONS) {
                try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve(name + "-" + op + ".txt")))) {
                    under.reset();
                    switch (op) {
                        case "insert":
                        case "evict":
                            under.insertAll(trace);
                            break;
                        case "update":
                            under.insertAll(trace);
                            under.updateAll(trace);
                            break;
                        default:
                            under.replay(replay, e -> w.println(under.describe(e)));
                            w.println("-- left buffered");
                    }
                    under.evictAll(e -> w.println(under.describe(e)));
                }
            }
        }
        System.out.println("WROTE " + out);
    }

    static String line(byte[] key, byte[] value, long timestamp) {
        return hex(key) + " " + (value == null ? "null" : hex(value)) + " " + timestamp;
    }

    private static String hex(byte[] bytes) {
        StringBuilder s = new StringBuilder(bytes.length * 2);
        for (byte b : bytes) s.append(Character.forDigit((b >> 4) & 0xF, 16)).append(Character.forDigit(b & 0xF, 16));
        return s.toString();
    }
}
