package io.icebergcdc.cdc.typeutils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.cdc.ColumnMask;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.cdc.GoldenFiles;
import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.cdc.TestChanges;
import java.io.IOException;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.junit.jupiter.api.Test;

class SerializersTest {

  private static final ChangeStats STATS =
      new ChangeStats(1, 2, 3, 4, 5, 6, SourceSequence.mysqlBinlog("mysql-bin.000003", 4015, 2));

  @Test
  void changeStatsRoundTripsAndReadsVersion1() throws IOException {
    ChangeStatsSerializer serializer = new ChangeStatsSerializer();
    byte[] bytes = serializer.serialize(STATS);
    assertThat(serializer.deserialize(serializer.getVersion(), bytes)).isEqualTo(STATS);
    assertThat(
            serializer.deserialize(
                ChangeStatsSerializer.VERSION_1, serializer.serialize(ChangeStats.EMPTY)))
        .isEqualTo(ChangeStats.EMPTY);

    byte[] v1 = GoldenFiles.bytes("serializer/change-stats-v1.bin", bytes);
    assertThat(serializer.deserialize(ChangeStatsSerializer.VERSION_1, v1)).isEqualTo(STATS);
    ChangeStats withOffsets =
        new ChangeStats(
            1, 2, 3, 4, 5, 6, null, java.util.Map.of("shop.items/0", 41L, "shop.items/2", 7L));
    assertThat(serializer.deserialize(serializer.getVersion(), serializer.serialize(withOffsets)))
        .isEqualTo(withOffsets);
    assertThat(withOffsets.plus(STATS).plus(withOffsets).sourceOffsets())
        .containsExactly(
            java.util.Map.entry("shop.items/0", 41L), java.util.Map.entry("shop.items/2", 7L));
    assertThatThrownBy(() -> serializer.deserialize(99, bytes))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("version 99");
  }

  @Test
  void changeStatsWithATruncatePositionRoundTripAndReadVersion3() throws IOException {
    ChangeStatsSerializer serializer = new ChangeStatsSerializer();
    SourceSequence truncatedAt = SourceSequence.postgresLsn(0x2000, 0x2040);
    ChangeStats truncated =
        new ChangeStats(
            0, 0, 5, 1, 0, 0, truncatedAt, java.util.Map.of("shop.items/1", 9L), truncatedAt);
    byte[] bytes = serializer.serialize(truncated);
    assertThat(serializer.deserialize(serializer.getVersion(), bytes)).isEqualTo(truncated);
    byte[] v3 = GoldenFiles.bytes("serializer/change-stats-v3.bin", bytes);
    ChangeStats read = serializer.deserialize(ChangeStatsSerializer.VERSION_3, v3);
    assertThat(read).isEqualTo(truncated);
    assertThat(read.truncatedAt()).isEqualTo(truncatedAt);
    assertThat(read)
        .isNotEqualTo(new ChangeStats(0, 0, 5, 1, 0, 0, truncatedAt, read.sourceOffsets()));
  }

  @Test
  void aTruncatePositionAloneIsNoNewsAndTheLaterOneIsKept() {
    SourceSequence earlier = SourceSequence.postgresLsn(0x100, 0x120);
    SourceSequence later = SourceSequence.postgresLsn(0x300, 0x320);
    ChangeStats onlyTruncate = new ChangeStats(0, 0, 0, 0, 0, 0, null, java.util.Map.of(), earlier);
    assertThat(onlyTruncate.isEmpty()).isTrue();
    assertThat(onlyTruncate).isNotEqualTo(ChangeStats.EMPTY);
    ChangeStats other = new ChangeStats(1, 0, 0, 0, 0, 0, null, java.util.Map.of(), later);
    assertThat(onlyTruncate.plus(other).truncatedAt()).isEqualTo(later);
    assertThat(other.plus(onlyTruncate).truncatedAt()).isEqualTo(later);
    assertThat(STATS.plus(onlyTruncate).truncatedAt()).isEqualTo(earlier);
    assertThat(onlyTruncate.plus(STATS).truncatedAt()).isEqualTo(earlier);
    // Positions that cannot be ordered (binlogs of other names): the later statistics' own.
    SourceSequence otherServer = SourceSequence.mysqlBinlog("b-bin.000001", 50, 0);
    ChangeStats older =
        new ChangeStats(
            0,
            0,
            0,
            0,
            0,
            0,
            null,
            java.util.Map.of(),
            SourceSequence.mysqlBinlog("a-bin.000005", 100, 0));
    ChangeStats newer = new ChangeStats(0, 0, 0, 0, 0, 0, null, java.util.Map.of(), otherServer);
    assertThat(older.plus(newer).truncatedAt()).isEqualTo(otherServer);
  }

  @Test
  void deadLetterRoundTripsAndReadsVersions1And2() throws IOException {
    DeadLetterSerializer serializer = new DeadLetterSerializer();
    DeadLetter letter = new DeadLetter("db.t", "file.jsonl", "no op", "x".repeat(70_000));
    byte[] bytes = serializer.serialize(letter);
    assertThat(serializer.deserialize(serializer.getVersion(), bytes)).isEqualTo(letter);
    DeadLetter named = letter.writtenAs("lake.t");
    DeadLetter read = serializer.deserialize(serializer.getVersion(), serializer.serialize(named));
    assertThat(read).isEqualTo(named).isNotEqualTo(letter);
    assertThat(read.writtenAs()).isEqualTo("lake.t");

    DeadLetter small =
        new DeadLetter("db.t", "topic-0@12", "unknown operation 'x'", "{\"op\":\"x\"}");
    byte[] v1 = GoldenFiles.bytes("serializer/dead-letter-v1.bin", serializer.serialize(small));
    assertThat(serializer.deserialize(DeadLetterSerializer.VERSION_1, v1)).isEqualTo(small);
    DeadLetter smallNamed = small.writtenAs("lake.t");
    byte[] v2 =
        GoldenFiles.bytes("serializer/dead-letter-v2.bin", serializer.serialize(smallNamed));
    assertThat(serializer.deserialize(DeadLetterSerializer.VERSION_2, v2)).isEqualTo(smallNamed);
    assertThatThrownBy(() -> serializer.deserialize(3, bytes)).isInstanceOf(IOException.class);
  }

  @Test
  void changeEventsRoundTripThroughTheirTypeSerializer() throws IOException {
    TypeSerializer<ChangeEvent> serializer =
        ChangeEventTypeInfo.of(TestChanges.CHANGE_SCHEMA)
            .createSerializer(new SerializerConfigImpl());
    for (ChangeEvent event :
        new ChangeEvent[] {
          TestChanges.insert(1, "a", 10),
          TestChanges.update(2, null, 11),
          TestChanges.delete(3, 12),
          TestChanges.updateWithoutName(4, 13),
          TestChanges.CHANGE_SCHEMA.fillMissing(
              TestChanges.updateWithoutName(5, 14),
              TestChanges.row(5, "toasted"),
              ColumnMask.EMPTY),
          TestChanges.updateWithoutName(6, 15).withOrigin("topic/1", 77)
        }) {
      DataOutputSerializer out = new DataOutputSerializer(64);
      serializer.serialize(event, out);
      ChangeEvent read = serializer.deserialize(new DataInputDeserializer(out.getCopyOfBuffer()));
      assertThat(read.operation()).isEqualTo(event.operation());
      assertThat(read.key()).isEqualTo(event.key());
      assertThat(read.sequence()).isEqualTo(event.sequence());
      assertThat(read.keyRow().getLong(0)).isEqualTo(event.keyRow().getLong(0));
      assertThat(TestChanges.CHANGE_SCHEMA.fingerprint(read))
          .isEqualTo(TestChanges.CHANGE_SCHEMA.fingerprint(event));
      if (event.after() != null) {
        assertThat(String.valueOf(read.after().isNullAt(1) ? null : read.after().getString(1)))
            .isEqualTo(
                String.valueOf(event.after().isNullAt(1) ? null : event.after().getString(1)));
      }
      assertThat(read.unavailableColumns()).isEqualTo(event.unavailableColumns());
      assertThat(read.missingColumns()).isEqualTo(event.missingColumns());
      assertThat(read.originPartition()).isEqualTo(event.originPartition());
      assertThat(read.originOffset()).isEqualTo(event.originOffset());
      ChangeEvent copy = serializer.copy(event);
      assertThat(copy.missingColumns()).isEqualTo(event.missingColumns());
      assertThat(copy.unavailableColumns()).isEqualTo(event.unavailableColumns());
      assertThat(copy.originOffset()).isEqualTo(event.originOffset());
    }
    assertThat(serializer.snapshotConfiguration().restoreSerializer()).isEqualTo(serializer);
  }

  @Test
  void changeEventsOfAnEvolvedSchemaRoundTripWithTheirValuesTypes() throws IOException {
    // A schema the serializer was not built with: an added column of each kind the sources give,
    // behind the job's two; the rows are read back without it.
    TypeSerializer<ChangeEvent> serializer =
        ChangeEventTypeInfo.of(TestChanges.CHANGE_SCHEMA)
            .createSerializer(new SerializerConfigImpl());
    GenericRowData after =
        GenericRowData.of(
            7L,
            null,
            true,
            42,
            5_000_000_000L,
            1.5f,
            2.25d,
            StringData.fromString("gold ö"),
            DecimalData.fromBigDecimal(new java.math.BigDecimal("12345678901234567890.12"), 38, 2),
            DecimalData.fromBigDecimal(new java.math.BigDecimal("3.14"), 5, 2),
            TimestampData.fromEpochMillis(1_700_000_000_123L, 456),
            new byte[] {1, 2, 3});
    ChangeEvent base = TestChanges.updateWithoutName(7, 20).withOrigin("topic/0", 9);
    ChangeEvent event =
        base.inSchema(3, null, after, base.unavailableColumns(), base.missingColumns());

    DataOutputSerializer out = new DataOutputSerializer(64);
    serializer.serialize(event, out);
    serializer.serialize(TestChanges.insert(8, "job's own", 21), out);
    DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
    ChangeEvent read = serializer.deserialize(in);
    assertThat(read.rowSchemaId()).isEqualTo(3);
    assertThat(read.after()).isEqualTo(after);
    assertThat(read).isEqualTo(event);
    assertThat(read.missingColumns())
        .isEqualTo(event.missingColumns())
        .isNotEqualTo(ColumnMask.EMPTY);
    assertThat(read.originOffset()).isEqualTo(9);
    ChangeEvent own = serializer.deserialize(in);
    assertThat(own.rowSchemaId()).isEqualTo(ChangeEvent.JOB_SCHEMA);
    assertThat(own.after().getString(1).toString()).isEqualTo("job's own");

    ChangeEvent copy = serializer.copy(event);
    assertThat(copy).isEqualTo(event);
    assertThat(((GenericRowData) copy.after()).getField(11))
        .isNotSameAs(after.getField(11))
        .isEqualTo(after.getField(11));

    GenericRowData unknown = GenericRowData.of(1L, new java.util.ArrayList<>());
    assertThatThrownBy(
            () ->
                serializer.serialize(
                    event.inSchema(4, null, unknown, ColumnMask.EMPTY, ColumnMask.EMPTY),
                    new DataOutputSerializer(16)))
        .hasMessageContaining("java.util.ArrayList at position 1");
  }

  @Test
  void changeEventsKeepTheirTableWhateverTheTablesBeforeThem() throws IOException {
    TypeSerializer<ChangeEvent> serializer =
        ChangeEventTypeInfo.of(TestChanges.CHANGE_SCHEMA)
            .createSerializer(new SerializerConfigImpl());
    String[] tables = {"db.orders", "db.orders", "db.orderz", "db.öre", "db.orders", "", "db.öre"};
    DataOutputSerializer out = new DataOutputSerializer(64);
    for (int i = 0; i < tables.length; i++) {
      ChangeEvent event = TestChanges.insert(i, "v", i);
      serializer.serialize(
          new ChangeEvent(
              tables[i],
              event.operation(),
              event.key(),
              event.before(),
              event.after(),
              event.sequence(),
              event.sourceTimestampMillis()),
          out);
    }
    DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
    TypeSerializer<ChangeEvent> reader = serializer.duplicate();
    for (int i = 0; i < tables.length; i++) {
      ChangeEvent read = reader.deserialize(in);
      assertThat(read.table()).isEqualTo(tables[i]);
      assertThat(read.keyRow().getLong(0)).isEqualTo(i);
    }
  }

  @Test
  void sequencesOfAnyLengthRoundTripAndCompare() throws IOException {
    SourceSequence[] sequences = {
      SourceSequence.unordered(),
      SourceSequence.postgresLsn(5),
      SourceSequence.postgresLsn(5, 7),
      SourceSequence.mysqlBinlog("mysql-bin.000003", 120, 2),
      SourceSequence.of(SourceSequence.Kind.COLUMN, null, new long[] {1, 2, 3, 4, 5})
    };
    for (SourceSequence sequence : sequences) {
      DataOutputSerializer out = new DataOutputSerializer(64);
      SourceSequenceCodec.write(sequence, out);
      SourceSequence read =
          SourceSequenceCodec.read(new DataInputDeserializer(out.getCopyOfBuffer()));
      assertThat(read).isEqualTo(sequence).hasToString(sequence.toString());
      assertThat(read.components()).isEqualTo(sequence.components());
      assertThat(read.prefix()).isEqualTo(sequence.prefix());
    }
    assertThat(SourceSequence.mysqlBinlog("mysql-bin.000003", 120, 2))
        .isGreaterThan(SourceSequence.mysqlBinlog("mysql-bin.000003", 120, 1))
        .isLessThan(SourceSequence.mysqlBinlog("mysql-bin.000004", 4, 0));
    assertThat(SourceSequence.of(SourceSequence.Kind.COLUMN, null, new long[] {1, 2, 3, 4, 6}))
        .isGreaterThan(sequences[4]);
    assertThat(SourceSequence.postgresLsn(5, 7).component(1)).isEqualTo(7);
  }

  @Test
  void rowKeysRoundTrip() throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(16);
    RowKeySerializer.INSTANCE.serialize(TestChanges.insert(7, "x", 1).key(), out);
    assertThat(
            RowKeySerializer.INSTANCE.deserialize(new DataInputDeserializer(out.getCopyOfBuffer())))
        .isEqualTo(TestChanges.delete(7, 2).key());
  }

  /**
   * A key copied from bytes into a growing buffer smaller than the key: Flink's {@code
   * DataOutputSerializer} grows for what is written to it, but not for what is copied from another
   * view, which Flink's spilling and sorting do.
   */
  @Test
  void rowKeysAndTableKeysCopyIntoABufferThatMustGrow() throws IOException {
    byte[] keyBytes = new byte[500];
    java.util.Arrays.fill(keyBytes, (byte) 'x');
    io.icebergcdc.cdc.RowKey key = new io.icebergcdc.cdc.RowKey(keyBytes);
    DataOutputSerializer out = new DataOutputSerializer(16);
    RowKeySerializer.INSTANCE.serialize(key, out);
    byte[] bytes = out.getCopyOfBuffer();
    DataOutputSerializer copied = new DataOutputSerializer(4);
    RowKeySerializer.INSTANCE.copy(new DataInputDeserializer(bytes), copied);
    assertThat(copied.getCopyOfBuffer()).isEqualTo(bytes);

    TypeSerializer<io.icebergcdc.cdc.TableKey> tableKeys =
        TableKeyTypeInfo.INSTANCE.createSerializer(new SerializerConfigImpl());
    DataOutputSerializer tableOut = new DataOutputSerializer(16);
    tableKeys.serialize(new io.icebergcdc.cdc.TableKey("db.t", key), tableOut);
    byte[] tableBytes = tableOut.getCopyOfBuffer();
    DataOutputSerializer tableCopied = new DataOutputSerializer(4);
    tableKeys.copy(new DataInputDeserializer(tableBytes), tableCopied);
    assertThat(tableCopied.getCopyOfBuffer()).isEqualTo(tableBytes);
  }

  @Test
  void changeEventsOfSeveralTablesRoundTripEachWithItsSchema() throws IOException {
    io.icebergcdc.cdc.ChangeSchema counts =
        new io.icebergcdc.cdc.ChangeSchema(
            new org.apache.iceberg.Schema(
                java.util.List.of(
                    org.apache.iceberg.types.Types.NestedField.required(
                        1, "id", org.apache.iceberg.types.Types.LongType.get()),
                    org.apache.iceberg.types.Types.NestedField.optional(
                        2, "count", org.apache.iceberg.types.Types.IntegerType.get()),
                    org.apache.iceberg.types.Types.NestedField.optional(
                        3, "weight", org.apache.iceberg.types.Types.DoubleType.get())),
                java.util.Set.of(1)));
    TypeSerializer<ChangeEvent> serializer =
        ChangeEventTypeInfo.ofTables(
                java.util.Map.of("db.items", TestChanges.CHANGE_SCHEMA, "db.counts", counts))
            .createSerializer(new SerializerConfigImpl());
    org.apache.flink.table.data.GenericRowData countRow =
        org.apache.flink.table.data.GenericRowData.of(7L, 3, 1.5);
    ChangeEvent count =
        new ChangeEvent(
            "db.counts",
            io.icebergcdc.cdc.Operation.INSERT,
            counts.keyOf(countRow),
            null,
            countRow,
            SourceSequence.postgresLsn(2),
            2);
    ChangeEvent[] events = {TestChanges.insert(1, "a", 1), count, TestChanges.update(1, "b", 3)};
    DataOutputSerializer out = new DataOutputSerializer(64);
    for (ChangeEvent event : events) {
      serializer.serialize(event, out);
    }
    DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
    TypeSerializer<ChangeEvent> reader = serializer.duplicate();
    for (ChangeEvent event : events) {
      ChangeEvent read = reader.deserialize(in);
      assertThat(read.table()).isEqualTo(event.table());
      assertThat(read.after().getArity()).isEqualTo(event.after().getArity());
      assertThat(read.key()).isEqualTo(event.key());
    }
    ChangeEvent read = serializer.copy(count);
    assertThat(read.after().getInt(1)).isEqualTo(3);
    assertThat(read.after().getDouble(2)).isEqualTo(1.5);
    assertThat(serializer.snapshotConfiguration().restoreSerializer()).isEqualTo(serializer);
    // The snapshot written and read back: the same tables and schemas, compatible as is.
    DataOutputSerializer snapshotOut = new DataOutputSerializer(256);
    org.apache.flink.api.common.typeutils.TypeSerializerSnapshot.writeVersionedSnapshot(
        snapshotOut, serializer.snapshotConfiguration());
    org.apache.flink.api.common.typeutils.TypeSerializerSnapshot<ChangeEvent> readBack =
        org.apache.flink.api.common.typeutils.TypeSerializerSnapshot.readVersionedSnapshot(
            new DataInputDeserializer(snapshotOut.getCopyOfBuffer()), getClass().getClassLoader());
    assertThat(readBack.restoreSerializer()).isEqualTo(serializer);
    assertThat(
            serializer
                .snapshotConfiguration()
                .resolveSchemaCompatibility(readBack)
                .isCompatibleAsIs())
        .isTrue();
    ChangeEvent other =
        new ChangeEvent(
            "db.other",
            count.operation(),
            count.key(),
            null,
            countRow,
            count.sequence(),
            count.sourceTimestampMillis());
    assertThatThrownBy(() -> serializer.serialize(other, new DataOutputSerializer(64)))
        .hasMessageContaining("db.other");
    // A table that appeared while the job runs: its changes carry its schema's id, and their rows
    // travel described, beside the changes of the stream's own tables.
    ChangeEvent appeared = other.inSchema(0, null, countRow, ColumnMask.EMPTY, ColumnMask.EMPTY);
    DataOutputSerializer mixed = new DataOutputSerializer(64);
    serializer.serialize(appeared, mixed);
    serializer.serialize(count, mixed);
    DataInputDeserializer mixedIn = new DataInputDeserializer(mixed.getCopyOfBuffer());
    ChangeEvent readAppeared = reader.deserialize(mixedIn);
    assertThat(readAppeared).isEqualTo(appeared);
    assertThat(readAppeared.rowSchemaId()).isZero();
    assertThat(readAppeared.after()).isEqualTo(countRow);
    assertThat(reader.deserialize(mixedIn).after().getDouble(2)).isEqualTo(1.5);
    assertThat(serializer.copy(appeared).after()).isEqualTo(countRow);
  }

  @Test
  void tableKeysRoundTripAndTellTablesApart() throws IOException {
    io.icebergcdc.cdc.TableKey key =
        new io.icebergcdc.cdc.TableKey("db.a", TestChanges.insert(7, "x", 1).key());
    io.icebergcdc.cdc.TableKey other =
        new io.icebergcdc.cdc.TableKey("db.b", TestChanges.insert(7, "x", 1).key());
    TypeSerializer<io.icebergcdc.cdc.TableKey> serializer =
        TableKeyTypeInfo.INSTANCE.createSerializer(new SerializerConfigImpl());
    DataOutputSerializer out = new DataOutputSerializer(16);
    serializer.serialize(key, out);
    serializer.serialize(other, out);
    serializer.serialize(key, out);
    DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
    assertThat(serializer.deserialize(in)).isEqualTo(key).hasSameHashCodeAs(key);
    assertThat(serializer.deserialize(in)).isEqualTo(other).isNotEqualTo(key);
    assertThat(serializer.deserialize(in)).isEqualTo(key);
    assertThat(key.hashCode()).isNotEqualTo(other.hashCode());
    assertThat(serializer.snapshotConfiguration().restoreSerializer()).isEqualTo(serializer);
  }

  /**
   * A key of a table distributed by partition keeps its partition's hash through the serializer,
   * which decides its key group wherever it is read back (keyed state, timers); the keys of other
   * tables keep the bytes of earlier builds.
   */
  @Test
  void tableKeysHashedByTheirPartitionKeepTheirHash() throws IOException {
    io.icebergcdc.cdc.RowKey row = TestChanges.insert(7, "x", 1).key();
    io.icebergcdc.cdc.TableKey byPartition = io.icebergcdc.cdc.TableKey.hashedBy("db.p", row, 42);
    io.icebergcdc.cdc.TableKey byKey = new io.icebergcdc.cdc.TableKey("db.p", row);
    assertThat(byPartition.hashCode()).isEqualTo(31 * "db.p".hashCode() + 42);
    assertThat(byPartition).isNotEqualTo(byKey);
    assertThat(io.icebergcdc.cdc.TableKey.hashedBy("db.p", row, row.hashCode())).isEqualTo(byKey);
    TypeSerializer<io.icebergcdc.cdc.TableKey> serializer =
        TableKeyTypeInfo.INSTANCE.createSerializer(new SerializerConfigImpl());
    DataOutputSerializer out = new DataOutputSerializer(16);
    serializer.serialize(byPartition, out);
    serializer.serialize(byKey, out);
    byte[] bytes = out.getCopyOfBuffer();
    DataInputDeserializer in = new DataInputDeserializer(bytes);
    assertThat(serializer.deserialize(in)).isEqualTo(byPartition).hasSameHashCodeAs(byPartition);
    assertThat(serializer.deserialize(in)).isEqualTo(byKey).hasSameHashCodeAs(byKey);
    DataOutputSerializer copied = new DataOutputSerializer(256);
    DataInputDeserializer again = new DataInputDeserializer(bytes);
    serializer.copy(again, copied);
    serializer.copy(again, copied);
    assertThat(copied.getCopyOfBuffer()).isEqualTo(bytes);
    // A key hashed by its primary key is written as before the partition's hash.
    DataOutputSerializer plain = new DataOutputSerializer(16);
    plain.writeUTF("db.p");
    io.icebergcdc.cdc.typeutils.RowKeySerializer.INSTANCE.serialize(row, plain);
    assertThat(java.util.Arrays.copyOfRange(bytes, bytes.length - plain.length(), bytes.length))
        .isEqualTo(plain.getCopyOfBuffer());
  }
}
