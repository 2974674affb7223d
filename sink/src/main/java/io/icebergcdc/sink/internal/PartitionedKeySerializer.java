package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.RowKey;
import io.icebergcdc.cdc.typeutils.RowKeySerializer;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/** Serializes {@link PartitionedKey}s, keys of keyed state: the partition hash, then the key. */
public final class PartitionedKeySerializer extends TypeSerializerSingleton<PartitionedKey> {

  private static final long serialVersionUID = 1L;

  public static final PartitionedKeySerializer INSTANCE = new PartitionedKeySerializer();

  @Override
  public boolean isImmutableType() {
    return true;
  }

  @Override
  public PartitionedKey createInstance() {
    return new PartitionedKey(0, new RowKey(new byte[0]));
  }

  @Override
  public PartitionedKey copy(PartitionedKey from) {
    return from;
  }

  @Override
  public PartitionedKey copy(PartitionedKey from, PartitionedKey reuse) {
    return from;
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(PartitionedKey record, DataOutputView out) throws IOException {
    out.writeInt(record.partitionHash());
    RowKeySerializer.INSTANCE.serialize(record.key(), out);
  }

  @Override
  public PartitionedKey deserialize(DataInputView in) throws IOException {
    int hash = in.readInt();
    return new PartitionedKey(hash, RowKeySerializer.INSTANCE.deserialize(in));
  }

  @Override
  public PartitionedKey deserialize(PartitionedKey reuse, DataInputView in) throws IOException {
    return deserialize(in);
  }

  @Override
  public void copy(DataInputView in, DataOutputView out) throws IOException {
    out.writeInt(in.readInt());
    RowKeySerializer.INSTANCE.copy(in, out);
  }

  @Override
  public TypeSerializerSnapshot<PartitionedKey> snapshotConfiguration() {
    return new PartitionedKeySerializerSnapshot();
  }

  /** The snapshot of the stateless {@link PartitionedKeySerializer}. */
  public static final class PartitionedKeySerializerSnapshot
      extends SimpleTypeSerializerSnapshot<PartitionedKey> {
    public PartitionedKeySerializerSnapshot() {
      super(() -> INSTANCE);
    }
  }
}
