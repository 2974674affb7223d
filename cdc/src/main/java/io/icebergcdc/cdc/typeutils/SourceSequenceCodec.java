package io.icebergcdc.cdc.typeutils;

import io.icebergcdc.cdc.SourceSequence;
import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The binary form of a {@link SourceSequence} inside serializers of events, state and committables:
 * kind ordinal, optional prefix, then the components. Kinds are only ever appended to {@link
 * SourceSequence.Kind}, so an ordinal written once keeps its meaning.
 */
public final class SourceSequenceCodec {

  private static final SourceSequence.Kind[] KINDS = SourceSequence.Kind.values();

  private SourceSequenceCodec() {}

  public static void write(SourceSequence sequence, DataOutputView out) throws IOException {
    out.writeByte(sequence.kind().ordinal());
    String prefix = sequence.prefix();
    out.writeBoolean(prefix != null);
    if (prefix != null) {
      out.writeUTF(prefix);
    }
    int size = sequence.size();
    out.writeByte(size);
    for (int i = 0; i < size; i++) {
      out.writeLong(sequence.component(i));
    }
  }

  public static SourceSequence read(DataInputView in) throws IOException {
    int ordinal = in.readByte();
    if (ordinal < 0 || ordinal >= KINDS.length) {
      throw new IOException("unknown source sequence kind " + ordinal);
    }
    String prefix = in.readBoolean() ? in.readUTF() : null;
    int size = in.readByte();
    if (size <= SourceSequence.INLINE_COMPONENTS) {
      long c0 = size > 0 ? in.readLong() : 0;
      long c1 = size > 1 ? in.readLong() : 0;
      long c2 = size > 2 ? in.readLong() : 0;
      return SourceSequence.of(KINDS[ordinal], prefix, size, c0, c1, c2);
    }
    long[] components = new long[size];
    for (int i = 0; i < size; i++) {
      components[i] = in.readLong();
    }
    return SourceSequence.of(KINDS[ordinal], prefix, components);
  }

  /** Writes a sequence that may be null. */
  public static void writeNullable(SourceSequence sequence, DataOutputView out) throws IOException {
    out.writeBoolean(sequence != null);
    if (sequence != null) {
      write(sequence, out);
    }
  }

  /** Reads what {@link #writeNullable} wrote. */
  public static SourceSequence readNullable(DataInputView in) throws IOException {
    return in.readBoolean() ? read(in) : null;
  }
}
