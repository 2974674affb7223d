package io.icebergcdc.commit.internal;

import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.ChangeCommittableSerializer;
import io.icebergcdc.commit.ContentFileCodec;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.commit.TestTables;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.core.io.SimpleVersionedSerializerTypeSerializerProxy;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * Tables of a Hadoop warehouse for the tests of a committer of several tables, the harness that
 * runs such a committer, and what its tests hand it and read back.
 */
final class CommitterTables {

  private CommitterTables() {}

  /** Creates the tables, format version 2, unpartitioned, with {@link TestTables#SCHEMA}. */
  static void create(Path warehouse, List<TableIdentifier> tables) {
    HadoopCatalog catalog = (HadoopCatalog) TestTables.catalog(warehouse).loadCatalog();
    for (TableIdentifier id : tables) {
      catalog.createTable(
          id,
          TestTables.SCHEMA,
          PartitionSpec.unpartitioned(),
          Map.of(TableProperties.FORMAT_VERSION, "2"));
    }
  }

  /** The table as the warehouse has it now. */
  static Table table(Path warehouse, TableIdentifier id) {
    return TestTables.catalog(warehouse).loadCatalog().loadTable(id);
  }

  /** A committer with checkpoints, opened on {@code restoreFrom} or on empty state if null. */
  static OneInputStreamOperatorTestHarness<ChangeCommittable, Void> open(
      IcebergCommitterOperator operator, OperatorID id, OperatorSubtaskState restoreFrom)
      throws Exception {
    var harness =
        new OneInputStreamOperatorTestHarness<>(
            operator,
            1,
            1,
            0,
            new SimpleVersionedSerializerTypeSerializerProxy<>(ChangeCommittableSerializer::new),
            id);
    harness.getStreamConfig().setCheckpointingEnabled(true);
    if (restoreFrom != null) {
      harness.initializeState(restoreFrom);
    } else {
      harness.initializeEmptyState();
    }
    harness.open();
    return harness;
  }

  /** The checkpoint ids of the table's snapshots, oldest first (null for another writer's). */
  static List<String> committedCheckpoints(Table table) {
    List<String> result = new ArrayList<>();
    if (table.currentSnapshot() != null) {
      SnapshotUtil.currentAncestors(table)
          .forEach(s -> result.add(0, s.summary().get(SnapshotSummaryKeys.CHECKPOINT_ID)));
    }
    return result;
  }

  /** A writer's contribution to {@code table}: one data file of {@code inserted} rows, tagged. */
  static StreamRecord<ChangeCommittable> file(
      Table table, TableIdentifier id, String name, long inserted) {
    return new StreamRecord<>(
        new ChangeCommittable(
                List.of(ContentFileCodec.encode(TestTables.dataFile(name), table.specs())),
                List.of(),
                List.of(),
                new ChangeStats(inserted, 0, 0, 0, 0, 0, null))
            .forTable(id.toString()));
  }
}
