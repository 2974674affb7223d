package io.icebergcdc.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SourceSequenceTest {

  @Test
  void postgresPositionsOrderByCommitThenLsn() {
    assertThat(SourceSequence.postgresLsn(5)).isLessThan(SourceSequence.postgresLsn(6));
    // A change of a later transaction can have a lower LSN than one of an earlier transaction.
    assertThat(SourceSequence.postgresLsn(100, 7))
        .isGreaterThan(SourceSequence.postgresLsn(90, 50));
    assertThat(SourceSequence.postgresLsn(0x16B3748L).toString()).isEqualTo("lsn=0/16B3748");
    assertThat(SourceSequence.parseLsn("1/16B3748")).isEqualTo(0x1_016B_3748L);
  }

  @Test
  void mysqlPositionsOrderByFileThenPositionThenRow() {
    SourceSequence a = SourceSequence.mysqlBinlog("mysql-bin.000009", 900, 0);
    SourceSequence b = SourceSequence.mysqlBinlog("mysql-bin.000010", 4, 0);
    SourceSequence c = SourceSequence.mysqlBinlog("mysql-bin.000010", 4, 1);
    assertThat(a).isLessThan(b);
    assertThat(b).isLessThan(c);
    assertThat(c.toString()).isEqualTo("mysql-bin.000010:4#1");
    assertThatThrownBy(() -> SourceSequence.mysqlBinlog("binlog", 4, 0))
        .hasMessageContaining("binlog");
  }

  @Test
  void aSnapshotReadBesideTheLogIsBeforeEveryPositionOfIt() {
    SourceSequence read = SourceSequence.beforeLog(SourceSequence.Kind.POSTGRES_LSN);
    assertThat(read).isLessThan(SourceSequence.postgresLsn(0, 1));
    assertThat(read).isLessThan(SourceSequence.postgresLsn(1));
    assertThat(read.isBeforeLog()).isTrue();
    assertThat(SourceSequence.postgresLsn(0).isBeforeLog()).isFalse();
    assertThat(read.toString()).isEqualTo("snapshot (before the log)");
    SourceSequence binlog = SourceSequence.beforeLog(SourceSequence.Kind.MYSQL_BINLOG);
    assertThat(binlog).isLessThan(SourceSequence.mysqlBinlog("mysql-bin.000001", 0, 0));
    assertThat(SourceSequence.decode(binlog.encode())).isEqualTo(binlog);
    assertThatThrownBy(() -> SourceSequence.beforeLog(SourceSequence.Kind.COLUMN))
        .hasMessageContaining("COLUMN");
  }

  @Test
  void columnValuesCompareAsSignedNumbers() {
    // A timestamp column before 1970 holds negative microseconds.
    assertThat(SourceSequence.column(-1)).isLessThan(SourceSequence.column(0));
  }

  @Test
  void kindsDoNotCompare() {
    assertThatThrownBy(() -> SourceSequence.column(1).compareTo(SourceSequence.postgresLsn(1)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void encodesToTextThatDecodesToTheSameSequence() {
    for (SourceSequence sequence :
        java.util.List.of(
            SourceSequence.postgresLsn(0x16B3748L),
            SourceSequence.postgresLsn(0x100L, 0x16B3748L),
            SourceSequence.mysqlBinlog("mysql-bin.000042", 1234, 3),
            SourceSequence.column(-5),
            SourceSequence.kafkaOffset(2, 99),
            SourceSequence.arrival(),
            SourceSequence.unordered())) {
      SourceSequence decoded = SourceSequence.decode(sequence.encode());
      org.assertj.core.api.Assertions.assertThat(decoded).isEqualTo(sequence);
      org.assertj.core.api.Assertions.assertThat(decoded.toString()).isEqualTo(sequence.toString());
    }
    org.assertj.core.api.Assertions.assertThat(SourceSequence.postgresLsn(1).isGlobal()).isTrue();
    org.assertj.core.api.Assertions.assertThat(SourceSequence.column(1).isGlobal()).isFalse();
  }

  /**
   * A key's Kafka records in one partition order by offset; in two partitions by their timestamps,
   * and without them (or with equal ones) the later arrival is the later, never the partition.
   */
  @Test
  void kafkaOffsetsOfTwoPartitionsOrderByTimestampThenArrival() {
    SourceSequence last = SourceSequence.kafkaOffset(3, 100, 5_000);
    assertThat(SourceSequence.kafkaOffset(3, 99, 9_000).orderAgainstLast(last)).isNegative();
    assertThat(SourceSequence.kafkaOffset(3, 101).orderAgainstLast(last)).isPositive();
    assertThat(SourceSequence.kafkaOffset(3, 100).orderAgainstLast(last)).isZero();
    // A lower partition, later: not stale, as ordering by partition first would have it.
    assertThat(SourceSequence.kafkaOffset(1, 7, 6_000).orderAgainstLast(last)).isPositive();
    assertThat(SourceSequence.kafkaOffset(5, 7, 4_000).orderAgainstLast(last)).isNegative();
    assertThat(SourceSequence.kafkaOffset(1, 7, 5_000).orderAgainstLast(last)).isPositive();
    assertThat(SourceSequence.kafkaOffset(1, 7).orderAgainstLast(last)).isPositive();
    // Other positions as compareTo.
    assertThat(SourceSequence.postgresLsn(5).orderAgainstLast(SourceSequence.postgresLsn(6)))
        .isNegative();
  }
}
