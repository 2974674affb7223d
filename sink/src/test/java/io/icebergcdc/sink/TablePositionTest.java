package io.icebergcdc.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import java.nio.file.Path;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TablePositionTest {

  @TempDir Path dir;

  private Table table;

  @BeforeEach
  void createTable() {
    HadoopCatalog catalog = new HadoopCatalog(new Configuration(), dir.toString());
    table =
        catalog.createTable(
            TableIdentifier.of("db", "t"),
            new Schema(Types.NestedField.required(1, "id", Types.LongType.get())));
  }

  @Test
  void readsTheLatestPositionsUntilAnOverwriteThatRecordsNone() {
    assertThat(TablePosition.of(table)).isNull();
    assertThat(TablePosition.truncatedAt(table)).isNull();
    assertThat(TablePosition.kafkaOffsets(table)).isEmpty();

    SourceSequence source = SourceSequence.postgresLsn(500);
    SourceSequence truncate = SourceSequence.postgresLsn(300);
    table
        .newAppend()
        .set(SnapshotSummaryKeys.SOURCE_SEQUENCE, source.encode())
        .set(SnapshotSummaryKeys.TRUNCATED_AT, truncate.encode())
        .set(SnapshotSummaryKeys.KAFKA_OFFSETS, "cdc.orders/0=41,cdc.orders/1=7")
        .commit();
    // A later append that records none leaves them as they were.
    table.newAppend().commit();
    assertThat(TablePosition.of(table)).isEqualTo(source);
    assertThat(TablePosition.truncatedAt(table)).isEqualTo(truncate);
    assertThat(TablePosition.kafkaOffsets(table))
        .isEqualTo(Map.of("cdc.orders/0", 41L, "cdc.orders/1", 7L));

    // An overwrite that records none (another engine's) voids them.
    table.newOverwrite().commit();
    assertThat(TablePosition.of(table)).isNull();
    assertThat(TablePosition.truncatedAt(table)).isNull();
    assertThat(TablePosition.kafkaOffsets(table)).isEmpty();
  }

  /** The topic ids are those of the snapshot whose offsets the job takes up from, not a later's. */
  @Test
  void readsTheTopicIdsOfTheSnapshotWhoseOffsetsItGives() {
    assertThat(TablePosition.kafkaTopicIds(table)).isEmpty();
    table
        .newAppend()
        .set(SnapshotSummaryKeys.KAFKA_OFFSETS, "cdc.orders/0=41")
        .set(SnapshotSummaryKeys.KAFKA_TOPIC_IDS, "cdc.orders=old-id")
        .commit();
    table.newAppend().set(SnapshotSummaryKeys.KAFKA_TOPIC_IDS, "cdc.orders=other-id").commit();
    assertThat(TablePosition.kafkaTopicIds(table)).isEqualTo(Map.of("cdc.orders", "old-id"));

    // Offsets recorded without ids (an earlier build) have none.
    table.newAppend().set(SnapshotSummaryKeys.KAFKA_OFFSETS, "cdc.orders/0=50").commit();
    assertThat(TablePosition.kafkaTopicIds(table)).isEmpty();
  }

  @Test
  void anOverwriteThatRecordsAPositionOfItsOwnLeavesTheOthersStanding() {
    SourceSequence source = SourceSequence.postgresLsn(500);
    SourceSequence truncate = SourceSequence.postgresLsn(300);
    table
        .newAppend()
        .set(SnapshotSummaryKeys.SOURCE_SEQUENCE, source.encode())
        .set(SnapshotSummaryKeys.TRUNCATED_AT, truncate.encode())
        .commit();
    // A Kafka job's row-level commit: an overwrite that records offsets but no sequence.
    table.newOverwrite().set(SnapshotSummaryKeys.KAFKA_OFFSETS, "cdc.orders/0=41").commit();
    // The committers carry the source position past it, so a job without state reads it too.
    assertThat(TablePosition.of(table)).isEqualTo(source);
    assertThat(TablePosition.kafkaOffsets(table)).isEqualTo(Map.of("cdc.orders/0", 41L));
    // A job that knew of the truncate would have repeated it.
    assertThat(TablePosition.truncatedAt(table)).isNull();

    // A row-level commit that records a sequence but no offsets leaves the offsets standing.
    SourceSequence later = SourceSequence.postgresLsn(900);
    table.newOverwrite().set(SnapshotSummaryKeys.SOURCE_SEQUENCE, later.encode()).commit();
    assertThat(TablePosition.of(table)).isEqualTo(later);
    assertThat(TablePosition.kafkaOffsets(table)).isEqualTo(Map.of("cdc.orders/0", 41L));

    // A delete that records none voids both.
    table
        .newDelete()
        .deleteFromRowFilter(org.apache.iceberg.expressions.Expressions.alwaysTrue())
        .commit();
    assertThat(TablePosition.of(table)).isNull();
    assertThat(TablePosition.kafkaOffsets(table)).isEmpty();
  }

  @Test
  void aPositionThatCannotBeReadIsNamedWithTheWayOut() {
    table.newAppend().set(SnapshotSummaryKeys.SOURCE_SEQUENCE, "lsn:x").commit();
    assertThatThrownBy(() -> TablePosition.of(table))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("db.t")
        .hasMessageContaining(SnapshotSummaryKeys.SOURCE_SEQUENCE + " = 'lsn:x'")
        .hasMessageContaining("--ignore-table-position");
    table.newAppend().set(SnapshotSummaryKeys.TRUNCATED_AT, "?").commit();
    assertThatThrownBy(() -> TablePosition.truncatedAt(table))
        .hasMessageContaining("a truncate position")
        .hasMessageContaining(SnapshotSummaryKeys.TRUNCATED_AT + " = '?'")
        .hasMessageContaining("dedup.ignore-table-position");
    table.newAppend().set(SnapshotSummaryKeys.KAFKA_OFFSETS, "t/x=1").commit();
    assertThatThrownBy(() -> TablePosition.kafkaOffsets(table))
        .hasMessageContaining("Kafka offsets")
        .hasMessageContaining("--ignore-table-position");
  }
}
