package io.icebergcdc.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.junit.jupiter.api.Test;

class TruncateCopiesTest {

  private static final ChangeEvent TRUNCATE =
      ChangeEvent.truncate("db.items", SourceSequence.postgresLsn(100, 90), 0L);

  /**
   * The copies reach every subtask of a writer keyed by table and key, or by key, whatever its
   * parallelism and maximum parallelism: Flink's defaults (powers of two from 128) and the router's
   * own maximum parallelism where the job set one that is not a power of two.
   */
  @Test
  void theCopiesReachEverySubtask() {
    for (int maxParallelism : new int[] {128, 256, 4096, 32768, 1000}) {
      List<ChangeEvent> forTables = new ArrayList<>();
      TruncateCopies.forTables(TRUNCATE, maxParallelism, forTables::add);
      List<ChangeEvent> forOneTable = new ArrayList<>();
      TruncateCopies.forOneTable(TRUNCATE, maxParallelism, forOneTable::add);
      for (int parallelism : new int[] {1, 2, 3, 7, 64, 100, maxParallelism}) {
        Set<Integer> byTable = new HashSet<>();
        for (ChangeEvent copy : forTables) {
          byTable.add(
              KeyGroupRangeAssignment.assignKeyToParallelOperator(
                  new TableKey(copy.table(), copy.key()), maxParallelism, parallelism));
        }
        Set<Integer> byKey = new HashSet<>();
        for (ChangeEvent copy : forOneTable) {
          byKey.add(
              KeyGroupRangeAssignment.assignKeyToParallelOperator(
                  copy.key(), maxParallelism, parallelism));
        }
        assertThat(byTable).as("%s of %s", parallelism, maxParallelism).hasSize(parallelism);
        assertThat(byKey).as("%s of %s", parallelism, maxParallelism).hasSize(parallelism);
      }
    }
    List<ChangeEvent> copies = new ArrayList<>();
    TruncateCopies.forOneTable(TRUNCATE, 128, copies::add);
    // Every key group of Flink's largest maximum parallelism, once.
    assertThat(copies).hasSize(32768);
    assertThat(copies)
        .allSatisfy(
            copy -> {
              assertThat(copy.operation()).isEqualTo(Operation.TRUNCATE);
              assertThat(copy.sequence()).isEqualTo(TRUNCATE.sequence());
              assertThat(copy.table()).isEqualTo("db.items");
              assertThat(copy.keyRow()).isNull();
            });
  }

  @Test
  void onlyATruncateIsCopied() {
    ChangeEvent delete =
        new ChangeEvent(
            "db.items",
            Operation.DELETE,
            new RowKey(new byte[] {1}),
            org.apache.flink.table.data.GenericRowData.of(1L),
            null,
            SourceSequence.postgresLsn(100, 90),
            0L);
    assertThatThrownBy(() -> TruncateCopies.forOneTable(delete, 128, e -> {}))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> delete.withKey(new RowKey(new byte[] {2})))
        .isInstanceOf(IllegalStateException.class);
    assertThat(Operation.fromCode("t")).isEqualTo(Operation.TRUNCATE);
    assertThat(Operation.TRUNCATE.isUpsert()).isFalse();
  }
}
