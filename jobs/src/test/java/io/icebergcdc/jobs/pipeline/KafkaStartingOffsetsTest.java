package io.icebergcdc.jobs.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.connector.kafka.source.split.KafkaPartitionSplit;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** Where a Kafka job without state starts each partition. */
class KafkaStartingOffsetsTest {

  private static final TopicPartition A0 = new TopicPartition("a", 0);
  private static final TopicPartition A1 = new TopicPartition("a", 1);
  private static final TopicPartition A2 = new TopicPartition("a", 2);
  private static final TopicPartition B0 = new TopicPartition("b", 0);

  /** A topic of records 10 to 999 whose group has committed offset 500 of {@code b}. */
  private static final OffsetsInitializer.PartitionOffsetsRetriever TOPICS =
      new OffsetsInitializer.PartitionOffsetsRetriever() {
        @Override
        public Map<TopicPartition, Long> committedOffsets(Collection<TopicPartition> partitions) {
          Map<TopicPartition, Long> offsets = new HashMap<>();
          if (partitions.contains(B0)) {
            offsets.put(B0, 500L);
          }
          if (partitions.contains(A2)) {
            offsets.put(A2, 600L);
          }
          return offsets;
        }

        @Override
        public Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions) {
          return each(partitions, 1000L);
        }

        @Override
        public Map<TopicPartition, Long> beginningOffsets(Collection<TopicPartition> partitions) {
          return each(partitions, 10L);
        }

        @Override
        public Map<TopicPartition, OffsetAndTimestamp> offsetsForTimes(
            Map<TopicPartition, Long> timestamps) {
          Map<TopicPartition, OffsetAndTimestamp> offsets = new HashMap<>();
          timestamps.forEach((p, t) -> offsets.put(p, new OffsetAndTimestamp(700L, t)));
          return offsets;
        }

        private Map<TopicPartition, Long> each(Collection<TopicPartition> partitions, long at) {
          Map<TopicPartition, Long> offsets = new HashMap<>();
          partitions.forEach(p -> offsets.put(p, at));
          return offsets;
        }
      };

  /**
   * A partition the tables hold no offset for starts as --starting-offsets says (the earliest,
   * latest and committed offsets as the reader resolves them), not from the group's committed
   * offset (committed at a checkpoint whether or not its Iceberg commit succeeded): Flink's
   * initializer of given offsets gave 500 for {@code b} whatever the option.
   */
  @Test
  void partitionsTheTablesHoldNoOffsetForStartAsTheOptionSays() {
    Map<TopicPartition, Long> tables = Map.of(A0, 42L);
    List<TopicPartition> both = List.of(A0, B0);
    assertThat(
            KafkaSourceTranslator.startingOffsets("earliest", tables)
                .getPartitionOffsets(both, TOPICS))
        .isEqualTo(Map.of(A0, 42L, B0, KafkaPartitionSplit.EARLIEST_OFFSET));
    assertThat(
            KafkaSourceTranslator.startingOffsets("latest", tables)
                .getPartitionOffsets(both, TOPICS))
        .isEqualTo(Map.of(A0, 42L, B0, 1000L));
    assertThat(
            KafkaSourceTranslator.startingOffsets("committed", tables)
                .getPartitionOffsets(both, TOPICS))
        .isEqualTo(Map.of(A0, 42L, B0, KafkaPartitionSplit.COMMITTED_OFFSET));
    assertThat(
            KafkaSourceTranslator.startingOffsets("timestamp:1700000000000", tables)
                .getPartitionOffsets(both, TOPICS))
        .isEqualTo(Map.of(A0, 42L, B0, 700L));
    // An offset the topic no longer holds (deleted by retention), or past its end (created again),
    // starts at the earliest record it holds, whatever the option.
    Map<TopicPartition, Long> outOfRange = Map.of(A0, 3L, B0, 5000L);
    for (String option : List.of("earliest", "latest")) {
      assertThat(
              KafkaSourceTranslator.startingOffsets(option, outOfRange)
                  .getPartitionOffsets(both, TOPICS))
          .isEqualTo(Map.of(A0, 10L, B0, 10L));
    }
    // A partition of a topic the table holds offsets of, but not of it (added to the topic since,
    // or read without a record reaching the table) starts at its earliest record, whatever the
    // group committed (it may be another job's group); with 'committed' at the group's offset.
    for (String option : List.of("earliest", "latest", "timestamp:1700000000000")) {
      assertThat(
              KafkaSourceTranslator.startingOffsets(option, tables)
                  .getPartitionOffsets(List.of(A0, A1, A2, B0), TOPICS))
          .as(option)
          .containsEntry(A0, 42L)
          .containsEntry(A1, 10L)
          .containsEntry(A2, 10L);
    }
    assertThat(
            KafkaSourceTranslator.startingOffsets("committed", tables)
                .getPartitionOffsets(List.of(A0, A1, A2, B0), TOPICS))
        .containsEntry(A0, 42L)
        .containsEntry(A1, 10L)
        .containsEntry(A2, 600L);
    // The consumer's own reset, for an offset that goes out of range later, follows the option.
    assertThat(
            KafkaSourceTranslator.startingOffsets("earliest", tables).getAutoOffsetResetStrategy())
        .isEqualTo(OffsetResetStrategy.EARLIEST);
    assertThat(KafkaSourceTranslator.startingOffsets("latest", tables).getAutoOffsetResetStrategy())
        .isEqualTo(OffsetResetStrategy.LATEST);
  }
}
