package io.icebergcdc.localkafka;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A real Kafka broker for tests and benchmarks: one KRaft node (broker and controller) on loopback,
 * from the {@code kafka_2.13} artifact on the class path, run as its own process. Its storage is
 * formatted with {@code kafka.tools.StorageTool} and it is started with {@code kafka.Kafka}, as
 * Kafka's own scripts do; {@link #close()} stops it.
 */
public final class LocalKafkaBroker implements AutoCloseable {

  private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

  private Path directory;
  private Process process;
  private int port;

  private LocalKafkaBroker() {}

  /** Starts a broker and returns once it answers. */
  public static LocalKafkaBroker start() throws Exception {
    LocalKafkaBroker broker = new LocalKafkaBroker();
    broker.startProcess();
    return broker;
  }

  public String bootstrapServers() {
    return "127.0.0.1:" + port;
  }

  private void startProcess() throws Exception {
    directory = Files.createTempDirectory("kafka-it");
    port = freePort();
    int controllerPort = freePort();
    Path properties = directory.resolve("server.properties");
    Files.writeString(
        properties,
        String.join(
            "\n",
            "process.roles=broker,controller",
            "node.id=1",
            "controller.quorum.voters=1@127.0.0.1:" + controllerPort,
            "listeners=PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort,
            "advertised.listeners=PLAINTEXT://127.0.0.1:" + port,
            "controller.listener.names=CONTROLLER",
            "inter.broker.listener.name=PLAINTEXT",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs=" + directory.resolve("data"),
            "num.partitions=1",
            "auto.create.topics.enable=false",
            "offsets.topic.replication.factor=1",
            "offsets.topic.num.partitions=1",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "share.coordinator.state.topic.replication.factor=1",
            "share.coordinator.state.topic.min.isr=1",
            "group.initial.rebalance.delay.ms=0",
            ""),
        StandardCharsets.UTF_8);
    Path log = directory.resolve("broker.log");
    int formatted =
        java(
                "kafka.tools.StorageTool",
                "format",
                "-t",
                Uuid.randomUuid().toString(),
                "-c",
                properties.toString())
            .redirectOutput(log.toFile())
            .redirectErrorStream(true)
            .start()
            .waitFor();
    if (formatted != 0) {
      throw new IllegalStateException(
          "formatting the Kafka storage failed: " + Files.readString(log));
    }
    process =
        java("kafka.Kafka", properties.toString())
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .redirectErrorStream(true)
            .start();
    awaitReady(log);
  }

  private void awaitReady(Path log) throws Exception {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    Exception last = null;
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException("the Kafka broker exited: " + Files.readString(log));
      }
      try (Admin admin = admin()) {
        admin.describeCluster().nodes().get(5, TimeUnit.SECONDS);
        return;
      } catch (Exception e) {
        last = e;
        Thread.sleep(500);
      }
    }
    throw new IllegalStateException(
        "the Kafka broker did not start within " + START_TIMEOUT + ": " + Files.readString(log),
        last);
  }

  @Override
  public void close() throws Exception {
    if (process != null) {
      process.destroy();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    }
  }

  public Admin admin() {
    Properties properties = new Properties();
    properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    return Admin.create(properties);
  }

  /**
   * Creates a topic and returns once the broker leads each of its partitions: a producer that sends
   * before then is refused (NOT_LEADER_OR_FOLLOWER), and its idempotent retries can then loop on
   * OUT_OF_ORDER_SEQUENCE_NUMBER.
   */
  public void createTopic(String name, int partitions) throws Exception {
    try (Admin admin = admin()) {
      admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
      long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
      while (true) {
        boolean led;
        try {
          led =
              admin
                  .describeTopics(List.of(name))
                  .allTopicNames()
                  .get()
                  .get(name)
                  .partitions()
                  .stream()
                  .allMatch(partition -> partition.leader() != null);
        } catch (java.util.concurrent.ExecutionException e) {
          led = false; // not known to the broker's metadata yet
        }
        if (led) {
          return;
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "topic " + name + " has no leader after " + START_TIMEOUT);
        }
        Thread.sleep(50);
      }
    }
  }

  /**
   * Sends records (key, value) to a topic, each to the partition its key hashes to, and returns
   * where each went, in order.
   */
  public List<RecordMetadata> produce(String topic, List<Map.Entry<String, String>> records)
      throws Exception {
    Properties properties = new Properties();
    properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    properties.put(ProducerConfig.ACKS_CONFIG, "all");
    properties.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
    List<Future<RecordMetadata>> sent = new ArrayList<>();
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer())) {
      for (Map.Entry<String, String> record : records) {
        sent.add(producer.send(new ProducerRecord<>(topic, record.getKey(), record.getValue())));
      }
      producer.flush();
    }
    List<RecordMetadata> metadata = new ArrayList<>();
    for (Future<RecordMetadata> future : sent) {
      metadata.add(future.get());
    }
    return metadata;
  }

  /**
   * Sends records (key, value) to a topic as {@code records} gives them, each to the partition its
   * key hashes to, holding none of them once sent, and returns the highest offset written to each
   * partition: for more records than a heap holds.
   */
  public Map<Integer, Long> produceEach(String topic, Iterator<Map.Entry<String, String>> records)
      throws Exception {
    Properties properties = new Properties();
    properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    properties.put(ProducerConfig.ACKS_CONFIG, "all");
    properties.put(ProducerConfig.LINGER_MS_CONFIG, "20");
    properties.put(ProducerConfig.BATCH_SIZE_CONFIG, String.valueOf(512 * 1024));
    Map<Integer, Long> ends = new ConcurrentHashMap<>();
    AtomicReference<Exception> failure = new AtomicReference<>();
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer())) {
      while (records.hasNext() && failure.get() == null) {
        Map.Entry<String, String> record = records.next();
        producer.send(
            new ProducerRecord<>(topic, record.getKey(), record.getValue()),
            (metadata, e) -> {
              if (e != null) {
                failure.compareAndSet(null, e);
              } else {
                ends.merge(metadata.partition(), metadata.offset(), Math::max);
              }
            });
      }
      producer.flush();
    }
    if (failure.get() != null) {
      throw failure.get();
    }
    return new TreeMap<>(ends);
  }

  private static ProcessBuilder java(String mainClass, String... args) {
    List<String> command = new ArrayList<>();
    command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx512m");
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(mainClass);
    command.addAll(List.of(args));
    return new ProcessBuilder(command);
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
