package io.icebergcdc.dedup.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.RowKey;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * Changes that lack values the source did not send ({@link ChangeEvent#missingColumns()}) and whose
 * keys have no row yet to take them from, kept in keyed state until the key's next change: during a
 * chunked snapshot, the log delivers updates of rows whose chunk is not read yet, and the read that
 * comes later lends the values (or a complete change of the log replaces the held one).
 *
 * <p>Keyed state of the key in context, one entry per key; entries are rare, so their number is
 * counted and the state is read only while there is any. An entry is its format version, a hash of
 * the table's row type, and the change as {@code ChangeEventSerializer} writes it: a change held
 * under another row type (the job restored after a schema change) fails plainly instead of being
 * misread.
 *
 * <p>Not thread-safe: the operator's task thread only.
 */
final class AwaitingRows {

  /** What gives a change read back the rows of its table's current schema. */
  private java.util.function.UnaryOperator<ChangeEvent> fit =
      java.util.function.UnaryOperator.identity();

  /** Gives the changes read back from now on the rows of their table's current schema. */
  void useSchema(java.util.function.UnaryOperator<ChangeEvent> newFit) {
    this.fit = newFit;
  }

  private static final int FORMAT = 1;

  private final ValueState<byte[]> state;
  private final TypeSerializer<ChangeEvent> serializer;
  private final long rowTypeHash;
  private final DataOutputSerializer out = new DataOutputSerializer(256);
  private long count;

  AwaitingRows(
      ValueState<byte[]> state,
      long restored,
      ChangeSchema schema,
      TypeSerializer<ChangeEvent> serializer) {
    this.state = state;
    this.count = restored;
    this.serializer = serializer;
    byte[] rowType = schema.rowType().asSerializableString().getBytes(StandardCharsets.UTF_8);
    this.rowTypeHash = RowKey.hash64(rowType, rowType.length);
  }

  /** How many keys have a change held. */
  long count() {
    return count;
  }

  /** The change held for the key in context, now no longer held; null if there is none. */
  ChangeEvent take() throws IOException {
    if (count == 0) {
      return null;
    }
    byte[] bytes = state.value();
    if (bytes == null) {
      return null;
    }
    state.clear();
    count--;
    DataInputDeserializer in = new DataInputDeserializer(bytes);
    int format = in.readByte();
    if (format != FORMAT) {
      throw new IOException("unknown format " + format + " of a change awaiting its row");
    }
    if (in.readLong() != rowTypeHash) {
      throw new IllegalStateException(
          "a change kept until its key's row came was written for another schema of the table;"
              + " restore the job with the schema it had, or start it again without state");
    }
    return fit.apply(serializer.deserialize(in));
  }

  /**
   * Drops what the key in context holds, a key of another table of the operator, which this one
   * does not count.
   */
  void forget() {
    state.clear();
  }

  /** Holds {@code change} for the key in context, which holds none. */
  void hold(ChangeEvent change) throws IOException {
    out.clear();
    out.writeByte(FORMAT);
    out.writeLong(rowTypeHash);
    serializer.serialize(change, out);
    state.update(out.getCopyOfBuffer());
    count++;
  }
}
