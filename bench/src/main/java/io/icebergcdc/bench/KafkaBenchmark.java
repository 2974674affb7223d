package io.icebergcdc.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.jobs.definition.DeadLetterOutput;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.KafkaTopics;
import io.icebergcdc.jobs.definition.RuntimeDefinition;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.jobs.demo.ChangelogGenerator;
import io.icebergcdc.jobs.pipeline.JobRunner;
import io.icebergcdc.localkafka.LocalKafkaBroker;
import io.icebergcdc.sink.CatalogDefinition;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.LocalDate;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.util.TimeUtils;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * Measures Kafka to Iceberg: a local broker (the tests' {@link LocalKafkaBroker}) is filled with a
 * changelog first, then the Kafka job ({@code apply --source kafka} as a library call, local Flink)
 * applies it, and the time from the job's submission until a snapshot's Kafka offsets reach the end
 * of every partition is measured. Two formats on the same changes: Debezium JSON (one event in a
 * hundred with its schema, as the demo changelog writes them) and upsert JSON. With {@code
 * --debezium-file} (events with their schemas) and {@code --peers true}, Flink SQL's Kafka source
 * with the debezium-json format reads the same topic into Iceberg's upsert table and into Paimon
 * ({@link DebeziumJsonSqlPeer}), each in a JVM of its own.
 */
public final class KafkaBenchmark {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  public static void main(String[] args) throws Exception {
    Map<String, String> options = new LinkedHashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      options.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    int changes = Integer.parseInt(options.getOrDefault("changes", "1000000"));
    int keys = Integer.parseInt(options.getOrDefault("keys", "100000"));
    int parallelism = Integer.parseInt(options.getOrDefault("parallelism", "2"));
    Duration interval = TimeUtils.parseDuration(options.getOrDefault("checkpoint-interval", "2s"));
    Path out =
        Paths.get(options.getOrDefault("out", "bench/results/kafka-" + LocalDate.now() + ".md"));
    Path work = Files.createTempDirectory("iceberg-cdc-kafka-bench");

    // --debezium-file: events written by bench/scripts/debezium_json_events.py, each with its
    // Connect schema, read by the Debezium JSON path only; else the generated changelog.
    // A file's events are streamed into the broker as they are read, never all held here.
    String file = options.get("debezium-file");
    List<Map.Entry<String, String>> debezium = new ArrayList<>();
    List<Map.Entry<String, String>> upserts = new ArrayList<>();
    long events;
    if (file == null) {
      List<String> lines = new ChangelogGenerator(changes, keys, 0, 0, 7).generate().lines();
      for (String line : lines) {
        JsonNode payload = payloadOf(MAPPER.readTree(line));
        JsonNode after = payload.get("after");
        String key = keyOf(payload);
        debezium.add(Map.entry(key, line));
        upserts.add(new AbstractMap.SimpleEntry<>(key, after.isNull() ? null : upsertRow(after)));
      }
      events = lines.size();
    } else {
      try (java.util.stream.Stream<String> lines = Files.lines(Paths.get(file))) {
        events = lines.count();
      }
    }
    StringBuilder report = new StringBuilder();
    report.append(
        String.format(
            Locale.ROOT,
            "Kafka benchmark, %s: %,d changes (%s) in a topic of %d partitions on a local"
                + " broker, read by a job of parallelism %d, checkpoints every %d ms, format"
                + " version 3; %d cores, Java %s.%n%n",
            LocalDate.now(),
            events,
            file != null
                ? "the Debezium JSON events of " + file + ", each with its schema"
                : String.format(Locale.ROOT, "over %,d keys", keys),
            parallelism,
            parallelism,
            interval.toMillis(),
            Runtime.getRuntime().availableProcessors(),
            System.getProperty("java.version")));
    report.append("| format | changes/s (submission to last commit) | seconds |\n");
    report.append("| --- | ---: | ---: |\n");
    try (LocalKafkaBroker broker = LocalKafkaBroker.start()) {
      Catalog catalog =
          CatalogDefinition.hadoop(work.resolve("warehouse").toString()).loader().loadCatalog();
      for (String format :
          file != null
              ? List.of(KafkaTopics.DEBEZIUM_JSON)
              : List.of(KafkaTopics.DEBEZIUM_JSON, KafkaTopics.UPSERT_JSON)) {
        String topic = "bench." + format.replace('-', '_');
        broker.createTopic(topic, parallelism);
        Map<String, Long> ends = new HashMap<>();
        String expected = null;
        if (file != null) {
          FileEvents read = new FileEvents(Paths.get(file));
          long started = System.nanoTime();
          broker
              .produceEach(topic, read)
              .forEach((partition, offset) -> ends.put(topic + "/" + partition, offset));
          System.out.printf(
              Locale.ROOT,
              "%,d events into the topic in %.1f s%n",
              events,
              (System.nanoTime() - started) / 1e9);
          expected = read.expectedRows();
        } else {
          List<RecordMetadata> sent =
              broker.produce(topic, format.equals(KafkaTopics.DEBEZIUM_JSON) ? debezium : upserts);
          // The events stay in the broker only: held here too, they would weigh on the job's heap.
          (format.equals(KafkaTopics.DEBEZIUM_JSON) ? debezium : upserts).clear();
          for (RecordMetadata metadata : sent) {
            ends.merge(topic + "/" + metadata.partition(), metadata.offset(), Math::max);
          }
        }
        if (Boolean.parseBoolean(options.getOrDefault("consumer-only", "false"))) {
          double consumer = consumeToEnd(broker, topic, ends);
          System.out.printf(Locale.ROOT, "a plain consumer: %.1f s%n", consumer);
          report.append(
              String.format(
                  Locale.ROOT,
                  "| a plain KafkaConsumer reading the topic into nothing, one thread |"
                      + " %,.0f | %.1f |%n",
                  events / consumer,
                  consumer));
        }
        TableIdentifier identifier = TableIdentifier.of("bench", topic.replace('.', '_'));
        if (format.equals(KafkaTopics.UPSERT_JSON)) {
          createUpsertTable(catalog, identifier);
        }
        System.out.printf(
            Locale.ROOT, "%s: %,d records in the topic; the job starts%n", format, events);
        double seconds =
            run(
                broker,
                work,
                format,
                topic,
                catalog,
                identifier,
                ends,
                parallelism,
                interval,
                consumerProperties(options.get("kafka-properties")));
        System.out.printf(Locale.ROOT, "%s: %.1f s%n", format, seconds);
        if (expected != null) {
          String ours = rowsOf(catalog.loadTable(identifier));
          if (!ours.equals(expected)) {
            throw new IllegalStateException(
                "our job left " + ours + " in " + identifier + ", the events " + expected);
          }
        }
        report.append(
            String.format(
                Locale.ROOT, "| %s | %,.0f | %.1f |%n", format, events / seconds, seconds));
        if (file != null && Boolean.parseBoolean(options.getOrDefault("peers", "false"))) {
          for (String sink : List.of("iceberg", "paimon")) {
            Path warehouse = work.resolve("warehouse-" + sink);
            double peer =
                runPeer(
                    sink,
                    warehouse,
                    "--bootstrap-servers",
                    broker.bootstrapServers(),
                    "--topic",
                    topic);
            String found = peerOutput(sink, warehouse, "--check", "bench.customers").trim();
            if (!found.endsWith(expected)) {
              throw new IllegalStateException(
                  "the Flink SQL peer into "
                      + sink
                      + " left "
                      + found
                      + ", the events "
                      + expected);
            }
            System.out.printf(Locale.ROOT, "Flink SQL into %s: %.1f s%n", sink, peer);
            report.append(
                String.format(
                    Locale.ROOT,
                    "| Flink SQL's Kafka source, debezium-json, into %s (ours against it: %.2fx) |"
                        + " %,.0f |"
                        + " %.1f |%n",
                    sink.equals("paimon") ? "Paimon" : "Iceberg's upsert table",
                    peer / seconds,
                    events / peer,
                    peer));
          }
        }
      }
    }
    Files.createDirectories(out.toAbsolutePath().getParent());
    Files.writeString(out, report.toString(), StandardCharsets.UTF_8);
    System.out.println(report);
  }

  private static double run(
      LocalKafkaBroker broker,
      Path work,
      String format,
      String topic,
      Catalog catalog,
      TableIdentifier identifier,
      Map<String, Long> ends,
      int parallelism,
      Duration interval,
      Map<String, String> consumerProperties)
      throws Exception {
    JobDefinition job =
        new JobDefinition(
            new KafkaTopics(
                broker.bootstrapServers(),
                List.of(topic),
                null,
                "bench-" + format,
                "earliest",
                format,
                consumerProperties,
                null),
            CatalogDefinition.hadoop(work.resolve("warehouse").toString()),
            new TableDefinition("bench.{topic}", List.of(), null, 3),
            new Configuration(),
            DeadLetterOutput.NONE,
            new RuntimeDefinition(
                parallelism,
                interval,
                work.resolve("checkpoints-" + format).toString(),
                "hashmap",
                null,
                0));
    long submitted = System.currentTimeMillis();
    JobClient client = new JobRunner(job).start();
    try {
      while (true) {
        if (client.getJobStatus().get().isGloballyTerminalState()) {
          client.getJobExecutionResult().get();
          throw new IllegalStateException("the Kafka job ended");
        }
        if (catalog.tableExists(identifier)) {
          Table table = catalog.loadTable(identifier);
          Snapshot current = table.currentSnapshot();
          if (current != null && reached(current, ends)) {
            return (current.timestampMillis() - submitted) / 1000.0;
          }
        }
        // The time is the commit's own, so a slow poll does not lengthen it; a fast one took CPU
        // from the job (loading the table's metadata ten times a second used 3.7 s of 25).
        Thread.sleep(1000);
      }
    } finally {
      // A job that ended has its failure thrown above (its cluster may be gone with it);
      // cancelling it then would hide that failure.
      try {
        client.cancel().get();
      } catch (RuntimeException | java.util.concurrent.ExecutionException e) {
        System.err.println("The Kafka job had ended: " + e.getMessage());
      }
    }
  }

  /**
   * Seconds a plain consumer of this JVM takes to read every partition of {@code topic} to the
   * offsets in {@code ends}, from its first: what the local broker delivers, without a job.
   */
  private static double consumeToEnd(LocalKafkaBroker broker, String topic, Map<String, Long> ends)
      throws Exception {
    java.util.Properties properties = new java.util.Properties();
    properties.put("bootstrap.servers", broker.bootstrapServers());
    properties.put("isolation.level", "read_committed");
    long start = System.nanoTime();
    try (org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]> consumer =
        new org.apache.kafka.clients.consumer.KafkaConsumer<>(
            properties,
            new org.apache.kafka.common.serialization.ByteArrayDeserializer(),
            new org.apache.kafka.common.serialization.ByteArrayDeserializer())) {
      // The offset each partition is read to, by partition number ("topic/N" in ends).
      Map<Integer, Long> left = new HashMap<>();
      ends.forEach(
          (partition, end) ->
              left.put(Integer.parseInt(partition.substring(partition.lastIndexOf('/') + 1)), end));
      List<org.apache.kafka.common.TopicPartition> partitions = new ArrayList<>();
      for (int partition : left.keySet()) {
        partitions.add(new org.apache.kafka.common.TopicPartition(topic, partition));
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      long bytes = 0;
      while (!left.isEmpty()) {
        for (org.apache.kafka.clients.consumer.ConsumerRecord<byte[], byte[]> record :
            consumer.poll(Duration.ofSeconds(1))) {
          bytes += record.value().length;
          if (left.containsKey(record.partition())
              && record.offset() >= left.get(record.partition())) {
            left.remove(record.partition());
          }
        }
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      System.out.printf(Locale.ROOT, "a plain consumer read %,d bytes in %.1f s%n", bytes, seconds);
      return seconds;
    }
  }

  /**
   * {@code key=value,...} for the benchmark's own consumers, split at every comma (without the
   * {@code \\,} of {@code apply --kafka-properties}); empty for null.
   */
  private static Map<String, String> consumerProperties(String pairs) {
    Map<String, String> properties = new LinkedHashMap<>();
    if (pairs != null) {
      for (String pair : pairs.split(",")) {
        int eq = pair.indexOf('=');
        properties.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
      }
    }
    return properties;
  }

  /**
   * Runs {@link DebeziumJsonSqlPeer} on the topic, up to its latest offsets, in a JVM of its own
   * with this one's class path and options; returns the seconds its job ran (from the statement's
   * submission, as ours is timed from the job's).
   */
  private static double runPeer(String sink, Path warehouse, String... source) throws Exception {
    String output = peerOutput(sink, warehouse, source);
    java.util.regex.Matcher ran =
        java.util.regex.Pattern.compile("the job ran ([0-9.]+) s").matcher(output);
    if (!ran.find()) {
      throw new IllegalStateException("the Flink SQL peer printed no time:\n" + output);
    }
    return Double.parseDouble(ran.group(1));
  }

  /** What {@link DebeziumJsonSqlPeer} printed, run with {@code arguments} in a JVM of its own. */
  private static String peerOutput(String sink, Path warehouse, String... arguments)
      throws Exception {
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.addAll(java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments());
    command.addAll(
        List.of(
            "-cp",
            System.getProperty("java.class.path"),
            DebeziumJsonSqlPeer.class.getName(),
            "--sink",
            sink,
            "--warehouse",
            warehouse.toAbsolutePath().toString()));
    command.addAll(List.of(arguments));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (process.waitFor() != 0) {
      throw new IllegalStateException("the Flink SQL peer into " + sink + " failed:\n" + output);
    }
    return output;
  }

  /** What a table holds, as the peer's check prints it: rows, and the sum of their qty. */
  private static String rowsOf(Table table) throws IOException {
    long rows = 0;
    long qty = 0;
    try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.data.Record> records =
        org.apache.iceberg.data.IcebergGenerics.read(table).select("qty").build()) {
      for (org.apache.iceberg.data.Record record : records) {
        rows++;
        Object value = record.getField("qty");
        qty += value == null ? 0 : ((Number) value).longValue();
      }
    }
    return "rows=" + rows + " qty=" + qty;
  }

  /** An event's payload, with or without its schema part. */
  private static JsonNode payloadOf(JsonNode root) {
    return root.has("payload") ? root.get("payload") : root;
  }

  /** The Kafka key of an event's payload, as Debezium writes it. */
  private static String keyOf(JsonNode payload) {
    JsonNode row = payload.get("after").isNull() ? payload.get("before") : payload.get("after");
    return "{\"id\":" + row.get("id").asLong() + "}";
  }

  /**
   * A file's events as Kafka records, one line at a time, noting what they leave as the peer's
   * check prints it: rows, and the sum of their qty.
   */
  private static final class FileEvents implements Iterator<Map.Entry<String, String>> {
    private final BufferedReader reader;
    private final Map<Long, Long> qty = new HashMap<>();
    private String next;

    FileEvents(Path file) throws IOException {
      this.reader = Files.newBufferedReader(file, StandardCharsets.UTF_8);
      this.next = reader.readLine();
    }

    @Override
    public boolean hasNext() {
      return next != null;
    }

    @Override
    public Map.Entry<String, String> next() {
      if (next == null) {
        throw new NoSuchElementException();
      }
      String line = next;
      try {
        JsonNode payload = payloadOf(MAPPER.readTree(line));
        if (payload.get("after").isNull()) {
          qty.remove(payload.get("before").get("id").asLong());
        } else {
          JsonNode after = payload.get("after");
          qty.put(after.get("id").asLong(), after.get("qty").asLong());
        }
        next = reader.readLine();
        if (next == null) {
          reader.close();
        }
        return Map.entry(keyOf(payload), line);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    String expectedRows() {
      return "rows="
          + qty.size()
          + " qty="
          + qty.values().stream().mapToLong(Long::longValue).sum();
    }
  }

  /** Whether the snapshot's Kafka offsets reach the last offset of every partition. */
  private static boolean reached(Snapshot snapshot, Map<String, Long> ends) {
    String offsets = snapshot.summary().get(SnapshotSummaryKeys.KAFKA_OFFSETS);
    if (offsets == null) {
      return false;
    }
    Map<String, Long> seen = new HashMap<>();
    for (String pair : offsets.split(",")) {
      int eq = pair.lastIndexOf('=');
      seen.put(pair.substring(0, eq), Long.parseLong(pair.substring(eq + 1)));
    }
    for (Map.Entry<String, Long> end : ends.entrySet()) {
      if (seen.getOrDefault(end.getKey(), -1L) < end.getValue()) {
        return false;
      }
    }
    return true;
  }

  private static String upsertRow(JsonNode row) throws Exception {
    // The upsert table's price is a decimal read from text, as Debezium's string mode writes it.
    Map<String, Object> values = new LinkedHashMap<>();
    values.put("id", row.get("id").asLong());
    values.put("name", row.get("name").asText());
    values.put("qty", row.get("qty").asInt());
    values.put("updated_at", row.get("updated_at").asLong());
    return MAPPER.writeValueAsString(values);
  }

  private static void createUpsertTable(Catalog catalog, TableIdentifier identifier) {
    catalog.createTable(
        identifier,
        new Schema(
            List.of(
                Types.NestedField.required(1, "id", Types.LongType.get()),
                Types.NestedField.optional(2, "name", Types.StringType.get()),
                Types.NestedField.optional(3, "qty", Types.IntegerType.get()),
                Types.NestedField.optional(4, "updated_at", Types.TimestampType.withoutZone())),
            Set.of(1)),
        PartitionSpec.unpartitioned(),
        Map.of("format-version", "3"));
  }
}
