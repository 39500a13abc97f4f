package io.github.sparksuppress.bench.kafka;

import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.EmitStrategy;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;

/**
 * The benchmark's windowed count as a Kafka Streams application: count per key and tumbling window, final results
 * only ({@code emitStrategy(onWindowClose())}), from the events topic (record timestamps are the events' times) to
 * the results topic as {@code key@windowStartMs -> count}, the format the Spark job writes too.
 *
 * <p>Args: bootstrap, application id, input topic, output topic, state directory, window size ms, grace ms,
 * stream threads. Runs until the process is terminated.
 */
public final class WindowedCountApp {
    public static void main(String[] args) throws InterruptedException {
        String bootstrap = args[0], appId = args[1], in = args[2], out = args[3], stateDir = args[4];
        long sizeMs = Long.parseLong(args[5]), graceMs = Long.parseLong(args[6]);
        int threads = Integer.parseInt(args[7]);

        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(in, Consumed.with(Serdes.String(), Serdes.ByteArray()))
            .groupByKey()
            .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(sizeMs), Duration.ofMillis(graceMs)))
            .emitStrategy(EmitStrategy.onWindowClose())
            .count()
            .toStream()
            .map((w, count) -> KeyValue.pair(w.key() + "@" + w.window().start(), Long.toString(count)))
            .to(out, Produced.with(Serdes.String(), Serdes.String()));

        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);
        // One thread per core, as Spark's local[2]. The default commit interval (30 s) would hold the last results
        // back for up to that long; 1 s keeps the end-to-end time about the work, not the schedule.
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 1000);
        props.put("consumer.auto.offset.reset", "earliest");
        // Kafka checks for closed windows at most once a second of wall time by default: after the last record (the
        // flush) there is no later record to trigger the check, so the last windows would never be emitted.
        props.put("emit.interval.ms.kstreams.windowed.aggregation", 0L);

        KafkaStreams streams = new KafkaStreams(builder.build(), props);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close(Duration.ofSeconds(30));
            stopped.countDown();
        }));
        streams.start();
        System.out.println("STARTED " + System.currentTimeMillis());
        stopped.await();
    }
}
