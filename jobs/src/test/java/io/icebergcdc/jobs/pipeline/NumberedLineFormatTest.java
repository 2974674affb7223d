package io.icebergcdc.jobs.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Random;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.reader.StreamFormat;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NumberedLineFormatTest {

  @TempDir java.nio.file.Path dir;

  private static List<String> lines(String text) throws Exception {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    NumberedLineFormat.LineReader reader =
        new NumberedLineFormat.LineReader(new ByteArrayInputStream(bytes), 0, bytes.length);
    List<String> lines = new ArrayList<>();
    Tuple3<Long, Long, byte[]> line;
    while ((line = reader.read()) != null) {
      assertThat(line.f0).isZero();
      assertThat(line.f1).isEqualTo(lines.size() + 1L);
      lines.add(new String(line.f2, StandardCharsets.UTF_8));
    }
    return lines;
  }

  @Test
  void splitsAtNewlinesDroppingACarriageReturnBeforeThem() throws Exception {
    assertThat(lines("")).isEmpty();
    assertThat(lines("a\nb\r\n\nc")).containsExactly("a", "b", "", "c");
    assertThat(lines("a\n")).containsExactly("a");
    assertThat(lines("ä€\n{\"x\":1}\r")).containsExactly("ä€", "{\"x\":1}");
  }

  @Test
  void aLineLongerThanTheBufferOrAcrossItsEndIsWhole() throws Exception {
    String longLine = "x".repeat(200_000);
    String nearEnd = "y".repeat((1 << 16) - 3);
    assertThat(lines(nearEnd + "\r\n" + longLine + "\n" + "z"))
        .containsExactly(nearEnd, longLine, "z");
  }

  /** Every line of a file, in each of its splits, with its number in the file. */
  private List<String> readInSplits(
      java.nio.file.Path file, long minBytes, long maxBytes, int readers) throws Exception {
    Path path = new Path(file.toUri());
    Collection<FileSourceSplit> splits =
        new NumberedLineFormat.Splits(minBytes, maxBytes)
            .enumerateSplits(new Path[] {path}, readers);
    NumberedLineFormat format = new NumberedLineFormat();
    FileLineNumbers numbers = new FileLineNumbers(file.toString());
    List<String> lines = new ArrayList<>();
    long covered = 0;
    for (FileSourceSplit split : splits) {
      assertThat(split.offset()).isEqualTo(covered);
      covered += split.length();
      FSDataInputStream in = path.getFileSystem().open(path);
      in.seek(split.offset());
      try (StreamFormat.Reader<Tuple3<Long, Long, byte[]>> reader =
          format.createReader(
              new Configuration(), in, Files.size(file), split.offset() + split.length())) {
        Tuple3<Long, Long, byte[]> line;
        while ((line = reader.read()) != null) {
          long number = line.f0 == 0 ? line.f1 : numbers.lineNumber(line.f0, line.f1);
          assertThat(number).isEqualTo(lines.size() + 1L);
          lines.add(new String(line.f2, StandardCharsets.UTF_8));
        }
      }
    }
    assertThat(covered).isEqualTo(Files.size(file));
    return lines;
  }

  @Test
  void theSplitsOfAFileReadEachLineOnceWithItsNumberInTheFile() throws Exception {
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
      java.nio.file.Path file = dir.resolve("lines-" + round + ".jsonl");
      Files.write(file, text.toString().getBytes(StandardCharsets.UTF_8));
      long size = Math.max(1, Files.size(file));
      long splitBytes = 1 + random.nextInt((int) Math.min(size, 64));
      assertThat(readInSplits(file, splitBytes, splitBytes, 2))
          .as("round %d, splits of %d bytes", round, splitBytes)
          .isEqualTo(expected);
    }
  }

  @Test
  void aFileIsCutForItsReadersWithinTheBoundsAndACompressedOneIsNot() throws Exception {
    java.nio.file.Path file = dir.resolve("changes.jsonl");
    Files.write(file, "a\n".repeat(500).getBytes(StandardCharsets.UTF_8));
    Path path = new Path(file.toUri());
    assertThat(new NumberedLineFormat.Splits(100, 400).enumerateSplits(new Path[] {path}, 2))
        .extracting(FileSourceSplit::length)
        .containsExactly(400L, 400L, 200L);
    assertThat(new NumberedLineFormat.Splits(100, 4000).enumerateSplits(new Path[] {path}, 4))
        .extracting(FileSourceSplit::length)
        .containsExactly(250L, 250L, 250L, 250L);
    assertThat(new NumberedLineFormat.Splits(800, 4000).enumerateSplits(new Path[] {path}, 4))
        .extracting(FileSourceSplit::length)
        .containsExactly(800L, 200L);

    java.nio.file.Path gzip = dir.resolve("changes.jsonl.gz");
    Files.write(gzip, new byte[1000]);
    assertThat(
            new NumberedLineFormat.Splits(100, 400)
                .enumerateSplits(new Path[] {new Path(gzip.toUri())}, 2))
        .extracting(FileSourceSplit::length)
        .containsExactly(1000L);
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
}
