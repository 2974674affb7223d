package io.icebergcdc.cdc.typeutils;

import io.icebergcdc.cdc.DeadLetter;
import java.io.IOException;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/** Versioned serializer of {@link DeadLetter}s. Version 1: table, origin, reason, record. */
public final class DeadLetterSerializer implements SimpleVersionedSerializer<DeadLetter> {

  public static final int VERSION_1 = 1;

  @Override
  public int getVersion() {
    return VERSION_1;
  }

  @Override
  public byte[] serialize(DeadLetter letter) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(256);
    writeString(letter.table(), out);
    writeString(letter.origin(), out);
    writeString(letter.reason(), out);
    writeString(letter.record(), out);
    return out.getCopyOfBuffer();
  }

  @Override
  public DeadLetter deserialize(int version, byte[] bytes) throws IOException {
    if (version != VERSION_1) {
      throw new IOException("unknown version " + version + " of a serialized dead letter");
    }
    DataInputDeserializer in = new DataInputDeserializer(bytes);
    return new DeadLetter(readString(in), readString(in), readString(in), readString(in));
  }

  /** Writes a string of any length (writeUTF stops at 64 KiB). */
  static void writeString(String value, DataOutputSerializer out) throws IOException {
    byte[] utf8 = value.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    out.writeInt(utf8.length);
    out.write(utf8);
  }

  static String readString(DataInputDeserializer in) throws IOException {
    byte[] utf8 = new byte[in.readInt()];
    in.readFully(utf8);
    return new String(utf8, java.nio.charset.StandardCharsets.UTF_8);
  }
}
