package io.icebergcdc.jobs.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.java.tuple.Tuple2;
import org.junit.jupiter.api.Test;

class NumberedLineFormatTest {

  private static List<String> lines(String text) throws Exception {
    NumberedLineFormat.LineReader reader =
        new NumberedLineFormat.LineReader(
            new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)));
    List<String> lines = new ArrayList<>();
    Tuple2<Long, byte[]> line;
    while ((line = reader.read()) != null) {
      assertThat(line.f0).isEqualTo(lines.size() + 1L);
      lines.add(new String(line.f1, StandardCharsets.UTF_8));
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
}
