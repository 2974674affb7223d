package io.icebergcdc.jobs.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.debezium.DebeziumJsonParseFunction;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.flink.api.java.tuple.Tuple4;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NumberedLineFormatTest {

  @TempDir java.nio.file.Path dir;

  /** The lines of {@code text} as the reader gives them with their bytes. */
  private static List<String> lines(String text) throws Exception {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    NumberedLineFormat.LineReader reader =
        new NumberedLineFormat.LineReader(new ByteArrayInputStream(bytes), false);
    List<String> lines = new ArrayList<>();
    Tuple4<Long, Long, Integer, byte[]> line;
    while ((line = reader.read()) != null) {
      assertThat(line.f0).isEqualTo(lines.size() + 1L);
      assertThat(DebeziumJsonParseFunction.hasBytes(line)).isTrue();
      assertThat(line.f3).hasSize(line.f2);
      assertThat(Arrays.copyOfRange(bytes, (int) (long) line.f1, (int) (line.f1 + line.f2)))
          .isEqualTo(line.f3);
      lines.add(new String(line.f3, StandardCharsets.UTF_8));
    }
    return lines;
  }

  /**
   * The lines of a file as the reader gives them by reference and {@link MappedFileLines} reads
   * them, in windows of {@code window} bytes reaching {@code overlap} into the next.
   */
  private List<String> linesByReference(String text, long window, long overlap) throws Exception {
    java.nio.file.Path file = Files.createTempFile(dir, "lines", ".jsonl");
    Files.write(file, text.getBytes(StandardCharsets.UTF_8));
    NumberedLineFormat.LineReader reader =
        new NumberedLineFormat.LineReader(Files.newInputStream(file), true);
    List<String> lines = new ArrayList<>();
    try (MappedFileLines mapped = new MappedFileLines(file.toString(), window, overlap)) {
      Tuple4<Long, Long, Integer, byte[]> line;
      while ((line = reader.read()) != null) {
        assertThat(line.f0).isEqualTo(lines.size() + 1L);
        byte[] bytes =
            DebeziumJsonParseFunction.hasBytes(line) ? line.f3 : mapped.read(line.f1, line.f2);
        assertThat(bytes).hasSize(line.f2);
        lines.add(new String(bytes, StandardCharsets.UTF_8));
      }
    }
    return lines;
  }

  @Test
  void splitsAtNewlinesDroppingACarriageReturnBeforeThem() throws Exception {
    assertThat(lines("")).isEmpty();
    assertThat(lines("a\nb\r\n\nc")).containsExactly("a", "b", "", "c");
    assertThat(lines("a\n")).containsExactly("a");
    assertThat(lines("ä€\n{\"x\":1}\r")).containsExactly("ä€", "{\"x\":1}");
    assertThat(linesByReference("a\nb\r\n\nc\r", 4, 2)).containsExactly("a", "b", "", "c");
  }

  @Test
  void aLineLongerThanTheBufferOrAcrossItsEndIsWhole() throws Exception {
    String longLine = "x".repeat(200_000);
    String nearEnd = "y".repeat((1 << 16) - 3);
    String text = nearEnd + "\r\n" + longLine + "\n" + "z";
    assertThat(lines(text)).containsExactly(nearEnd, longLine, "z");
    assertThat(linesByReference(text, 1 << 20, 1 << 18)).containsExactly(nearEnd, longLine, "z");
    // The \r the buffer's last byte, its \n the next buffer's first.
    String atEnd = "w".repeat((1 << 16) - 1);
    assertThat(lines(atEnd + "\r\nv")).containsExactly(atEnd, "v");
    assertThat(linesByReference(atEnd + "\r\nv", 1 << 20, 1 << 18)).containsExactly(atEnd, "v");
    // Lines of several buffers, their bytes grown by doubling: each whole, of its own length.
    List<String> several = new ArrayList<>();
    for (int length : new int[] {1 << 17, (1 << 17) + 1, 3 * (1 << 16) - 1, 5 * (1 << 16) + 7}) {
      several.add(String.valueOf((char) ('a' + several.size())).repeat(length));
    }
    assertThat(lines(String.join("\r\n", several) + "\n")).containsExactlyElementsOf(several);
  }

  @Test
  void linesByReferenceReadTheSameAcrossWindowsAndPastTheOverlap() throws Exception {
    Random random = new Random(42);
    for (int round = 0; round < 40; round++) {
      List<String> expected = new ArrayList<>();
      StringBuilder text = new StringBuilder();
      int count = random.nextInt(60);
      for (int i = 0; i < count; i++) {
        int length = random.nextInt(10) == 0 ? random.nextInt(200) : random.nextInt(8);
        String line = "é".repeat(random.nextInt(2)) + "x".repeat(length);
        expected.add(line);
        text.append(line).append(random.nextBoolean() ? "\n" : "\r\n");
      }
      if (count > 0 && !expected.get(count - 1).isEmpty() && random.nextBoolean()) {
        // The last line without its end.
        text.setLength(text.length() - (text.charAt(text.length() - 2) == '\r' ? 2 : 1));
      }
      long window = 1 + random.nextInt(64);
      long overlap = random.nextInt(32);
      assertThat(lines(text.toString())).as("round %d, with bytes", round).isEqualTo(expected);
      assertThat(linesByReference(text.toString(), window, overlap))
          .as("round %d, windows of %d reaching %d into the next", round, window, overlap)
          .isEqualTo(expected);
    }
  }

  @Test
  void aLineBeyondTheFileIsRefusedNamingTheFile() throws Exception {
    java.nio.file.Path file = dir.resolve("short.jsonl");
    Files.write(file, "abc\n".getBytes(StandardCharsets.UTF_8));
    try (MappedFileLines mapped = new MappedFileLines(file.toString())) {
      assertThat(mapped.read(0, 3)).isEqualTo("abc".getBytes(StandardCharsets.UTF_8));
      assertThatThrownBy(() -> mapped.read(2, 8))
          .isInstanceOf(java.io.EOFException.class)
          .hasMessageContaining(file.toString());
    }
  }

  @Test
  void aNewlineIsFoundAtEveryPlaceOfAWordAndAmongBytesThatLookLikeIt() {
    byte[] lookalikes = {0x0B, 0x09, (byte) 0x8A, 0x1A, 0x0A - 0x01, (byte) 0xFF, 0x00};
    Random random = new Random(7);
    for (int length = 0; length < 40; length++) {
      for (int newline = -1; newline < length; newline++) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
          bytes[i] = lookalikes[random.nextInt(lookalikes.length)];
        }
        if (newline >= 0) {
          bytes[newline] = '\n';
          if (newline + 1 < length && random.nextBoolean()) {
            bytes[random.nextInt(length - newline - 1) + newline + 1] = '\n';
          }
        }
        int from = newline < 0 ? random.nextInt(length + 1) : random.nextInt(newline + 1);
        assertThat(NumberedLineFormat.indexOfNewline(bytes, from, length))
            .as("length %d, newline at %d, from %d", length, newline, from)
            .isEqualTo(newline);
      }
    }
  }

  @Test
  void aFileIsReadWhateverItsNameStartsWith() throws Exception {
    for (String name : List.of("_changes.jsonl", ".changes.jsonl", "changes.jsonl")) {
      java.nio.file.Path file = dir.resolve(name);
      Files.write(file, "a\n".getBytes(StandardCharsets.UTF_8));
      assertThat(
              NumberedLineFormat.everyFile()
                  .create()
                  .enumerateSplits(
                      new org.apache.flink.core.fs.Path[] {
                        new org.apache.flink.core.fs.Path(file.toUri())
                      },
                      1))
          .as(name)
          .hasSize(1);
    }
  }
}
