package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.typeutils.FormatVersionedSerializer;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Short names for the data files that the key index points into, so that each key's entry holds a
 * few characters instead of a location of some sixty: the location is most of the state per key.
 *
 * <p>A name is {@code #} and a number in base 36. Numbers are unique across the subtasks and their
 * restores: a subtask takes numbers congruent to its index modulo the parallelism, above every
 * number restored. The entries live in union operator state; every subtask restores all of them (a
 * key may move to any subtask on rescaling) and writes back those whose number is congruent to its
 * index, so that each entry is written once. Several names may stand for one location (each subtask
 * names the files it meets when it loads the index from the table); that is harmless.
 *
 * <p>A name without its entry (the entry was dropped because its file left the table) resolves to
 * null: the key's row position is then unknown, and the writer deletes it by key instead. Its
 * number is never given again, though index entries may still hold the name: each subtask also
 * writes the highest number it knows, as an entry without a location, so that the numbers of
 * dropped entries stay taken across any number of restores.
 */
final class FileDictionary {

  private static final String PREFIX = "#";

  private final Map<String, String> locations = new HashMap<>();
  private final Map<String, String> names = new HashMap<>();
  private final int parallelism;
  private final int subtask;
  private long next;

  /** The highest number restored or given; -1 for none. */
  private long highest;

  /**
   * @param restored the entries of all subtasks, as union state restores them
   */
  FileDictionary(Iterable<Entry> restored, int parallelism, int subtask) {
    this.parallelism = parallelism;
    this.subtask = subtask;
    long max = -1;
    for (Entry entry : restored) {
      max = Math.max(max, entry.id());
      if (entry.location().isEmpty()) {
        // A high-water mark, not a file.
        continue;
      }
      String name = name(entry.id());
      if (locations.putIfAbsent(name, entry.location()) == null) {
        names.putIfAbsent(entry.location(), name);
      }
    }
    highest = max;
    long first = max + 1;
    next = first + Math.floorMod(subtask - first, parallelism);
  }

  /** The name of the file at {@code location}, given one if it has none yet. */
  String nameOf(String location) {
    String name = names.get(location);
    if (name == null) {
      name = name(next);
      highest = Math.max(highest, next);
      next += parallelism;
      names.put(location, name);
      locations.put(name, location);
    }
    return name;
  }

  /** The location that {@code name} stands for, or null if its entry was dropped. */
  String locationOf(String name) {
    return locations.get(name);
  }

  /** Drops the entry of {@code name}: no key points into its file any more. */
  void remove(String name) {
    String location = locations.remove(name);
    if (location != null && name.equals(names.get(location))) {
      names.remove(location);
    }
  }

  /** Drops the entries of files that are not {@code live}, except those named in {@code keep}. */
  int retain(Predicate<String> live, Set<String> keep) {
    List<String> gone = new ArrayList<>();
    locations.forEach(
        (name, location) -> {
          if (!live.test(location) && !keep.contains(name)) {
            gone.add(name);
          }
        });
    gone.forEach(this::remove);
    return gone.size();
  }

  int size() {
    return locations.size();
  }

  /** The entries this subtask writes to state, and the highest number it knows. */
  List<Entry> entriesToSnapshot() {
    List<Entry> entries = new ArrayList<>();
    if (highest >= 0) {
      entries.add(new Entry(highest, ""));
    }
    locations.forEach(
        (name, location) -> {
          long id = Long.parseLong(name.substring(PREFIX.length()), 36);
          if (Math.floorMod(id, parallelism) == subtask) {
            entries.add(new Entry(id, location));
          }
        });
    return entries;
  }

  private static String name(long id) {
    return PREFIX + Long.toString(id, 36);
  }

  /** A name's number and the location it stands for. */
  record Entry(long id, String location) {}

  /** Serializes {@link Entry}s. Format version 1: the number, then the location. */
  static final class EntrySerializer extends FormatVersionedSerializer<Entry> {

    private static final long serialVersionUID = 1L;

    static final int FORMAT_VERSION_1 = 1;

    static final EntrySerializer INSTANCE = new EntrySerializer();

    @Override
    protected int currentFormat() {
      return FORMAT_VERSION_1;
    }

    @Override
    protected void writeFields(Entry value, DataOutputView out) throws IOException {
      out.writeLong(value.id());
      out.writeUTF(value.location());
    }

    @Override
    protected Entry readFields(int format, DataInputView in) throws IOException {
      if (format != FORMAT_VERSION_1) {
        throw unknownFormat(format);
      }
      return new Entry(in.readLong(), in.readUTF());
    }

    @Override
    protected String describe() {
      return "the key index's file dictionary";
    }

    @Override
    public TypeSerializerSnapshot<Entry> snapshotConfiguration() {
      return new EntrySerializerSnapshot();
    }
  }

  /** Snapshot of {@link EntrySerializer}. */
  public static final class EntrySerializerSnapshot
      extends FormatVersionedSerializer.Snapshot<Entry> {
    public EntrySerializerSnapshot() {
      super(EntrySerializer.INSTANCE);
    }
  }
}
