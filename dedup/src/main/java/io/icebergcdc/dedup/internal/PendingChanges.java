package io.icebergcdc.dedup.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.cdc.typeutils.ChunkSizes;
import io.icebergcdc.cdc.typeutils.SourceSequenceCodec;
import io.icebergcdc.dedup.AppliedChange;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * The latest change accepted for each key since the last checkpoint, numbered from 1 in the order
 * the keys first came, kept as bytes in large reused chunks of memory rather than as objects.
 *
 * <p>A change accepted at the start of a checkpoint interval lives until its end. Kept as objects
 * (the event, its rows, key, sequence and their memory segments: about ten objects, 400 bytes a
 * key), every young collection of the interval copied them again, and promoted them into the old
 * generation, which grew and was collected in turn. Here a key's change is one record in a chunk
 * (its sequence, then the serialized event). A newer change of the same key appends a new record;
 * the space of the old one is reclaimed with all others when {@link #clear} empties the buffer at
 * the checkpoint. Chunks grow as {@link ChunkSizes} says, the large ones out of the young
 * generation's reach; they are kept for the next interval, except those the interval just ended did
 * not need.
 *
 * <p>Not thread-safe: Flink's task thread only.
 */
final class PendingChanges {

  private final TypeSerializer<ChangeEvent> serializer;

  /** What gives a change read back the rows of its table's current schema. */
  private java.util.function.UnaryOperator<ChangeEvent> fit =
      java.util.function.UnaryOperator.identity();

  private final DataOutputSerializer scratch = new DataOutputSerializer(512);
  private final DataInputDeserializer reader = new DataInputDeserializer();

  private final List<byte[]> chunks = new ArrayList<>();
  private long chunkBytes;

  /** The chunk records are being added to, and the bytes of it in use. */
  private int chunk;

  private int used;

  /**
   * The keys a table's pending changes start with room for: there are one for each table of each
   * dedup subtask, most of them small in a job of a whole database.
   */
  static final int INITIAL_KEYS = 16;

  /** Per key, by number minus one: its latest record, as chunk (high 32 bits) and offset. */
  private long[] records = new long[INITIAL_KEYS];

  /** Per key, objects the caller asked to keep with it (null where it keeps none). */
  private Object[] keys = new Object[INITIAL_KEYS];

  private AppliedChange[] priors = new AppliedChange[INITIAL_KEYS];

  private int size;

  private final BurstRoom keysRoom = new BurstRoom(INITIAL_KEYS);

  PendingChanges(TypeSerializer<ChangeEvent> serializer) {
    this.serializer = serializer;
  }

  /** Gives the changes read back from now on the rows of their table's current schema. */
  void useSchema(java.util.function.UnaryOperator<ChangeEvent> newFit) {
    this.fit = newFit;
  }

  /** Keys with a change pending. */
  int size() {
    return size;
  }

  /**
   * Adds the first change of a key since the last checkpoint, and returns the key's number.
   *
   * @param key the key object to give back at the flush, or null if it is not needed
   * @param prior what was known of the key before, or null if the caller reads it again later
   */
  int add(Object key, AppliedChange prior, ChangeEvent event) {
    if (size == records.length) {
      int capacity = size * 2;
      records = Arrays.copyOf(records, capacity);
      keys = Arrays.copyOf(keys, capacity);
      priors = Arrays.copyOf(priors, capacity);
    }
    records[size] = append(event);
    keys[size] = key;
    priors[size] = prior;
    return ++size;
  }

  /** Makes {@code event} the latest change of the key numbered {@code number}. */
  void replace(int number, ChangeEvent event) {
    records[number - 1] = append(event);
  }

  /** The sequence of the latest change of the key numbered {@code number}. */
  SourceSequence sequence(int number) {
    try {
      return SourceSequenceCodec.read(readerAt(number));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  Object key(int number) {
    return keys[number - 1];
  }

  AppliedChange prior(int number) {
    return priors[number - 1];
  }

  /** The latest change of the key numbered {@code number}; a new object. */
  ChangeEvent event(int number) {
    try {
      DataInputDeserializer in = readerAt(number);
      SourceSequenceCodec.read(in);
      return fit.apply(serializer.deserialize(in));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Forgets every pending change. Chunks the interval used are kept for the next one; those it did
   * not use (after a burst) are released, and the room for keys of a burst is given back once the
   * intervals after it held a small part of them.
   */
  void clear() {
    while (chunks.size() > chunk + 1) {
      chunkBytes -= chunks.remove(chunks.size() - 1).length;
    }
    int room = keysRoom.after(size, records.length);
    if (room != records.length) {
      records = new long[room];
      keys = new Object[room];
      priors = new AppliedChange[room];
    } else {
      Arrays.fill(keys, 0, size, null);
      Arrays.fill(priors, 0, size, null);
    }
    size = 0;
    chunk = 0;
    used = 0;
  }

  /** The keys there is room for without growing, for tests. */
  int room() {
    return records.length;
  }

  /** Bytes of the chunks held, used or kept for the next interval. */
  long chunkBytes() {
    return chunkBytes;
  }

  private DataInputDeserializer readerAt(int number) {
    long record = records[number - 1];
    byte[] bytes = chunks.get((int) (record >>> 32));
    int offset = (int) record;
    reader.setBuffer(bytes, offset, bytes.length - offset);
    return reader;
  }

  /** Puts a new chunk of {@code bytes} at {@code index}, the end or in place of a smaller one. */
  private void addChunk(int index, int bytes) {
    if (index == chunks.size()) {
      chunks.add(new byte[bytes]);
    } else {
      chunkBytes -= chunks.set(index, new byte[bytes]).length;
    }
    chunkBytes += bytes;
  }

  /** Writes a record of {@code event} and returns where it starts. */
  private long append(ChangeEvent event) {
    scratch.clear();
    try {
      SourceSequenceCodec.write(event.sequence(), scratch);
      serializer.serialize(event, scratch);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    int length = scratch.length();
    if (chunks.isEmpty()) {
      addChunk(chunks.size(), ChunkSizes.next(0, length));
    } else if (used + length > chunks.get(chunk).length) {
      int bytes = ChunkSizes.next(chunks.get(chunk).length, length);
      chunk++;
      used = 0;
      if (chunk == chunks.size() || chunks.get(chunk).length < length) {
        addChunk(chunk, bytes);
      }
    }
    System.arraycopy(scratch.getSharedBuffer(), 0, chunks.get(chunk), used, length);
    long record = ((long) chunk << 32) | used;
    used += length;
    return record;
  }
}
