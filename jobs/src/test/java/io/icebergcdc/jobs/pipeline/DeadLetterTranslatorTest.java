package io.icebergcdc.jobs.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.jobs.definition.KafkaTopics;
import org.junit.jupiter.api.Test;

class DeadLetterTranslatorTest {

  private static KafkaTopics reading(String topic) {
    return reading("broker:9092", topic);
  }

  /** Topics read by a job of the default group. */
  private static KafkaTopics reading(String brokers, String... topics) {
    return new KafkaTopics(
        brokers,
        java.util.List.of(topics),
        null,
        "iceberg-cdc",
        "earliest",
        KafkaTopics.DEBEZIUM_JSON,
        java.util.Map.of(),
        null);
  }

  /**
   * Two jobs of the default consumer group that read other topics get producers of their own: with
   * one transactional id prefix, each job's start fenced the other's dead-letter producers.
   */
  @Test
  void jobsOfOneGroupThatReadOtherTopicsHaveTransactionalIdsOfTheirOwn() {
    String orders = DeadLetterTranslator.transactionalIdPrefix(reading("orders"), "dead");
    String customers = DeadLetterTranslator.transactionalIdPrefix(reading("customers"), "dead");

    assertThat(orders).startsWith("iceberg-cdc-dead-letters-iceberg-cdc-").isNotEqualTo(customers);
    assertThat(DeadLetterTranslator.transactionalIdPrefix(reading("orders"), "dead"))
        .as("every run of a job: the same")
        .isEqualTo(orders);
    assertThat(DeadLetterTranslator.transactionalIdPrefix(reading("orders"), "other-dead"))
        .isNotEqualTo(orders);
    assertThat(
            DeadLetterTranslator.transactionalIdPrefix(
                reading("a:9092,b:9092", "orders", "customers"), "dead"))
        .as("the same job, its topics in another order, its cluster by other brokers")
        .isEqualTo(
            DeadLetterTranslator.transactionalIdPrefix(
                reading("b:9092", "customers", "orders"), "dead"));
  }
}
