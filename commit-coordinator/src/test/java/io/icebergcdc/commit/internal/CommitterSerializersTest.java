package io.icebergcdc.commit.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.cdc.GoldenFiles;
import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.ChangeCommittableSerializer;
import io.icebergcdc.commit.ContentFileCodec;
import io.icebergcdc.commit.PositionDeletes;
import io.icebergcdc.commit.TestTables;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.junit.jupiter.api.Test;

class CommitterSerializersTest {

  private static final Map<Integer, PartitionSpec> SPECS = Map.of(0, PartitionSpec.unpartitioned());

  private static final ChangeCommittable COMMITTABLE =
      new ChangeCommittable(
          List.of(ContentFileCodec.encode(TestTables.dataFile("a"), SPECS)),
          List.of(ContentFileCodec.encode(TestTables.equalityDeleteFile("a"), SPECS)),
          List.of("/data/old.parquet"),
          new ChangeStats(1, 2, 3, 4, 5, 6, SourceSequence.postgresLsn(1, 2)));

  @Test
  void committablesRoundTripAndReadVersion1() throws IOException {
    ChangeCommittableSerializer serializer = new ChangeCommittableSerializer();
    byte[] bytes = serializer.serialize(COMMITTABLE);
    assertThat(serializer.deserialize(serializer.getVersion(), bytes)).isEqualTo(COMMITTABLE);

    byte[] v1 = GoldenFiles.bytes("serializer/change-committable-v1.bin", bytes);
    ChangeCommittable read = serializer.deserialize(ChangeCommittableSerializer.VERSION_1, v1);
    assertThat(read).isEqualTo(COMMITTABLE);
    DataFile file = ContentFileCodec.decodeDataFile(read.dataFiles().get(0), SPECS);
    assertThat(file.location()).isEqualTo("/data/a.parquet");
    assertThat(file.recordCount()).isEqualTo(10);

    assertThatThrownBy(() -> serializer.deserialize(99, bytes))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("version 99");
  }

  @Test
  void committablesWithPositionDeletesRoundTripAndReadVersion2() throws IOException {
    ChangeCommittableSerializer serializer = new ChangeCommittableSerializer();
    ChangeCommittable withPositions =
        new ChangeCommittable(
            COMMITTABLE.dataFiles(),
            List.of(),
            List.of(),
            COMMITTABLE.stats(),
            PositionDeletes.of(
                Map.of("/data/a.parquet", new long[] {9, 3, 3}, "/data/b.parquet", new long[] {0})),
            4);
    byte[] bytes = serializer.serialize(withPositions);
    ChangeCommittable read = serializer.deserialize(serializer.getVersion(), bytes);
    assertThat(read).isEqualTo(withPositions);
    assertThat(read.positionDeletes().positions("/data/a.parquet")).containsExactly(3, 9);

    byte[] v2 = GoldenFiles.bytes("serializer/change-committable-v2.bin", bytes);
    assertThat(serializer.deserialize(ChangeCommittableSerializer.VERSION_2, v2))
        .isEqualTo(withPositions);
  }

  @Test
  void committablesWithCompactedFilesRoundTripAndReadVersion4() throws IOException {
    ChangeCommittableSerializer serializer = new ChangeCommittableSerializer();
    ChangeCommittable compacted =
        new ChangeCommittable(
            COMMITTABLE.dataFiles(),
            List.of(),
            List.of(),
            COMMITTABLE.stats(),
            PositionDeletes.of(Map.of("/data/old.parquet", new long[] {0, 2})),
            0,
            List.of("/data/old.parquet"));
    byte[] bytes = serializer.serialize(compacted);
    assertThat(serializer.deserialize(serializer.getVersion(), bytes)).isEqualTo(compacted);

    byte[] v4 = GoldenFiles.bytes("serializer/change-committable-v4.bin", bytes);
    ChangeCommittable read = serializer.deserialize(ChangeCommittableSerializer.VERSION_4, v4);
    assertThat(read).isEqualTo(compacted);
    assertThat(read.compactedDataFiles()).containsExactly("/data/old.parquet");
    assertThat(read.hasFiles()).isTrue();
  }

  @Test
  void committablesWithCompactedRowsRoundTripAndReadVersion5() throws IOException {
    ChangeCommittableSerializer serializer = new ChangeCommittableSerializer();
    ChangeCommittable compacted =
        new ChangeCommittable(
            COMMITTABLE.dataFiles(),
            List.of(),
            List.of(),
            COMMITTABLE.stats(),
            PositionDeletes.of(Map.of("/data/old.parquet", new long[] {0, 1, 2})),
            0,
            List.of("/data/old.parquet"),
            PositionDeletes.of(Map.of("/data/old.parquet", new long[] {2, 0})));
    byte[] bytes = serializer.serialize(compacted);
    assertThat(serializer.deserialize(serializer.getVersion(), bytes)).isEqualTo(compacted);

    byte[] v5 = GoldenFiles.bytes("serializer/change-committable-v5.bin", bytes);
    ChangeCommittable read = serializer.deserialize(ChangeCommittableSerializer.VERSION_5, v5);
    assertThat(read).isEqualTo(compacted);
    assertThat(read.compactedRows().positions("/data/old.parquet")).containsExactly(0, 2);
    // Version 4 did not record which rows were compacted.
    byte[] v4 = GoldenFiles.bytes("serializer/change-committable-v4.bin", null);
    assertThat(serializer.deserialize(ChangeCommittableSerializer.VERSION_4, v4).compactedRows())
        .isEqualTo(PositionDeletes.NONE);
  }

  @Test
  void committablesOfATableOfSeveralRoundTripAndReadVersion6() throws IOException {
    ChangeCommittableSerializer serializer = new ChangeCommittableSerializer();
    ChangeCommittable tagged = COMMITTABLE.forTable("db.orders");
    byte[] bytes = serializer.serialize(tagged);
    assertThat(serializer.deserialize(serializer.getVersion(), bytes)).isEqualTo(tagged);
    assertThat(serializer.deserialize(serializer.getVersion(), serializer.serialize(COMMITTABLE)))
        .isEqualTo(COMMITTABLE);

    byte[] v6 = GoldenFiles.bytes("serializer/change-committable-v6.bin", bytes);
    ChangeCommittable read = serializer.deserialize(ChangeCommittableSerializer.VERSION_6, v6);
    assertThat(read).isEqualTo(tagged);
    assertThat(read.table()).isEqualTo("db.orders");
    assertThat(read).isNotEqualTo(COMMITTABLE);
    assertThat(read.forTable(null)).isEqualTo(COMMITTABLE);
  }

  @Test
  void committablesWithATruncatePositionRoundTripAndReadVersion7() throws IOException {
    ChangeCommittableSerializer serializer = new ChangeCommittableSerializer();
    io.icebergcdc.cdc.SourceSequence truncatedAt =
        io.icebergcdc.cdc.SourceSequence.postgresLsn(0x1500, 0x1520);
    ChangeStats counts = COMMITTABLE.stats();
    ChangeCommittable truncated =
        ChangeCommittable.ofStats(
                new ChangeStats(
                    counts.inserted(),
                    counts.updated(),
                    counts.deleted(),
                    counts.staleDropped(),
                    counts.duplicatesDropped(),
                    counts.deadLettered(),
                    counts.lastSourcePosition(),
                    Map.of("t/0", 4L),
                    truncatedAt))
            .forTable("db.orders");
    byte[] bytes = serializer.serialize(truncated);
    assertThat(serializer.deserialize(serializer.getVersion(), bytes)).isEqualTo(truncated);

    byte[] v7 = GoldenFiles.bytes("serializer/change-committable-v7.bin", bytes);
    ChangeCommittable read = serializer.deserialize(ChangeCommittableSerializer.VERSION_7, v7);
    assertThat(read).isEqualTo(truncated);
    assertThat(read.stats().truncatedAt()).isEqualTo(truncatedAt);
    assertThat(read.stats().sourceOffsets()).containsEntry("t/0", 4L);
    assertThat(read.table()).isEqualTo("db.orders");
    // Version 6 had no truncate position.
    byte[] v6 = GoldenFiles.bytes("serializer/change-committable-v6.bin", null);
    assertThat(
            serializer.deserialize(ChangeCommittableSerializer.VERSION_6, v6).stats().truncatedAt())
        .isNull();
  }

  @Test
  void contributionsToTwoTablesDoNotAddUp() {
    assertThat(COMMITTABLE.forTable("db.a").plus(COMMITTABLE).table()).isEqualTo("db.a");
    assertThat(COMMITTABLE.plus(COMMITTABLE.forTable("db.a")).table()).isEqualTo("db.a");
    assertThatThrownBy(() -> COMMITTABLE.forTable("db.a").plus(COMMITTABLE.forTable("db.b")))
        .hasMessageContaining("db.a")
        .hasMessageContaining("db.b");
  }

  @Test
  void committerStateOfATableOfSeveralRoundTripsAndReadsVersion3() throws IOException {
    CommitterStateSerializer serializer = new CommitterStateSerializer();
    TreeMap<Long, ChangeCommittable> pending = new TreeMap<>();
    pending.put(3L, COMMITTABLE);
    CommitterState state =
        new CommitterState(
            "0123456789abcdef0123456789abcdef",
            "6f1c2f0e-2b7d-4a59-9a43-4f0c5c1e8a11",
            pending,
            "db.orders",
            null,
            List.of());
    byte[] bytes = serializer.serialize(state);
    assertThat(serializer.deserialize(serializer.getVersion(), bytes)).isEqualTo(state);

    byte[] v3 = GoldenFiles.bytes("serializer/committer-state-v3.bin", bytes);
    CommitterState read = serializer.deserialize(CommitterStateSerializer.VERSION_3, v3);
    assertThat(read).isEqualTo(state);
    assertThat(read.table()).isEqualTo("db.orders");
  }

  @Test
  void committerStateKeepsTheSnapshotItHadSeenAndReadsVersion4() throws IOException {
    CommitterStateSerializer serializer = new CommitterStateSerializer();
    TreeMap<Long, ChangeCommittable> pending = new TreeMap<>();
    pending.put(3L, COMMITTABLE);
    String job = "0123456789abcdef0123456789abcdef";
    String uuid = "6f1c2f0e-2b7d-4a59-9a43-4f0c5c1e8a11";
    CommitterState state =
        new CommitterState(
            job,
            uuid,
            pending,
            null,
            8_645_392_761_203L,
            List.of("fedcba9876543210fedcba9876543210"));
    byte[] bytes = serializer.serialize(state);
    assertThat(serializer.deserialize(serializer.getVersion(), bytes).seenSnapshotId())
        .isEqualTo(8_645_392_761_203L);
    CommitterState none =
        new CommitterState(job, uuid, pending, "db.orders", CommitterState.NO_SNAPSHOT, List.of());
    assertThat(serializer.deserialize(serializer.getVersion(), serializer.serialize(none)))
        .isEqualTo(none);

    byte[] v4 = GoldenFiles.bytes("serializer/committer-state-v4.bin", bytes);
    assertThat(serializer.deserialize(CommitterStateSerializer.VERSION_4, v4)).isEqualTo(state);
    assertThat(serializer.deserialize(CommitterStateSerializer.VERSION_4, v4).lineage())
        .containsExactly("fedcba9876543210fedcba9876543210");
    assertThat(state)
        .isNotEqualTo(new CommitterState(job, uuid, pending, null, null, state.lineage()));
    // The latest of a long lineage are kept.
    List<String> long_ = new java.util.ArrayList<>();
    for (int i = 0; i < 15; i++) {
      long_.add("job-" + i);
    }
    assertThat(new CommitterState(job, uuid, pending, null, null, long_).lineage())
        .hasSize(CommitterState.LINEAGE_KEPT)
        .endsWith("job-14")
        .doesNotContain("job-4");
  }

  @Test
  void committerStateRoundTripsAndReadsVersions1And2() throws IOException {
    CommitterStateSerializer serializer = new CommitterStateSerializer();
    TreeMap<Long, ChangeCommittable> pending = new TreeMap<>();
    pending.put(3L, COMMITTABLE);
    pending.put(4L, ChangeCommittable.EMPTY);
    String job = "0123456789abcdef0123456789abcdef";
    CommitterState state = new CommitterState(job, "6f1c2f0e-2b7d-4a59-9a43-4f0c5c1e8a11", pending);
    byte[] bytes = serializer.serialize(state);
    assertThat(serializer.deserialize(serializer.getVersion(), bytes)).isEqualTo(state);
    CommitterState withoutTable = new CommitterState(job, null, pending);
    assertThat(serializer.deserialize(serializer.getVersion(), serializer.serialize(withoutTable)))
        .isEqualTo(withoutTable);

    byte[] v2 = GoldenFiles.bytes("serializer/committer-state-v2.bin", bytes);
    assertThat(serializer.deserialize(CommitterStateSerializer.VERSION_2, v2)).isEqualTo(state);
    // Version 1 did not name the table.
    byte[] v1 = GoldenFiles.bytes("serializer/committer-state-v1.bin", null);
    assertThat(serializer.deserialize(CommitterStateSerializer.VERSION_1, v1))
        .isEqualTo(withoutTable);
    assertThatThrownBy(() -> serializer.deserialize(7, bytes)).isInstanceOf(IOException.class);
  }
}
