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

/** A whole rate-limiting suppression per invocation: {@code records} puts with their evictions ({@link SuppressTrace}). */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
public class SuppressLoopBenchmark {

    @State(Scope.Thread)
    public static class Subject {
        @Param({SparkSuppressBuffer.NAME, KafkaStreamsBuffer.NAME})
        public String buffer;

        @Param({"200000"})
        public int records;

        @Param({"50000"})
        public int distinctKeys;

        @Param({"5000"})
        public long timeLimitMs;

        @Param({"20000"})
        public int maxRecords;

        public SuppressTrace trace;
        public BufferUnderTest under;

        @Setup(Level.Trial)
        public void create() {
            trace = new SuppressTrace(records, distinctKeys, timeLimitMs, maxRecords);
            under = BufferUnderTest.named(buffer);
        }

        @Setup(Level.Invocation)
        public void empty() {
            under.reset();
        }
    }

    @Benchmark
    public int suppress(Subject s, Blackhole sink) {
        s.under.replay(s.trace, sink::consume);
        return s.under.numRecords();
    }
}
