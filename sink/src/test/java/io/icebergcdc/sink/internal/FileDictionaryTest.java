package io.icebergcdc.sink.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

class FileDictionaryTest {

  private static final String A = "s3://bucket/db/t/data/00000-0-aaaa-00001.parquet";
  private static final String B = "s3://bucket/db/t/data/00001-0-bbbb-00001.parquet";

  @Test
  void namesAreShortStableAndResolveBack() {
    FileDictionary dictionary = new FileDictionary(List.of(), 2, 1);
    String a = dictionary.nameOf(A);
    assertThat(a).startsWith("#").hasSizeLessThan(5);
    assertThat(dictionary.nameOf(A)).isEqualTo(a);
    assertThat(dictionary.locationOf(a)).isEqualTo(A);
    dictionary.remove(a);
    assertThat(dictionary.locationOf(a)).isNull();
  }

  @Test
  void namesStayUniqueAcrossSubtasksRestoresAndRescaling() {
    Set<String> seen = new HashSet<>();
    List<FileDictionary.Entry> union = new ArrayList<>();
    // Two subtasks name files, are restored from the union of their entries, and name more; then
    // three subtasks are restored from that union and name more again.
    for (int[] round : new int[][] {{2, 10}, {2, 10}, {3, 10}}) {
      int parallelism = round[0];
      List<FileDictionary.Entry> next = new ArrayList<>();
      for (int subtask = 0; subtask < parallelism; subtask++) {
        FileDictionary dictionary = new FileDictionary(union, parallelism, subtask);
        for (int i = 0; i < round[1]; i++) {
          String name = dictionary.nameOf("file-" + seen.size() + "-" + subtask + "-" + i);
          assertThat(seen.add(name)).as("name %s given twice", name).isTrue();
        }
        next.addAll(dictionary.entriesToSnapshot());
      }
      // Every entry of a file is written back by exactly one subtask.
      assertThat(next.stream().filter(e -> !e.location().isEmpty()).toList())
          .doesNotHaveDuplicates()
          .hasSize(seen.size());
      union = next;
    }
  }

  @Test
  void retainDropsFilesThatLeftTheTableButKeepsOwnFiles() {
    FileDictionary dictionary = new FileDictionary(List.of(), 1, 0);
    String a = dictionary.nameOf(A);
    String b = dictionary.nameOf(B);
    String c = dictionary.nameOf("/warehouse/c.parquet");
    assertThat(dictionary.retain(Set.of(A)::contains, Set.of(c))).isEqualTo(1);
    assertThat(dictionary.locationOf(a)).isEqualTo(A);
    assertThat(dictionary.locationOf(b)).isNull();
    assertThat(dictionary.locationOf(c)).isEqualTo("/warehouse/c.parquet");
  }

  @Test
  void theNumberOfAnEntryDroppedIsNotGivenAgainAfterAnyNumberOfRestores() {
    FileDictionary first = new FileDictionary(List.of(), 1, 0);
    String a = first.nameOf(A);
    String b = first.nameOf(B);
    // The files left the table (another engine rewrote it); index entries still name them.
    first.retain(location -> false, Set.of());
    List<FileDictionary.Entry> state = first.entriesToSnapshot();
    // Restored twice without a new file in between.
    state = new FileDictionary(state, 1, 0).entriesToSnapshot();
    FileDictionary third = new FileDictionary(state, 1, 0);
    String c = third.nameOf("/warehouse/new.parquet");
    assertThat(c).isNotIn(a, b);
    assertThat(third.locationOf(a)).isNull();
    assertThat(third.locationOf(b)).isNull();
  }

  @Test
  void entriesRoundTripThroughTheirSerializer() throws IOException {
    FileDictionary.Entry entry = new FileDictionary.Entry(1234, A);
    DataOutputSerializer out = new DataOutputSerializer(64);
    FileDictionary.EntrySerializer.INSTANCE.serialize(entry, out);
    assertThat(
            FileDictionary.EntrySerializer.INSTANCE.deserialize(
                new DataInputDeserializer(out.getCopyOfBuffer())))
        .isEqualTo(entry);
  }
}
