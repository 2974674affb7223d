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
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kafka's ids of topics, which tell a topic deleted and created again under its name from the old
 * one: of the job's topics at its start ({@link #describe}), and of the topic of a table that
 * appeared while a pattern job runs, looked up when its committer takes it ({@link #of}). A topic
 * that cannot be described is left out, and its offsets are taken as before; nothing here holds a
 * job back for long, or logs the client's properties.
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
   * @param adminProperties the job's Kafka client properties, for an admin client
   * @param topicPattern the job's pattern of topics
   * @param tables how a topic's table is named
   */
  KafkaTopicIds(
      Properties adminProperties,
      String bootstrapServers,
      String topicPattern,
      TableDefinition tables) {
    this.adminProperties = withTimeouts(adminProperties);
    this.bootstrapServers = bootstrapServers;
    this.topicPattern = topicPattern;
    this.tables = tables;
  }

  /** The ids of the topics matching the pattern now whose table is {@code table}, by name. */
  @Override
  public Map<String, String> of(String table) {
    Pattern pattern = Pattern.compile(topicPattern);
    List<String> topics = new ArrayList<>();
    try (Admin admin = Admin.create(adminProperties)) {
      for (String topic :
          admin.listTopics().names().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        if (pattern.matcher(topic).matches() && tables.nameOfTopic(topic).equals(table)) {
          topics.add(topic);
        }
      }
      return describe(admin, topics, bootstrapServers);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Map.of();
    } catch (ExecutionException | TimeoutException | org.apache.kafka.common.KafkaException e) {
      LOG.warn(
          "The topics of {} cannot be listed, so table {}, which appeared while the job runs,"
              + " records no topic id with its offsets, and a topic deleted and created again"
              + " under its name is not told from the old one: {}",
          bootstrapServers,
          table,
          (e instanceof ExecutionException ? e.getCause() : e).toString());
      return Map.of();
    }
  }

  /** The id of each of {@code topics} that exists now, by its name. */
  static Map<String, String> describe(
      Properties adminProperties, Collection<String> topics, String bootstrapServers)
      throws InterruptedException {
    try (Admin admin = Admin.create(withTimeouts(adminProperties))) {
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

  /** Not a job held back by an unreachable cluster: the source tries again as it always did. */
  private static Properties withTimeouts(Properties adminProperties) {
    Properties properties = new Properties();
    properties.putAll(adminProperties);
    properties.putIfAbsent(
        AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, String.valueOf(TIMEOUT.toMillis()));
    properties.putIfAbsent(
        AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, String.valueOf(TIMEOUT.toMillis()));
    return properties;
  }
}
