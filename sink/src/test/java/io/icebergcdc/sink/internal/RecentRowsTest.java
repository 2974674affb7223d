package io.icebergcdc.sink.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.data.binary.BinarySegmentUtils;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;

class RecentRowsTest {

  private static final RowType TYPE =
      RowType.of(new BigIntType(false), new VarCharType(VarCharType.MAX_LENGTH));

  private static GenericRowData row(long id, String value) {
    return GenericRowData.of(id, value == null ? null : StringData.fromString(value));
  }

  /**
   * The same row in Flink's binary format, its bytes split over the second and third of three
   * memory segments, after other bytes.
   */
  private static BinaryRowData splitBinary(long id, String value) {
    BinaryRowData whole = new RowDataSerializer(TYPE).toBinaryRow(row(id, value)).copy();
    byte[] bytes =
        BinarySegmentUtils.copyToBytes(
            whole.getSegments(), whole.getOffset(), whole.getSizeInBytes());
    int cut = bytes.length / 2;
    byte[] other = {7, 7, 7, 7, 7};
    byte[] first = new byte[3 + cut];
    Arrays.fill(first, 0, 3, (byte) 7);
    System.arraycopy(bytes, 0, first, 3, cut);
    byte[] second = new byte[bytes.length - cut];
    System.arraycopy(bytes, cut, second, 0, second.length);
    BinaryRowData split = new BinaryRowData(2);
    split.pointTo(
        new MemorySegment[] {
          MemorySegmentFactory.wrap(other),
          MemorySegmentFactory.wrap(first),
          MemorySegmentFactory.wrap(second)
        },
        other.length + 3,
        bytes.length);
    return split;
  }

  private static List<String> read(Iterable<RowData> rows) {
    List<String> out = new ArrayList<>();
    for (RowData row : rows) {
      out.add(row.getLong(0) + ":" + (row.isNullAt(1) ? "null" : row.getString(1).toString()));
    }
    return out;
  }

  @Test
  void holdsTheRowsOfAFileInOrderOfPositionWhateverTheirForm() {
    RecentRows recent = new RecentRows(TYPE, 1 << 20);
    recent.add("a", 0, row(1, "one"));
    recent.add("a", 1, splitBinary(2, "a longer value than the others, " + "x".repeat(100)));
    recent.add("a", 2, row(3, null));
    recent.add("b", 0, row(9, "nine"));

    assertThat(read(recent.rowsOf("a", 3)))
        .containsExactly("1:one", "2:a longer value than the others, " + "x".repeat(100), "3:null");
    assertThat(read(recent.rowsOf("b", 1))).containsExactly("9:nine");
    assertThat(recent.rowsOf("a", 4)).as("a file with more rows than held").isNull();
    assertThat(recent.rowsOf("c", 0)).isNull();
  }

  @Test
  void aFileIsHeldWholeOrNotAtAll() {
    RecentRows recent = new RecentRows(TYPE, 1 << 20);
    recent.add("late", 1, row(1, "started at position 1"));
    recent.add("late", 2, row(2, "x"));
    assertThat(recent.rowsOf("late", 2)).isNull();
    assertThat(recent.rowsOf("late", 3)).isNull();

    recent.add("gap", 0, row(1, "x"));
    recent.add("gap", 2, row(3, "position 1 missing"));
    assertThat(recent.rowsOf("gap", 1)).isNull();
    assertThat(recent.bytes()).isZero();
  }

  @Test
  void theFilesWrittenFirstAreForgottenFirstWhenTheLimitIsPassed() {
    // The first chunk of one file and its own bytes, plus a little.
    RecentRows recent =
        new RecentRows(
            TYPE, io.icebergcdc.cdc.typeutils.ChunkSizes.FIRST + RecentRows.FILE_BYTES + 100);
    recent.add("first", 0, row(1, "a"));
    recent.add("second", 0, row(2, "b"));
    assertThat(recent.rowsOf("first", 1)).isNull();
    assertThat(read(recent.rowsOf("second", 1))).containsExactly("2:b");

    // A file that outgrows the limit alone is not held either, nor are its later rows.
    String value = "v".repeat(1000);
    for (int position = 1; position < 100; position++) {
      recent.add("second", position, row(position, value));
    }
    assertThat(recent.rowsOf("second", 100)).isNull();
    assertThat(recent.bytes()).isZero();
  }

  @Test
  void anIterationGoesOnAfterItsFileIsForgotten() {
    RecentRows recent = new RecentRows(TYPE, 1 << 20);
    for (int position = 0; position < 1000; position++) {
      recent.add("f", position, row(position, "value " + position));
    }
    Iterator<RowData> rows = recent.rowsOf("f", 1000).iterator();
    rows.next();
    recent.forget("f");
    long count = 1;
    long last = 0;
    while (rows.hasNext()) {
      RowData row = rows.next();
      last = row.getLong(0);
      assertThat(row.getString(1).toString()).isEqualTo("value " + last);
      count++;
    }
    assertThat(count).isEqualTo(1000);
    assertThat(last).isEqualTo(999);
    assertThat(recent.rowsOf("f", 1000)).isNull();
  }

  @Test
  void holdersSharingABudgetForgetTheFilesHeldFirstWhicheverHolderHeldThem() {
    int chunk = io.icebergcdc.cdc.typeutils.ChunkSizes.FIRST + RecentRows.FILE_BYTES;
    // Room for two files' first chunks, not three.
    RecentRows.Budget budget = new RecentRows.Budget(2L * chunk + 100);
    RecentRows a = new RecentRows(TYPE, budget);
    RecentRows b = new RecentRows(TYPE, budget);

    a.add("a1", 0, row(1, "a"));
    b.add("b1", 0, row(2, "b"));
    assertThat(budget.bytes()).isEqualTo(a.bytes() + b.bytes()).isEqualTo(2L * chunk);
    b.add("b2", 0, row(3, "c"));
    assertThat(a.rowsOf("a1", 1)).as("the file held first, of the other holder").isNull();
    assertThat(read(b.rowsOf("b1", 1))).containsExactly("2:b");
    assertThat(read(b.rowsOf("b2", 1))).containsExactly("3:c");
    assertThat(a.bytes()).isZero();
    assertThat(budget.bytes()).isEqualTo(b.bytes()).isEqualTo(2L * chunk);

    a.add("a2", 0, row(4, "d"));
    assertThat(b.rowsOf("b1", 1)).as("now the oldest").isNull();
    assertThat(read(b.rowsOf("b2", 1))).containsExactly("3:c");
    assertThat(read(a.rowsOf("a2", 1))).containsExactly("4:d");

    // A holder replaced or closed gives its room back; a file forgotten leaves the budget too.
    b.forgetAll();
    assertThat(b.rowsOf("b2", 1)).isNull();
    assertThat(budget.bytes()).isEqualTo(a.bytes());
    a.forget("a2");
    assertThat(budget.bytes()).isZero();
    a.add("a3", 0, row(5, "e"));
    b.add("b3", 0, row(6, "f"));
    assertThat(read(a.rowsOf("a3", 1))).containsExactly("5:e");
    assertThat(read(b.rowsOf("b3", 1))).containsExactly("6:f");
  }

  @Test
  void aFileThatOutgrowsTheBudgetAloneLeavesTheOtherHoldersFiles() {
    int file = io.icebergcdc.cdc.typeutils.ChunkSizes.FIRST + RecentRows.FILE_BYTES;
    RecentRows.Budget budget = new RecentRows.Budget(3L * file);
    RecentRows a = new RecentRows(TYPE, budget);
    RecentRows b = new RecentRows(TYPE, budget);
    a.add("a1", 0, row(1, "a"));
    String value = "v".repeat(1000);
    for (int position = 0; position < 100; position++) {
      b.add("big", position, row(position, value));
    }
    assertThat(b.rowsOf("big", 100)).isNull();
    assertThat(read(a.rowsOf("a1", 1))).containsExactly("1:a");
    assertThat(budget.bytes()).isEqualTo(a.bytes()).isEqualTo(file);
  }

  @Test
  void aSharedBudgetIsAsLargeAsItsLargestHolderAsks() {
    int file = io.icebergcdc.cdc.typeutils.ChunkSizes.FIRST + RecentRows.FILE_BYTES;
    RecentRows.Budget budget = new RecentRows.Budget(0);
    RecentRows nothing = new RecentRows(TYPE, budget);
    nothing.add("f", 0, row(1, "a"));
    assertThat(nothing.rowsOf("f", 1)).as("a budget of 0 holds nothing").isNull();
    budget.atLeast(2L * file);
    budget.atLeast(file);
    RecentRows a = new RecentRows(TYPE, budget);
    a.add("a1", 0, row(1, "a"));
    a.add("a2", 0, row(2, "b"));
    assertThat(read(a.rowsOf("a1", 1))).containsExactly("1:a");
    assertThat(read(a.rowsOf("a2", 1))).containsExactly("2:b");
  }

  @Test
  void aLimitOfZeroHoldsNothing() {
    RecentRows recent = new RecentRows(TYPE, 0);
    recent.add("f", 0, row(1, "a"));
    assertThat(recent.rowsOf("f", 1)).isNull();
    assertThat(recent.bytes()).isZero();
  }
}
