package io.icebergcdc.cdc.typeutils;

import io.icebergcdc.cdc.RowKey;
import io.icebergcdc.cdc.TableKey;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Serializes {@link TableKey}s: the table's name, then the key as {@link RowKeySerializer} writes
 * it. The table name read last is reused: a key group's keys are mostly of few tables.
 */
public final class TableKeySerializer extends TypeSerializer<TableKey> {

  private static final long serialVersionUID = 1L;

  private transient String lastTable;

  @Override
  public boolean isImmutableType() {
    return true;
  }

  @Override
  public TypeSerializer<TableKey> duplicate() {
    return new TableKeySerializer();
  }

  @Override
  public TableKey createInstance() {
    return new TableKey("", new RowKey(new byte[0]));
  }

  @Override
  public TableKey copy(TableKey from) {
    return from;
  }

  @Override
  public TableKey copy(TableKey from, TableKey reuse) {
    return from;
  }

  @Override
  public int getLength() {
    return -1;
  }

  /**
   * Written before the table's name of a key hashed apart from its primary key ({@link
   * TableKey#hashedApart}), which its hash follows: no table's name starts with it, so the keys of
   * earlier builds, none of which was hashed apart, read as before.
   */
  private static final char HASHED_APART = '\u0000';

  /** Whether a table name as written starts with {@link #HASHED_APART}: its hash follows. */
  private static boolean markedHashedApart(String written) {
    return !written.isEmpty() && written.charAt(0) == HASHED_APART;
  }

  @Override
  public void serialize(TableKey record, DataOutputView target) throws IOException {
    if (record.hashedApart()) {
      target.writeUTF(HASHED_APART + record.table());
      target.writeInt(record.hash());
    } else {
      target.writeUTF(record.table());
    }
    RowKeySerializer.INSTANCE.serialize(record.key(), target);
  }

  @Override
  public TableKey deserialize(DataInputView source) throws IOException {
    String table = source.readUTF();
    boolean hashedApart = markedHashedApart(table);
    if (hashedApart) {
      table = table.substring(1);
    }
    if (table.equals(lastTable)) {
      table = lastTable;
    } else {
      lastTable = table;
    }
    if (hashedApart) {
      int hash = source.readInt();
      return TableKey.hashedBy(table, RowKeySerializer.INSTANCE.deserialize(source), hash);
    }
    return new TableKey(table, RowKeySerializer.INSTANCE.deserialize(source));
  }

  @Override
  public TableKey deserialize(TableKey reuse, DataInputView source) throws IOException {
    return deserialize(source);
  }

  @Override
  public void copy(DataInputView source, DataOutputView target) throws IOException {
    String table = source.readUTF();
    target.writeUTF(table);
    if (markedHashedApart(table)) {
      target.writeInt(source.readInt());
    }
    RowKeySerializer.INSTANCE.copy(source, target);
  }

  @Override
  public boolean equals(Object obj) {
    return obj instanceof TableKeySerializer;
  }

  @Override
  public int hashCode() {
    return TableKeySerializer.class.hashCode();
  }

  @Override
  public TypeSerializerSnapshot<TableKey> snapshotConfiguration() {
    return new TableKeySerializerSnapshot();
  }

  /** The snapshot of the stateless {@link TableKeySerializer}. */
  public static final class TableKeySerializerSnapshot
      extends SimpleTypeSerializerSnapshot<TableKey> {
    public TableKeySerializerSnapshot() {
      super(TableKeySerializer::new);
    }
  }
}
