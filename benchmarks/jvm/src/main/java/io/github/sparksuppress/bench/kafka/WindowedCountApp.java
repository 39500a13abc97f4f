package io.github.sparksuppress.bench.kafka;

import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.EmitStrategy;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.Suppressed.BufferConfig;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.state.WindowStore;

/**
 * The benchmark's windowed count as a Kafka Streams application: count per key and tumbling window, final results
 * only ({@code emitStrategy(onWindowClose())}), from the events topic (record timestamps are the events' times) to
 * the results topic as {@code key@windowStartMs -> count}, the format the Spark job writes too. Kafka looks for
 * closed windows at most once a second, when a record arrives: the driver keeps sending the flush records until it
 * has every result (see {@link KafkaDriver}).
 *
 * <p>One setting differs from Kafka's defaults: the window store keeps 2 hours instead of size + grace. The flush
 * records come an hour after the events; with the default retention, the store would skip every window that starts
 * more than size + grace before the flush window, and a closed window whose emission the once-a-second throttle had
 * put off when the flush arrived was then never emitted (the driver waited for it until its timeout; about one run
 * in three). The benchmark's 200 s of event time never reach 2 hours, so the store expires nothing either way.
 *
 * <p>Args: bootstrap, application id, input topic, output topic, state directory, window size ms, grace ms,
 * stream threads, and for the sustained benchmark ({@code harness/kafka_sustained.py}) a job: {@code count} (the
 * above) or {@code rate_limit TIME_LIMIT_MS MAX_RECORDS}: each key's latest value through
 * {@code toTable().suppress(untilTimeLimit(limit, maxRecords(n).emitEarlyWhenFull()))}, key to key and value to
 * value, with the record cache off ({@code statestore.cache.max.bytes=0}) so that every update reaches the
 * suppression, as in Spark. With a job, it prints {@code POSITION <wall ms> <records processed>} every 100 ms (a
 * count at the source node, which the rest of the topology runs within): consumer lag = records produced minus
 * this. Runs until the process is terminated.
 */
public final class WindowedCountApp {
    public static void main(String[] args) throws InterruptedException {
        String bootstrap = args[0], appId = args[1], in = args[2], out = args[3], stateDir = args[4];
        long sizeMs = Long.parseLong(args[5]), graceMs = Long.parseLong(args[6]);
        int threads = Integer.parseInt(args[7]);
        String job = args.length > 8 ? args[8] : "";
        AtomicLong processed = new AtomicLong();
        Properties props = new Properties();

        StreamsBuilder builder = new StreamsBuilder();
        if (job.equals("rate_limit")) {
            Duration limit = Duration.ofMillis(Long.parseLong(args[9]));
            long maxRecords = Long.parseLong(args[10]);
            builder.stream(in, Consumed.with(Serdes.String(), Serdes.String()))
                .peek((k, v) -> processed.incrementAndGet())
                .toTable()
                .suppress(Suppressed.untilTimeLimit(limit, BufferConfig.maxRecords(maxRecords).emitEarlyWhenFull()))
                .toStream()
                .to(out, Produced.with(Serdes.String(), Serdes.String()));
            props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0L);
        } else {
            KStream<String, byte[]> events = builder.stream(in, Consumed.with(Serdes.String(), Serdes.ByteArray()));
            if (!job.isEmpty()) events = events.peek((k, v) -> processed.incrementAndGet());
            events.groupByKey()
                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(sizeMs), Duration.ofMillis(graceMs)))
                .emitStrategy(EmitStrategy.onWindowClose())
                .count(Materialized.<String, Long, WindowStore<Bytes, byte[]>>with(Serdes.String(), Serdes.Long())
                    .withRetention(Duration.ofHours(2)))
                .toStream()
                .map((w, count) -> KeyValue.pair(w.key() + "@" + w.window().start(), Long.toString(count)))
                .to(out, Produced.with(Serdes.String(), Serdes.String()));
        }

        props.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        // One thread per core, as Spark's local[2]; everything else as Kafka ships it.
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);

        KafkaStreams streams = new KafkaStreams(builder.build(), props);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close(Duration.ofSeconds(30));
            stopped.countDown();
        }));
        streams.start();
        System.out.println("STARTED " + System.currentTimeMillis());
        if (!job.isEmpty()) {
            while (!stopped.await(100, java.util.concurrent.TimeUnit.MILLISECONDS)) {
                System.out.println("POSITION " + System.currentTimeMillis() + " " + processed.get());
            }
        }
        stopped.await();
    }
}
