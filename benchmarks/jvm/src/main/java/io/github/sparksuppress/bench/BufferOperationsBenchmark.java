package io.github.sparksuppress.bench;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Inserts, updates and evictions of {@code size} keys, one invocation doing all of them (so the per-operation
 * time is the score divided by {@code size}; benchmarks/run.py reports operations per second). Each fork runs one
 * buffer implementation only, so neither shares a JIT profile with the other.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
public class BufferOperationsBenchmark {

    /** The buffer and the trace; each benchmark's state below adds what the buffer holds before an invocation. */
    @State(Scope.Thread)
    public abstract static class Subject {
        @Param({SparkSuppressBuffer.NAME, KafkaStreamsBuffer.NAME})
        public String buffer;

        @Param({"100000"})
        public int size;

        public BufferTrace trace;
        public BufferUnderTest under;

        @Setup(Level.Trial)
        public void create() {
            trace = new BufferTrace(size);
            under = BufferUnderTest.named(buffer);
        }
    }

    /** An empty buffer before every invocation. */
    @State(Scope.Thread)
    public static class Empty extends Subject {
        @Setup(Level.Invocation)
        public void empty() {
            under.reset();
        }
    }

    /** A buffer holding every key of the trace before every invocation. */
    @State(Scope.Thread)
    public static class Full extends Subject {
        @Setup(Level.Invocation)
        public void fill() {
            under.reset();
            under.insertAll(trace);
        }
    }

    /** A buffer holding every key of the trace; updates keep it that way, so it is filled once per iteration. */
    @State(Scope.Thread)
    public static class Steady extends Subject {
        @Setup(Level.Iteration)
        public void fill() {
            under.reset();
            under.insertAll(trace);
        }
    }

    @Benchmark
    public int insert(Empty s) {
        s.under.insertAll(s.trace);
        return s.under.numRecords();
    }

    @Benchmark
    public int update(Steady s) {
        s.under.updateAll(s.trace);
        return s.under.numRecords();
    }

    @Benchmark
    public int evict(Full s, Blackhole sink) {
        int n = s.under.evictAll(sink::consume);
        if (n != s.size) throw new IllegalStateException("evicted " + n + " of " + s.size + " entries");
        return n;
    }
}
