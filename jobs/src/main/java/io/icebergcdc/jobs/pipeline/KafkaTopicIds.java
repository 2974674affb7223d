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

  /**
   * When the last listing failed, in nanoseconds; null if it did not. After a failure, the next
   * listing waits {@link #RETRY}, so that the tables a restored committer takes back one after the
   * other do not each wait for a cluster that does not answer.
   */
  private transient Long failedAt;

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
   * The ids of the topics matching the pattern whose table is {@code table}, by name: from the last
   * listing of the pattern's topics, or from a new one where that lacks the table's topic (unless a
   * listing failed less than {@link #RETRY} ago). Each listing waits at most about {@link
   * #TIMEOUT}.
   */
  @Override
  public synchronized Map<String, String> of(String table) {
    Map<String, String> ids = idsOf(table);
    if (ids.isEmpty() && (failedAt == null || System.nanoTime() - failedAt > RETRY.toNanos())) {
      Map<String, String> now = list(table);
      failedAt = now == null ? Long.valueOf(System.nanoTime()) : null;
      listed = now == null ? listed : now;
      ids = idsOf(table);
    }
    return ids;
  }

  private Map<String, String> idsOf(String table) {
    Map<String, String> ids = new LinkedHashMap<>();
    if (listed != null) {
      listed.forEach(
          (topic, id) -> {
            if (tables.nameOfTopic(topic).equals(table)) {
              ids.put(topic, id);
            }
          });
    }
    return ids;
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
      return describe(admin, topics, bootstrapServers);
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
      return describe(admin, topics, bootstrapServers);
    } catch (org.apache.kafka.common.KafkaException e) {
      LOG.warn(
          "The topics of {} cannot be described, so this start does not record their ids: {}",
          bootstrapServers,
          e.toString());
      return Map.of();
    }
  }

  private static Map<String, String> describe(
      Admin admin, Collection<String> topics, String bootstrapServers) throws InterruptedException {
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
