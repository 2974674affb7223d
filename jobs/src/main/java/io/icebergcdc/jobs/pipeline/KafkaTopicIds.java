package io.icebergcdc.jobs.pipeline;

import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.sink.NewTables;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kafka's ids of topics, which tell a topic deleted and created again under its name from the old
 * one: of the job's topics at its start ({@link #describe}), and of the topic of a table that
 * appeared while a pattern job runs, looked up when its committer takes it ({@link #of}), also at
 * each restore. A topic that cannot be described is left out, and its offsets are taken as before;
 * nothing here holds a job back for long, or logs the client's properties.
 */
final class KafkaTopicIds implements NewTables.KafkaTopicIds {

  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(KafkaTopicIds.class);
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  private final Properties adminProperties;
  private final String bootstrapServers;
  private final String topicPattern;
  private final TableDefinition tables;

  /**
   * The ids of the pattern's topics found by the last listing, by name; one listing serves the
   * tables a restored committer takes back one after the other.
   */
  private transient Map<String, String> listed;

  /** When the last listing was made or failed, in nanoseconds. */
  private transient long listedAt;

  /**
   * Whether the last listing failed. Within {@link #RETRY} of a listing, its ids serve (the tables
   * a restored committer takes back one after the other), and after a failure no listing is tried,
   * so that those tables do not each wait for a cluster that does not answer.
   */
  private transient boolean failed;

  private static final Duration RETRY = Duration.ofSeconds(30);

  /**
   * @param adminProperties the job's Kafka client properties, for an admin client
   * @param bootstrapServers the cluster, for messages
   * @param topicPattern the job's pattern of topics
   * @param tables how a topic's table is named
   */
  KafkaTopicIds(
      Properties adminProperties,
      String bootstrapServers,
      String topicPattern,
      TableDefinition tables) {
    this.adminProperties = withTimeouts(adminProperties, true);
    this.bootstrapServers = bootstrapServers;
    this.topicPattern = topicPattern;
    this.tables = tables;
  }

  /**
   * The ids of the topics matching the pattern whose table is {@code table}, by name: from a
   * listing of the pattern's topics made less than {@link #RETRY} ago, or from a new one (unless
   * the last failed less than that ago). A listing waits at most about twice {@link #TIMEOUT}: to
   * list the topics, then to describe them.
   */
  @Override
  public synchronized Map<String, String> of(String table) {
    boolean recent = listed != null && System.nanoTime() - listedAt < RETRY.toNanos();
    Map<String, String> ids = recent ? idsOf(table) : Map.of();
    if (ids.isEmpty() && !(failed && System.nanoTime() - listedAt < RETRY.toNanos())) {
      Map<String, String> now = list(table);
      listedAt = System.nanoTime();
      failed = now == null;
      listed = now;
      ids = idsOf(table);
    }
    return ids;
  }

  private Map<String, String> idsOf(String table) {
    Map<String, String> ids = new LinkedHashMap<>();
    if (listed != null) {
      listed.forEach(
          (topic, id) -> {
            if (isTableOf(topic, table)) {
              ids.put(topic, id);
            }
          });
    }
    return ids;
  }

  /** Whether {@code topic}'s table is {@code table}, named as the router names it. */
  private boolean isTableOf(String topic, String table) {
    try {
      return TableIdentifier.parse(tables.nameOfTopic(topic)).toString().equals(table);
    } catch (IllegalArgumentException e) {
      return false; // no table name: the router refuses the topic
    }
  }

  /** The ids of the topics that match the pattern now, by name; null if they cannot be listed. */
  private Map<String, String> list(String table) {
    Pattern pattern = Pattern.compile(topicPattern);
    Admin admin = null;
    try {
      admin = Admin.create(adminProperties);
      List<String> topics = new ArrayList<>();
      for (String topic :
          admin
              .listTopics(new ListTopicsOptions().timeoutMs((int) TIMEOUT.toMillis()))
              .names()
              .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        if (pattern.matcher(topic).matches()) {
          topics.add(topic);
        }
      }
      return describe(admin, topics, bootstrapServers, null);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    } catch (ExecutionException | TimeoutException | org.apache.kafka.common.KafkaException e) {
      LOG.warn(
          "The topics of {} cannot be listed, so table {}, which appeared while the job runs,"
              + " records no topic id with its offsets, and a topic deleted and created again"
              + " under its name is not told from the old one: {}",
          bootstrapServers,
          table,
          (e instanceof ExecutionException ? e.getCause() : e).toString());
      return null;
    } finally {
      if (admin != null) {
        admin.close(Duration.ofSeconds(1));
      }
    }
  }

  /** The id of each of {@code topics} that exists now, by its name. */
  static Map<String, String> describe(
      Properties adminProperties, Collection<String> topics, String bootstrapServers)
      throws InterruptedException {
    try (Admin admin = Admin.create(withTimeouts(adminProperties, false))) {
      List<String> missing = new ArrayList<>();
      Map<String, String> ids = describe(admin, topics, bootstrapServers, missing);
      if (!missing.isEmpty()) {
        throw new IllegalArgumentException(
            (missing.size() == 1 ? "topic " : "topics ")
                + String.join(", ", missing)
                + (missing.size() == 1 ? " is" : " are")
                + " not on "
                + bootstrapServers
                + ": create "
                + (missing.size() == 1 ? "it" : "them")
                + ", or name the existing ones in --topics");
      }
      return ids;
    } catch (org.apache.kafka.common.KafkaException e) {
      LOG.warn(
          "The topics of {} cannot be described, so this start does not record their ids: {}",
          bootstrapServers,
          e.toString());
      return Map.of();
    }
  }

  /**
   * Fails, naming it, where the dead-letter topic is not on the cluster: the job would otherwise
   * wait for it at its first dead letter, a minute at a time, committing nothing meanwhile.
   */
  static void checkDeadLetterTopic(
      Properties adminProperties, String topic, String bootstrapServers)
      throws InterruptedException {
    try (Admin admin = Admin.create(withTimeouts(adminProperties, false))) {
      List<String> missing = new ArrayList<>();
      describe(admin, List.of(topic), bootstrapServers, missing);
      if (!missing.isEmpty() && createsTopics(admin)) {
        LOG.warn(
            "The dead-letter topic {} is not on {}, whose brokers create a topic at its first"
                + " write (auto.create.topics.enable): it is created, with the brokers' defaults,"
                + " at the first dead letter",
            topic,
            bootstrapServers);
        return;
      }
      if (!missing.isEmpty()) {
        throw new IllegalArgumentException(
            "--dead-letter-topic "
                + topic
                + " is not on "
                + bootstrapServers
                + ": create it, or name an existing topic");
      }
    } catch (org.apache.kafka.common.KafkaException e) {
      LOG.warn(
          "The dead-letter topic {} of {} cannot be described, so this start does not check it: {}",
          topic,
          bootstrapServers,
          e.toString());
    }
  }

  /** Whether a broker of the cluster creates a topic at its first write; false if unknown. */
  private static boolean createsTopics(Admin admin) throws InterruptedException {
    try {
      var nodes = admin.describeCluster().nodes().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      if (nodes.isEmpty()) {
        return false;
      }
      var broker =
          new org.apache.kafka.common.config.ConfigResource(
              org.apache.kafka.common.config.ConfigResource.Type.BROKER,
              nodes.iterator().next().idString());
      var entry =
          admin
              .describeConfigs(List.of(broker))
              .all()
              .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
              .get(broker)
              .get("auto.create.topics.enable");
      return entry != null && Boolean.parseBoolean(entry.value());
    } catch (ExecutionException | TimeoutException | org.apache.kafka.common.KafkaException e) {
      return false;
    }
  }

  private static Map<String, String> describe(
      Admin admin, Collection<String> topics, String bootstrapServers, List<String> missing)
      throws InterruptedException {
    Map<String, String> ids = new LinkedHashMap<>();
    if (topics.isEmpty()) {
      return ids;
    }
    for (Map.Entry<String, KafkaFuture<TopicDescription>> described :
        admin
            .describeTopics(topics, new DescribeTopicsOptions().timeoutMs((int) TIMEOUT.toMillis()))
            .topicNameValues()
            .entrySet()) {
      try {
        Uuid id = described.getValue().get().topicId();
        if (id != null && !id.equals(Uuid.ZERO_UUID)) {
          ids.put(described.getKey(), id.toString());
        }
      } catch (ExecutionException e) {
        if (missing != null
            && e.getCause()
                instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException) {
          missing.add(described.getKey());
          continue;
        }
        LOG.warn(
            "Topic {} of {} cannot be described, so its id is not recorded, and a topic deleted and"
                + " created again under its name is not told from the old one: {}",
            described.getKey(),
            bootstrapServers,
            e.getCause().toString());
      }
    }
    return ids;
  }

  /**
   * Not a job held back by an unreachable cluster: the source tries again as it always did. The
   * job's start keeps timeouts the user set; the committer's lookups do not wait longer than {@link
   * #TIMEOUT} whatever they are ({@code forced}).
   */
  private static Properties withTimeouts(Properties adminProperties, boolean forced) {
    Properties properties = new Properties();
    properties.putAll(adminProperties);
    for (String timeout :
        List.of(
            AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
            AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG)) {
      if (forced) {
        properties.put(timeout, String.valueOf(TIMEOUT.toMillis()));
      } else {
        properties.putIfAbsent(timeout, String.valueOf(TIMEOUT.toMillis()));
      }
    }
    return properties;
  }
}
