package io.icebergcdc.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.util.List;
import java.util.Set;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericArrayData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class ChangeSchemaTest {

  private static ChangeSchema keyedBy(Type keyType) {
    return keyedById(
        Types.NestedField.required(1, "id", keyType),
        Types.NestedField.optional(2, "v", Types.StringType.get()));
  }

  @Test
  void aChangeHasTheSameFingerprintInTheRowsOfASchemaEvolvedWhileTheJobRuns() {
    ChangeSchema job =
        keyedById(
            Types.NestedField.required(1, "id", Types.LongType.get()),
            Types.NestedField.optional(2, "qty", Types.IntegerType.get()),
            Types.NestedField.optional(3, "ratio", Types.FloatType.get()));
    GenericRowData row = GenericRowData.of(1L, 5, 0.5f);
    // Widened to long and double, with a column added behind: the rows the writer converts into.
    GenericRowData evolved = GenericRowData.of(1L, 5L, 0.5d, null);
    ChangeEvent change =
        new ChangeEvent(
            "t", Operation.UPDATE, job.keyOf(row), null, row, SourceSequence.postgresLsn(7), 0);
    ChangeEvent inEvolved = change.inSchema(3, null, evolved, ColumnMask.EMPTY, ColumnMask.EMPTY);
    assertThat(job.fingerprint(inEvolved)).isEqualTo(job.fingerprint(change));
    GenericRowData other = GenericRowData.of(1L, 6L, 0.5d, null);
    assertThat(job.fingerprint(change.inSchema(3, null, other, ColumnMask.EMPTY, ColumnMask.EMPTY)))
        .isNotEqualTo(job.fingerprint(change));
  }

  /**
   * A job built again after its table took a column and widened others (a restore into a new build)
   * takes its fingerprints in the later schema, while the state holds those of the earlier build:
   * the same change must hash the same in both, applied before the schema changed or after.
   */
  @Test
  void aChangeHasTheSameFingerprintInABuildOfTheTablesLaterSchema() {
    ChangeSchema earlier =
        keyedById(
            Types.NestedField.required(1, "id", Types.LongType.get()),
            Types.NestedField.optional(2, "qty", Types.IntegerType.get()),
            Types.NestedField.optional(3, "day", Types.DateType.get()),
            Types.NestedField.optional(4, "ratio", Types.FloatType.get()));
    ChangeSchema later =
        keyedById(
            Types.NestedField.required(1, "id", Types.LongType.get()),
            Types.NestedField.optional(2, "qty", Types.LongType.get()),
            Types.NestedField.optional(3, "day", Types.DateType.get()),
            Types.NestedField.optional(4, "ratio", Types.DoubleType.get()),
            Types.NestedField.optional(5, "note", Types.StringType.get()));
    // Applied before the change: the later build reads it with the new column null.
    ChangeEvent before = update(earlier, GenericRowData.of(1L, 5, 19_000, 0.5f));
    assertThat(later.fingerprint(update(later, GenericRowData.of(1L, 5L, 19_000, 0.5d, null))))
        .isEqualTo(earlier.fingerprint(before));
    // Applied after it by the earlier build, which took it in the later schema's row.
    GenericRowData afterRow = GenericRowData.of(1L, 6L, 19_001, 0.25d, StringData.fromString("n"));
    ChangeEvent after =
        update(later, afterRow).inSchema(5, null, afterRow, ColumnMask.EMPTY, ColumnMask.EMPTY);
    assertThat(later.fingerprint(update(later, afterRow))).isEqualTo(earlier.fingerprint(after));
    // Still a hash of the whole row: another value of the new column, a null for a value, a value
    // in another column, or a value the source did not send are other changes.
    GenericRowData otherNote = GenericRowData.of(1L, 6L, 19_001, 0.25d, StringData.fromString("m"));
    assertThat(later.fingerprint(update(later, otherNote)))
        .isNotEqualTo(earlier.fingerprint(after));
    assertThat(later.fingerprint(update(later, GenericRowData.of(1L, 6L, 19_001, 0.25d, null))))
        .isNotEqualTo(earlier.fingerprint(after));
    assertThat(earlier.fingerprint(update(earlier, GenericRowData.of(1L, null, 5, null))))
        .isNotEqualTo(earlier.fingerprint(update(earlier, GenericRowData.of(1L, 5, null, null))));
    ChangeEvent notSent =
        update(later, GenericRowData.of(1L, 6L, 19_001, 0.25d, null))
            .withUnavailableColumns(ColumnMask.EMPTY.with(4));
    assertThat(later.fingerprint(notSent))
        .isNotEqualTo(
            later.fingerprint(update(later, GenericRowData.of(1L, 6L, 19_001, 0.25d, null))));
  }

  /** A key's last change as the state of a build before the stable fingerprint holds it. */
  @Test
  void aFingerprintOfAnEarlierBuildStillTellsTheSameChange() {
    ChangeEvent change = update(ALL_TYPES, allTypes(false));
    long earlierBuilds = ALL_TYPES.fingerprintOfEarlierBuilds(change);
    assertThat(earlierBuilds).isNotEqualTo(ALL_TYPES.fingerprint(change));
    assertThat(ALL_TYPES.isFingerprintOf(earlierBuilds, change)).isTrue();
    assertThat(ALL_TYPES.isFingerprintOf(ALL_TYPES.fingerprint(change), change)).isTrue();
    ChangeEvent other = update(ALL_TYPES, allTypes(true));
    assertThat(ALL_TYPES.isFingerprintOf(earlierBuilds, other)).isFalse();
  }

  /**
   * A state of a build before the stable fingerprint, restored into a build of the table's later
   * schema (a column added, an int widened): its fingerprints hashed the earlier schema's columns,
   * which the later schema's first columns are.
   */
  @Test
  void anEarlierBuildsFingerprintIsRecognisedInABuildOfTheTablesLaterSchema() {
    ChangeSchema earlier =
        keyedById(
            Types.NestedField.required(1, "id", Types.LongType.get()),
            Types.NestedField.optional(2, "qty", Types.IntegerType.get()),
            Types.NestedField.optional(3, "day", Types.DateType.get()));
    ChangeSchema later =
        keyedById(
            Types.NestedField.required(1, "id", Types.LongType.get()),
            Types.NestedField.optional(2, "qty", Types.LongType.get()),
            Types.NestedField.optional(3, "day", Types.DateType.get()),
            Types.NestedField.optional(4, "note", Types.StringType.get()));
    long stored =
        earlier.fingerprintOfEarlierBuilds(update(earlier, GenericRowData.of(1L, 5, 19_000)));
    assertThat(
            later.isFingerprintOf(stored, update(later, GenericRowData.of(1L, 5L, 19_000, null))))
        .isTrue();
    // Taken by the earlier build in the later schema's row, of whose columns it hashed its own.
    GenericRowData afterRow = GenericRowData.of(1L, 6L, 19_001, StringData.fromString("n"));
    long storedAfter =
        earlier.fingerprintOfEarlierBuilds(
            update(later, afterRow)
                .inSchema(4, null, afterRow, ColumnMask.EMPTY, ColumnMask.EMPTY));
    assertThat(later.isFingerprintOf(storedAfter, update(later, afterRow))).isTrue();
    // Another change is not taken for it.
    assertThat(
            later.isFingerprintOf(stored, update(later, GenericRowData.of(1L, 6L, 19_000, null))))
        .isFalse();
    assertThat(
            later.isFingerprintOf(stored, update(later, GenericRowData.of(1L, 5L, 19_001, null))))
        .isFalse();
  }

  /**
   * Nested values are hashed by their structure: the same in a row as the sources make it and as
   * the serializers read it back, and apart for arrays whose text (their class and 32-bit hash)
   * would be the same.
   */
  @Test
  void nestedValuesAreFingerprintedByTheirElements() {
    RowDataSerializer binary = new RowDataSerializer(ALL_TYPES.rowType());
    for (boolean nulls : new boolean[] {false, true}) {
      GenericRowData generic = allTypes(nulls);
      assertThat(ALL_TYPES.fingerprint(update(ALL_TYPES, binary.toBinaryRow(generic))))
          .isEqualTo(ALL_TYPES.fingerprint(update(ALL_TYPES, generic)));
    }
    GenericRowData one = allTypes(false);
    GenericRowData other = allTypes(false);
    one.setField(18, new GenericArrayData(new Integer[] {0, 31}));
    other.setField(18, new GenericArrayData(new Integer[] {1, 0}));
    assertThat(one.getField(18).hashCode()).isEqualTo(other.getField(18).hashCode());
    assertThat(ALL_TYPES.fingerprint(update(ALL_TYPES, one)))
        .isNotEqualTo(ALL_TYPES.fingerprint(update(ALL_TYPES, other)));
  }

  /** The change schema of {@code columns}, keyed by the first ({@code id}, field id 1). */
  private static ChangeSchema keyedById(Types.NestedField... columns) {
    return new ChangeSchema(new Schema(List.of(columns), Set.of(1)));
  }

  private static ChangeEvent update(ChangeSchema schema, RowData row) {
    return new ChangeEvent(
        "t", Operation.UPDATE, schema.keyOf(row), null, row, SourceSequence.postgresLsn(7), 0);
  }

  @Test
  void aKeyKeepsItsEncodingWhenItsColumnIsWidened() {
    // A source column widened while a job runs (int to bigint, a decimal's precision) must keep
    // finding its keys in the dedup and key-index state, which hold the encoded keys.
    assertThat(keyedBy(Types.IntegerType.get()).keyOf(GenericRowData.of(42, null)))
        .isEqualTo(keyedBy(Types.LongType.get()).keyOf(GenericRowData.of(42L, null)));
    assertThat(
            keyedBy(Types.DecimalType.of(10, 2))
                .keyOf(GenericRowData.of(DecimalData.fromUnscaledLong(12345, 10, 2), null)))
        .isEqualTo(
            keyedBy(Types.DecimalType.of(30, 2))
                .keyOf(
                    GenericRowData.of(
                        DecimalData.fromBigDecimal(new BigDecimal("123.45"), 30, 2), null)));
    assertThat(keyedBy(Types.IntegerType.get()).keyOf(GenericRowData.of(42, null)))
        .isNotEqualTo(keyedBy(Types.IntegerType.get()).keyOf(GenericRowData.of(43, null)));
  }

  /** Every column type Iceberg maps to Flink, keyed by a long and a string. */
  private static final ChangeSchema ALL_TYPES =
      new ChangeSchema(
          new Schema(
              List.of(
                  Types.NestedField.required(1, "id", Types.LongType.get()),
                  Types.NestedField.required(2, "name", Types.StringType.get()),
                  Types.NestedField.required(3, "count", Types.IntegerType.get()),
                  Types.NestedField.optional(4, "flag", Types.BooleanType.get()),
                  Types.NestedField.optional(5, "i", Types.IntegerType.get()),
                  Types.NestedField.optional(6, "l", Types.LongType.get()),
                  Types.NestedField.optional(7, "f", Types.FloatType.get()),
                  Types.NestedField.optional(8, "d", Types.DoubleType.get()),
                  Types.NestedField.optional(9, "day", Types.DateType.get()),
                  Types.NestedField.optional(10, "time", Types.TimeType.get()),
                  Types.NestedField.optional(11, "ts", Types.TimestampType.withoutZone()),
                  Types.NestedField.optional(12, "tstz", Types.TimestampType.withZone()),
                  Types.NestedField.optional(13, "s", Types.StringType.get()),
                  Types.NestedField.optional(14, "uuid", Types.UUIDType.get()),
                  Types.NestedField.optional(15, "fixed", Types.FixedType.ofLength(3)),
                  Types.NestedField.optional(16, "bin", Types.BinaryType.get()),
                  Types.NestedField.optional(17, "dec", Types.DecimalType.of(10, 2)),
                  Types.NestedField.optional(18, "wide", Types.DecimalType.of(30, 4)),
                  Types.NestedField.optional(
                      19, "list", Types.ListType.ofOptional(20, Types.IntegerType.get()))),
              Set.of(1, 2)));

  private static GenericRowData allTypes(boolean nulls) {
    GenericRowData row = new GenericRowData(19);
    row.setField(0, 42L);
    row.setField(1, StringData.fromString("zwölf"));
    row.setField(2, -7);
    if (!nulls) {
      row.setField(3, true);
      row.setField(4, 123456);
      row.setField(5, -9_876_543_210L);
      row.setField(6, 1.5f);
      row.setField(7, -2.25);
      row.setField(8, 19_000);
      row.setField(9, 3_600_000);
      row.setField(10, TimestampData.fromEpochMillis(1_700_000_000_123L, 456_000));
      row.setField(11, TimestampData.fromEpochMillis(1_700_000_000_789L));
      row.setField(12, StringData.fromString("a longer string value, past sixteen bytes"));
      row.setField(13, new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
      row.setField(14, new byte[] {7, 8, 9});
      row.setField(15, new byte[] {});
      row.setField(16, DecimalData.fromUnscaledLong(12345, 10, 2));
      row.setField(17, DecimalData.fromBigDecimal(new BigDecimal("-1234567890.1234"), 30, 4));
      row.setField(18, new GenericArrayData(new Integer[] {1, null, 3}));
    }
    return row;
  }

  @Test
  void keysAndFingerprintsKeepTheBytesTheStateHolds() throws Exception {
    // Both are kept in the dedup's and the key index's state: any change of their bytes breaks
    // restores. The golden file holds them as the first release wrote them.
    DataOutputSerializer out = new DataOutputSerializer(256);
    RowDataSerializer binary = new RowDataSerializer(ALL_TYPES.rowType());
    for (boolean nulls : new boolean[] {false, true}) {
      GenericRowData generic = allTypes(nulls);
      for (RowData row : List.<RowData>of(generic, binary.toBinaryRow(generic))) {
        RowKey key = ALL_TYPES.keyOf(row);
        out.writeInt(key.bytes().length);
        out.write(key.bytes());
        for (Operation operation : List.of(Operation.UPDATE, Operation.DELETE)) {
          ChangeEvent event =
              new ChangeEvent(
                  "t",
                  operation,
                  key,
                  operation.isUpsert() ? null : row,
                  operation.isUpsert() ? row : null,
                  SourceSequence.column(1),
                  0);
          out.writeLong(ALL_TYPES.fingerprintOfEarlierBuilds(event));
        }
      }
    }
    byte[] current = out.getCopyOfBuffer();
    assertThat(current)
        .isEqualTo(GoldenFiles.bytes("schema/keys-and-fingerprints-v1.bin", current));
  }

  @Test
  void fingerprintsStableAcrossSchemasKeepTheBytesTheStateHolds() throws Exception {
    // The fingerprint since states hold fingerprints that stay the same across the table's
    // schemas; the earlier builds' fingerprints stay readable (above).
    DataOutputSerializer out = new DataOutputSerializer(256);
    RowDataSerializer binary = new RowDataSerializer(ALL_TYPES.rowType());
    for (boolean nulls : new boolean[] {false, true}) {
      GenericRowData generic = allTypes(nulls);
      for (RowData row : List.<RowData>of(generic, binary.toBinaryRow(generic))) {
        for (Operation operation : List.of(Operation.UPDATE, Operation.DELETE)) {
          ChangeEvent event =
              new ChangeEvent(
                  "t",
                  operation,
                  ALL_TYPES.keyOf(row),
                  operation.isUpsert() ? null : row,
                  operation.isUpsert() ? row : null,
                  SourceSequence.column(1),
                  0);
          out.writeLong(ALL_TYPES.fingerprint(event));
        }
      }
    }
    byte[] current = out.getCopyOfBuffer();
    assertThat(current).isEqualTo(GoldenFiles.bytes("schema/fingerprints-v2.bin", current));
  }

  @Test
  void aColumnTheSourceDidNotSendIsFilledFromTheRowBeforeAndFingerprintedAsNotSent() {
    ChangeSchema schema = TestChanges.CHANGE_SCHEMA;
    ChangeEvent raw = TestChanges.updateWithoutName(1, 20);
    assertThat(raw.missingColumns()).isEqualTo(ColumnMask.EMPTY.with(1));

    ChangeEvent filled = schema.fillMissing(raw, TestChanges.row(1, "large"), ColumnMask.EMPTY);
    assertThat(filled.after().getString(1).toString()).isEqualTo("large");
    assertThat(filled.after().getLong(0)).isEqualTo(1L);
    assertThat(filled.missingColumns().isEmpty()).isTrue();
    assertThat(filled.unavailableColumns()).isEqualTo(raw.unavailableColumns());
    // Two deliveries of one change are one change, filled or not; a null sent is another change.
    assertThat(schema.fingerprint(filled)).isEqualTo(schema.fingerprint(raw));
    assertThat(schema.fingerprint(raw))
        .isNotEqualTo(schema.fingerprint(TestChanges.update(1, null, 20)));

    // A row before that lacks the value too leaves it missing.
    ChangeEvent still = schema.fillMissing(raw, TestChanges.row(1, null), ColumnMask.EMPTY.with(1));
    assertThat(still.missingColumns()).isEqualTo(ColumnMask.EMPTY.with(1));
    assertThat(still.after().isNullAt(1)).isTrue();
    assertThat(schema.describeColumns(raw.missingColumns())).isEqualTo("'name'");
  }

  @Test
  void columnMasksAddRemoveAndIntersect() {
    ColumnMask mask = ColumnMask.EMPTY.with(3).with(70).with(3);
    assertThat(mask.contains(3)).isTrue();
    assertThat(mask.contains(70)).isTrue();
    assertThat(mask.contains(4)).isFalse();
    assertThat(mask.contains(700)).isFalse();
    assertThat(mask.toString()).isEqualTo("[3, 70]");
    assertThat(mask.minus(ColumnMask.EMPTY.with(70))).isEqualTo(ColumnMask.EMPTY.with(3));
    assertThat(mask.minus(mask)).isSameAs(ColumnMask.EMPTY);
    assertThat(mask.and(ColumnMask.EMPTY.with(70).with(5))).isEqualTo(ColumnMask.EMPTY.with(70));
    assertThat(mask.and(ColumnMask.EMPTY.with(5)).isEmpty()).isTrue();
    assertThat(ColumnMask.ofWords(mask.words())).isEqualTo(mask);
    assertThat(ColumnMask.ofWords(new long[] {0, 0})).isSameAs(ColumnMask.EMPTY);
  }

  /**
   * A key read back into a row ({@link ChangeSchema#keyRowOf}, for the deletes of a truncate) holds
   * the key columns' values, of every type a key column can have, and encodes to the same key.
   */
  @Test
  void aKeyIsReadBackIntoItsColumns() {
    List<Types.NestedField> columns = new java.util.ArrayList<>();
    Set<Integer> keys = new java.util.HashSet<>();
    for (int i = 0; i < 18; i++) {
      Types.NestedField column = ALL_TYPES.schema().columns().get(i);
      boolean key = !column.name().equals("f") && !column.name().equals("d");
      // Iceberg refuses float and double key columns.
      columns.add(Types.NestedField.of(column.fieldId(), !key, column.name(), column.type()));
      if (key) {
        keys.add(column.fieldId());
      }
    }
    columns.add(Types.NestedField.optional(100, "other", Types.StringType.get()));
    ChangeSchema everyKey = new ChangeSchema(new Schema(columns, keys));
    GenericRowData row = allTypes(false);
    GenericRowData keyed = new GenericRowData(19);
    for (int i = 0; i < 18; i++) {
      keyed.setField(i, row.getField(i));
    }
    keyed.setField(18, StringData.fromString("not in the key"));
    RowKey key = everyKey.keyOf(keyed);

    GenericRowData back = everyKey.keyRowOf(key);

    assertThat(everyKey.keyOf(back)).isEqualTo(key);
    assertThat(back.isNullAt(18)).isTrue();
    assertThat(back.isNullAt(6)).isTrue();
    assertThat(everyKey.describeKey(back)).isEqualTo(everyKey.describeKey(keyed));
    // An int key widened past the int range (a row of a later schema) reads back as a long.
    ChangeSchema byInt = keyedBy(Types.IntegerType.get());
    RowKey wide = keyedBy(Types.LongType.get()).keyOf(GenericRowData.of(5_000_000_000L, null));
    assertThat(byInt.keyRowOf(wide).getField(0)).isEqualTo(5_000_000_000L);
    assertThat(byInt.keyRowOf(byInt.keyOf(GenericRowData.of(42, null))).getField(0)).isEqualTo(42);
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> byInt.keyRowOf(new RowKey(new byte[] {1, 2})))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("is not a key of");
  }

  @Test
  void aKeyColumnWithoutValueFailsNamingIt() {
    GenericRowData noId = allTypes(true);
    noId.setField(0, null);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> ALL_TYPES.keyOf(noId))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("primary key column 'id' is null");
    GenericRowData noName = allTypes(true);
    noName.setField(1, null);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> ALL_TYPES.keyOf(noName))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("primary key column 'name' is null");
  }
}
