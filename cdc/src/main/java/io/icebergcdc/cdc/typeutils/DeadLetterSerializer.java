package io.icebergcdc.cdc.typeutils;

import io.icebergcdc.cdc.DeadLetter;
import java.io.IOException;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * Versioned serializer of {@link DeadLetter}s. Version 1: table, origin, reason, record. Version 2
 * adds the name the table is written as ({@link DeadLetter#writtenAs()}), after a flag byte: 0 for
 * none, 1 for one.
 */
public final class DeadLetterSerializer implements SimpleVersionedSerializer<DeadLetter> {

  public static final int VERSION_1 = 1;
  public static final int VERSION_2 = 2;

  @Override
  public int getVersion() {
    return VERSION_2;
  }

  @Override
  public byte[] serialize(DeadLetter letter) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(256);
    Utf8Strings.write(letter.table(), out);
    Utf8Strings.write(letter.origin(), out);
    Utf8Strings.write(letter.reason(), out);
    Utf8Strings.write(letter.record(), out);
    if (letter.writtenAs() == null) {
      out.writeByte(0);
    } else {
      out.writeByte(1);
      Utf8Strings.write(letter.writtenAs(), out);
    }
    return out.getCopyOfBuffer();
  }

  @Override
  public DeadLetter deserialize(int version, byte[] bytes) throws IOException {
    if (version != VERSION_1 && version != VERSION_2) {
      throw new IOException("unknown version " + version + " of a serialized dead letter");
    }
    DataInputDeserializer in = new DataInputDeserializer(bytes);
    DeadLetter letter =
        new DeadLetter(
            Utf8Strings.read(in), Utf8Strings.read(in), Utf8Strings.read(in), Utf8Strings.read(in));
    return version == VERSION_2 && in.readByte() == 1
        ? letter.writtenAs(Utf8Strings.read(in))
        : letter;
  }
}
