package io.icebergcdc.jobs.kafka;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a Kafka job without state starts each partition: after the offset its Iceberg table holds,
 * where the table holds one, and every other partition as the job's {@code --starting-offsets}
 * says. Unlike Flink's {@link OffsetsInitializer#offsets}, which starts the partitions it is not
 * given from the group's committed offsets: those are committed when a checkpoint completes,
 * whether or not the Iceberg commit of it succeeded, and a topic whose table was dropped to be
 * written again would be read from the end the group had reached.
 *
 * <p>A partition that the tables hold no offset of, of a topic they hold offsets of, starts at its
 * earliest record (added to the topic since, or read without a record reaching a table), or with
 * {@code --starting-offsets committed} at the group's committed offset where it has one.
 *
 * <p>A table's offset the topic no longer holds (its records deleted by retention) is warned of,
 * naming the records that are lost to the table, and the partition starts at its earliest record;
 * one past the partition's end (a topic created again) is warned of too, and the partition starts
 * at its earliest record. Neither is left to the consumer's reset strategy, which for {@code
 * --starting-offsets latest} would skip records the table never saw.
 */
public final class TableOffsetsFirst implements OffsetsInitializer {

  private static final long serialVersionUID = 1L;

  private static final Logger LOG = LoggerFactory.getLogger(TableOffsetsFirst.class);

  private final Map<TopicPartition, Long> tableOffsets;
  private final OffsetsInitializer others;
  private final OffsetResetStrategy outOfRange;
  private final boolean groupTrusted;

  /**
   * @param tableOffsets the offset to start each partition at that the tables hold one for (one
   *     past the last record they hold)
   * @param others where the other partitions start
   * @param outOfRange where a partition starts whose offset the topic no longer or not yet holds
   * @param groupTrusted whether the consumer group's committed offsets may start a partition of a
   *     topic the tables hold offsets of but not of it ({@code --starting-offsets committed})
   */
  public TableOffsetsFirst(
      Map<TopicPartition, Long> tableOffsets,
      OffsetsInitializer others,
      OffsetResetStrategy outOfRange,
      boolean groupTrusted) {
    this.tableOffsets = new HashMap<>(tableOffsets);
    this.others = others;
    this.outOfRange = outOfRange;
    this.groupTrusted = groupTrusted;
  }

  @Override
  public Map<TopicPartition, Long> getPartitionOffsets(
      Collection<TopicPartition> partitions, PartitionOffsetsRetriever retriever) {
    Map<TopicPartition, Long> offsets = new HashMap<>();
    List<TopicPartition> rest = new ArrayList<>();
    for (TopicPartition partition : partitions) {
      Long offset = tableOffsets.get(partition);
      if (offset == null) {
        rest.add(partition);
      } else {
        offsets.put(partition, offset);
      }
    }
    if (!offsets.isEmpty()) {
      Map<TopicPartition, Long> beginnings = retriever.beginningOffsets(offsets.keySet());
      Map<TopicPartition, Long> ends = retriever.endOffsets(offsets.keySet());
      for (Map.Entry<TopicPartition, Long> start : offsets.entrySet()) {
        TopicPartition partition = start.getKey();
        long offset = start.getValue();
        Long beginning = beginnings.get(partition);
        Long end = ends.get(partition);
        if (beginning != null && offset < beginning) {
          LOG.warn(
              "Partition {} no longer holds offsets {} to {}, after those its table holds: their"
                  + " records are lost to the table; the partition is read from offset {}",
              partition,
              offset,
              beginning - 1,
              beginning);
          start.setValue(beginning);
        } else if (beginning != null && end != null && offset > end) {
          LOG.warn(
              "Partition {} ends at offset {}, before offset {} that its table holds (the topic"
                  + " was created again?); the partition is read from offset {}",
              partition,
              end,
              offset,
              beginning);
          start.setValue(beginning);
        }
      }
    }
    // A partition of a topic the tables hold offsets of, but not of it: added to the topic since,
    // its records all after the table's, or read without a record reaching the table (quiet, its
    // records dead letters). Read from its earliest record, which at worst reads again what the
    // job read before; the group's committed offset only where the job is told to trust it (the
    // default group may be another job's, and its offsets are committed whether or not the
    // Iceberg commit succeeded).
    java.util.Set<String> topicsHeld = new java.util.HashSet<>();
    tableOffsets.keySet().forEach(p -> topicsHeld.add(p.topic()));
    List<TopicPartition> unheld = new ArrayList<>();
    rest.removeIf(p -> topicsHeld.contains(p.topic()) && unheld.add(p));
    if (!unheld.isEmpty()) {
      Map<TopicPartition, Long> committed =
          groupTrusted ? retriever.committedOffsets(unheld) : Map.of();
      Map<TopicPartition, Long> beginnings = retriever.beginningOffsets(unheld);
      for (TopicPartition partition : unheld) {
        Long read = committed.get(partition);
        if (read != null && read >= 0) {
          offsets.put(partition, read);
          continue;
        }
        long beginning = beginnings.getOrDefault(partition, 0L);
        LOG.info(
            "Partition {} has no offset in its table, which holds offsets of other partitions of"
                + " its topic, nor in the group: added to the topic since; read from its earliest"
                + " record, offset {}",
            partition,
            beginning);
        offsets.put(partition, beginning);
      }
    }
    if (!rest.isEmpty()) {
      offsets.putAll(others.getPartitionOffsets(rest, retriever));
    }
    return offsets;
  }

  @Override
  public OffsetResetStrategy getAutoOffsetResetStrategy() {
    return outOfRange;
  }
}
