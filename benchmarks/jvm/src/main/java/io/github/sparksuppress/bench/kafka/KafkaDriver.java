package io.github.sparksuppress.bench.kafka;

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.DataOutputStream;
import java.io.FileOutputStream;
import java.io.FileReader;
import java.io.FileWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The Kafka side of the end-to-end benchmark, the same for every system under test.
 *
 * <pre>
 * topics BOOTSTRAP PARTITIONS TOPIC...                    create the topics
 * run BOOTSTRAP IN OUT EVENTS_CSV EXPECTED TIMEOUT_S ROWS  produce the events, consume results until EXPECTED
 * paced BOOTSTRAP IN OUT PARTITIONS RATE KEYS DISORDER_MS PRIME RAMP_S WARMUP_MAX_S MEASURE_S DRAIN_S PRODUCED RESULTS
 *                                                         a fixed offered rate, for the sustained benchmark
 * </pre>
 *
 * {@code run} starts consuming OUT first, then produces every line {@code key,timestampMs,value} of EVENTS_CSV
 * to IN with that timestamp, and stops once it has read EXPECTED results whose keys do not start with {@code ~}
 * (the flush records' windows, which never close). Once everything is produced, it sends the flush records
 * again every half second: Kafka Streams looks for closed windows at most once a second of wall time, when a
 * record arrives, so without a later record the windows the flush closed would wait forever (the repeats do
 * not move stream time; both systems count them in the flush records' own windows, which are left out). It writes
 * the results it read to ROWS and prints one line {@code RESULT {...}} with the first-produced, last-produced and
 * last-consumed wall times (ms).
 */
public final class KafkaDriver {
    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "topics" -> topics(args[1], Integer.parseInt(args[2]), List.of(args).subList(3, args.length));
            case "run" -> run(args[1], args[2], args[3], args[4], Long.parseLong(args[5]), Long.parseLong(args[6]),
                args[7]);
            case "paced" -> paced(args[1], args[2], args[3], Integer.parseInt(args[4]), Long.parseLong(args[5]),
                Integer.parseInt(args[6]), Integer.parseInt(args[7]), Integer.parseInt(args[8]),
                Long.parseLong(args[9]), Long.parseLong(args[10]), Long.parseLong(args[11]), Long.parseLong(args[12]),
                args[13], args[14]);
            default -> throw new IllegalArgumentException("unknown command " + args[0]);
        }
    }

    static void topics(String bootstrap, int partitions, List<String> names) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(p)) {
            List<NewTopic> topics = new ArrayList<>();
            for (String n : names) topics.add(new NewTopic(n, partitions, (short) 1));
            admin.createTopics(topics).all().get();
        }
    }

    /** Reads the results topic from its start, keys and values as strings. */
    static Properties resultsConsumer(String bootstrap, String out) {
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, "bench-driver-" + out);
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return c;
    }

    /** Writes the events: string keys, batches of up to 256 KiB sent after at most 5 ms. */
    static Properties producer(String bootstrap, Class<?> valueSerializer) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, valueSerializer.getName());
        return p;
    }

    static void run(String bootstrap, String in, String out, String eventsCsv, long expected, long timeoutS,
                    String rowsPath) throws Exception {
        Properties c = resultsConsumer(bootstrap, out);
        Properties p = producer(bootstrap, ByteArraySerializer.class);

        Map<String, String> rows = new HashMap<>();
        List<String> flush = new ArrayList<>();
        AtomicLong firstProduced = new AtomicLong(), lastProduced = new AtomicLong();
        long produced;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
            consumer.subscribe(List.of(out));
            consumer.poll(Duration.ofMillis(100)); // joins the group before the first result can exist
            Thread producer = new Thread(() -> produce(p, in, eventsCsv, firstProduced, lastProduced, flush));
            producer.start();
            long deadline = System.currentTimeMillis() + timeoutS * 1000;
            long lastConsumed = 0, duplicates = 0, nextTick = 0;
            KafkaProducer<String, byte[]> ticks = new KafkaProducer<>(p);
            while (rows.size() < expected && System.currentTimeMillis() < deadline) {
                long now = System.currentTimeMillis();
                if (lastProduced.get() > 0 && now >= nextTick) {
                    synchronized (flush) {
                        for (String line : flush) ticks.send(record(in, line));
                    }
                    ticks.flush();
                    nextTick = now + 500;
                }
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(50))) {
                    if (r.key().startsWith("~")) continue;
                    if (rows.put(r.key(), r.value()) != null) duplicates++;
                    lastConsumed = System.currentTimeMillis();
                }
            }
            producer.join();
            ticks.close();
            try (PrintWriter w = new PrintWriter(new FileWriter(rowsPath))) {
                for (Map.Entry<String, String> e : rows.entrySet()) w.println(e.getKey() + "," + e.getValue());
            }
            System.out.println("RESULT {\"first_produced_ms\": " + firstProduced.get() + ", \"last_produced_ms\": "
                + lastProduced.get() + ", \"last_consumed_ms\": " + lastConsumed + ", \"results\": " + rows.size()
                + ", \"duplicate_results\": " + duplicates + ", \"complete\": " + (rows.size() >= expected) + "}");
        }
    }

    static ProducerRecord<String, byte[]> record(String topic, String line) {
        int a = line.indexOf(','), b = line.indexOf(',', a + 1);
        long ts = Long.parseLong(line, a + 1, b, 10);
        byte[] value = ByteBuffer.allocate(8).putLong(Long.parseLong(line, b + 1, line.length(), 10)).array();
        return new ProducerRecord<>(topic, null, ts, line.substring(0, a), value);
    }

    static void produce(Properties p, String topic, String eventsCsv, AtomicLong first, AtomicLong last,
                        List<String> flush) {
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(p);
             BufferedReader r = new BufferedReader(new FileReader(eventsCsv), 1 << 20)) {
            String line;
            boolean started = false;
            while ((line = r.readLine()) != null) {
                ProducerRecord<String, byte[]> record = record(topic, line);
                if (!started) {
                    first.set(System.currentTimeMillis());
                    started = true;
                }
                producer.send(record);
                if (line.startsWith("~")) {
                    synchronized (flush) {
                        flush.add(line);
                    }
                }
            }
            producer.flush();
            last.set(System.currentTimeMillis());
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    /**
     * The load of the sustained benchmark ({@code harness/kafka_sustained.py}): RATE records per second in 10 ms
     * slices, key {@code k%07d} uniform over KEYS, written to partition key % PARTITIONS (so the harness knows each
     * key's partition without Kafka's hash), record timestamp = the wall clock minus up to DISORDER_MS (uniform;
     * less than the grace, so no record is late), value = the record's sequence number as a decimal string.
     * Meanwhile it consumes OUT, and for DRAIN_S seconds more once the load has ended.
     *
     * <p>In three phases; the second begins on the harness's first line on standard input, the third on its second
     * line, and a third line ends the measurement early (the harness has seen the rate fail: the load stops, and so
     * does the consuming, without DRAIN_S):
     * <ol>
     *   <li>PRIME records sent at once (the same keys, timestamps and values as the load's), then
     *       {@code PRIMED <wall ms>}; the harness answers once the system has processed them, so that a system's
     *       cold start (for Spark, planning and its first micro-batch) is behind it when the load begins.</li>
     *   <li>The warm-up: the load, rising evenly from nothing to RATE over its first RAMP_S seconds, so that
     *       neither system meets the full rate cold (the JIT compiling under it, Spark's micro-batches growing
     *       before they settle). It lasts until the harness's second line (it waits for the system's lag to
     *       settle), or WARMUP_MAX_S seconds at most.</li>
     *   <li>The measurement: {@code MEASURING <wall ms>}, then MEASURE_S more seconds of load at RATE.</li>
     * </ol>
     *
     * <p>Writes two big-endian binary files for the harness, which computes the expected results and latencies
     * from them itself: PRODUCED, one {@code int key, int ts - start, int sent - start} per record in sequence
     * order (sent = the wall time just before {@code send}); RESULTS, one {@code int key, long a, long b,
     * int consumed - start} per result, where a, b = window start ms and count for {@code key@start -> count}
     * results, and seq, -1 for {@code key -> seq} results. Prints {@code ACKED <wall ms> <records>} every 100 ms
     * (records the broker has acknowledged: the input's end offsets summed) and, at the end, one line
     * {@code RESULT {...}} with the start time (ms), when the load and the measurement began ({@code load_ms},
     * {@code measure_ms}, ms after the start), when it was stopped early ({@code stopped_ms}, -1 if not) and the
     * counts.
     */
    static void paced(String bootstrap, String in, String out, int partitions, long rate, int keys, int disorderMs,
                      int prime, long rampS, long warmupMaxS, long measureS, long drainS, String producedPath,
                      String resultsPath)
        throws Exception {
        Properties c = resultsConsumer(bootstrap, out);
        Properties p = producer(bootstrap, StringSerializer.class);

        AtomicLong acked = new AtomicLong(), sent = new AtomicLong();
        AtomicLong loadStart = new AtomicLong(-1), measureStart = new AtomicLong(-1), stopped = new AtomicLong(-1);
        AtomicBoolean producing = new AtomicBoolean(true);
        long results = 0, start;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c);
             DataOutputStream res = new DataOutputStream(new BufferedOutputStream(
                 new FileOutputStream(resultsPath), 1 << 20))) {
            consumer.subscribe(List.of(out));
            consumer.poll(Duration.ofMillis(100)); // joins the group before the first result can exist
            start = System.currentTimeMillis();
            final long t0 = start;
            Thread producer = new Thread(() -> {
                try {
                    produceAtRate(p, in, partitions, rate, keys, disorderMs, t0, producedPath, sent, acked, prime,
                        rampS * 1000, warmupMaxS * 1000, measureS * 1000, loadStart, measureStart, stopped);
                } catch (IOException e) {
                    throw new RuntimeException(e);
                } finally {
                    producing.set(false);
                }
            });
            producer.start();
            long nextReport = 0, drainUntil = Long.MAX_VALUE;
            while (System.currentTimeMillis() < drainUntil) {
                long now = System.currentTimeMillis();
                if (now >= nextReport) {
                    System.out.println("ACKED " + now + " " + acked.get());
                    nextReport = now + 100;
                }
                if (!producing.get() && drainUntil == Long.MAX_VALUE) {
                    drainUntil = stopped.get() >= 0 ? now : now + drainS * 1000;
                }
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(20))) {
                    int consumed = (int) (System.currentTimeMillis() - start);
                    String k = r.key();
                    int at = k.indexOf('@');
                    res.writeInt(Integer.parseInt(k, 1, at < 0 ? k.length() : at, 10));
                    if (at < 0) {
                        res.writeLong(Long.parseLong(r.value()));
                        res.writeLong(-1);
                    } else {
                        res.writeLong(Long.parseLong(k, at + 1, k.length(), 10));
                        res.writeLong(Long.parseLong(r.value()));
                    }
                    res.writeInt(consumed);
                    results++;
                }
            }
            producer.join();
        }
        System.out.println("RESULT {\"start_ms\": " + start + ", \"load_ms\": " + (loadStart.get() - start)
            + ", \"measure_ms\": " + (measureStart.get() - start) + ", \"stopped_ms\": "
            + (stopped.get() < 0 ? -1 : stopped.get() - start) + ", \"sent\": " + sent.get() + ", \"acked\": "
            + acked.get() + ", \"results\": " + results + "}");
    }

    static void produceAtRate(Properties p, String topic, int partitions, long rate, int keys, int disorderMs,
                              long start, String producedPath, AtomicLong sent, AtomicLong acked, int prime,
                              long rampMs, long warmupMaxMs, long measureMs, AtomicLong loadStart,
                              AtomicLong measureStart, AtomicLong stopped) throws IOException {
        SplittableRandom random = new SplittableRandom(42);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p);
             DataOutputStream log = new DataOutputStream(new BufferedOutputStream(
                 new FileOutputStream(producedPath), 1 << 20))) {
            String[] names = new String[keys];
            for (int k = 0; k < keys; k++) names[k] = String.format("k%07d", k);
            long seq = 0;
            BufferedReader harness = new BufferedReader(new InputStreamReader(System.in));
            while (seq < prime) {
                sendOne(producer, log, random, names, topic, partitions, disorderMs, start, seq++, acked);
                sent.set(seq);
            }
            producer.flush();
            log.flush();
            System.out.println("PRIMED " + System.currentTimeMillis());
            System.out.flush();
            if (harness.readLine() == null) {
                throw new IOException("standard input closed before the harness said the system was primed");
            }
            long load = System.currentTimeMillis();
            loadStart.set(load);
            Thread settled = new Thread(() -> {
                try {
                    if (harness.readLine() != null) measureStart.compareAndSet(-1, System.currentTimeMillis());
                    if (harness.readLine() != null) stopped.compareAndSet(-1, System.currentTimeMillis());
                } catch (IOException e) {
                    // The warm-up then lasts its longest.
                }
            });
            settled.setDaemon(true);
            settled.start();
            boolean announced = false;
            while (true) {
                long now = System.currentTimeMillis(), elapsed = now - load;
                if (elapsed >= warmupMaxMs) measureStart.compareAndSet(-1, now);
                long measuring = measureStart.get();
                if (measuring >= 0 && !announced) {
                    System.out.println("MEASURING " + measuring);
                    announced = true;
                }
                if ((measuring >= 0 && now - measuring >= measureMs) || stopped.get() >= 0) break;
                long due = prime + dueByLoad(rate, rampMs, elapsed);
                while (seq < due) {
                    sendOne(producer, log, random, names, topic, partitions, disorderMs, start, seq++, acked);
                    sent.set(seq);
                }
                long next = load + (elapsed / 10 + 1) * 10; // the next 10 ms slice
                long sleep = next - System.currentTimeMillis();
                if (sleep > 0) {
                    try {
                        Thread.sleep(sleep);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        break;
                    }
                }
            }
            producer.flush();
        }
    }

    /**
     * Records the load has offered {@code elapsed} ms after it began: the integral of a rate that rises linearly
     * from 0 to {@code rate} over {@code rampMs}, then holds.
     */
    static long dueByLoad(long rate, long rampMs, long elapsed) {
        if (elapsed >= rampMs) return rate * (2 * elapsed - rampMs) / 2000;
        return rate * elapsed * elapsed / (2000 * rampMs);
    }

    /** One record of the load, logged before it is sent; times in the log are relative to the driver's start. */
    static void sendOne(KafkaProducer<String, String> producer, DataOutputStream log, SplittableRandom random,
                        String[] names, String topic, int partitions, int disorderMs, long start, long seq,
                        AtomicLong acked) throws IOException {
        int key = random.nextInt(names.length);
        long at = System.currentTimeMillis();
        long ts = at - (disorderMs > 0 ? random.nextInt(disorderMs) : 0);
        log.writeInt(key);
        log.writeInt((int) (ts - start));
        log.writeInt((int) (at - start));
        producer.send(new ProducerRecord<>(topic, key % partitions, ts, names[key], Long.toString(seq)),
            (m, e) -> {
                if (e == null) acked.incrementAndGet();
            });
    }
}
