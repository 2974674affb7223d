package io.icebergcdc.cdc.typeutils;

import io.icebergcdc.cdc.RowKey;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/** Serializes {@link RowKey}s, the key of the dedup's keyed state: a length and the bytes. */
public final class RowKeySerializer extends TypeSerializerSingleton<RowKey> {

  private static final long serialVersionUID = 1L;

  public static final RowKeySerializer INSTANCE = new RowKeySerializer();

  @Override
  public boolean isImmutableType() {
    return true;
  }

  @Override
  public RowKey createInstance() {
    return new RowKey(new byte[0]);
  }

  @Override
  public RowKey copy(RowKey from) {
    return from;
  }

  @Override
  public RowKey copy(RowKey from, RowKey reuse) {
    return from;
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(RowKey record, DataOutputView target) throws IOException {
    byte[] bytes = record.bytes();
    target.writeInt(bytes.length);
    target.write(bytes);
  }

  @Override
  public RowKey deserialize(DataInputView source) throws IOException {
    byte[] bytes = new byte[source.readInt()];
    source.readFully(bytes);
    return new RowKey(bytes);
  }

  @Override
  public RowKey deserialize(RowKey reuse, DataInputView source) throws IOException {
    return deserialize(source);
  }

  @Override
  public void copy(DataInputView source, DataOutputView target) throws IOException {
    int length = source.readInt();
    byte[] bytes = new byte[length];
    source.readFully(bytes);
    target.writeInt(length);
    // Not target.write(source, length): Flink's DataOutputSerializer does not grow for that.
    target.write(bytes);
  }

  @Override
  public TypeSerializerSnapshot<RowKey> snapshotConfiguration() {
    return new RowKeySerializerSnapshot();
  }

  /** The snapshot of the stateless {@link RowKeySerializer}. */
  public static final class RowKeySerializerSnapshot extends SimpleTypeSerializerSnapshot<RowKey> {
    public RowKeySerializerSnapshot() {
      super(() -> INSTANCE);
    }
  }
}
