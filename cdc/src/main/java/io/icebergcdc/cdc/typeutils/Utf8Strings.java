package io.icebergcdc.cdc.typeutils;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Strings of any length inside hand-written serializers, as a byte count and UTF-8 bytes ({@code
 * writeUTF} stops at 64 KiB, which a record text or a file description can pass).
 */
public final class Utf8Strings {

  private Utf8Strings() {}

  public static void write(String value, DataOutputView out) throws IOException {
    byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
    out.writeInt(utf8.length);
    out.write(utf8);
  }

  public static String read(DataInputView in) throws IOException {
    byte[] utf8 = new byte[in.readInt()];
    in.readFully(utf8);
    return new String(utf8, StandardCharsets.UTF_8);
  }
}
