package io.icebergcdc.sink.internal;

import io.icebergcdc.dedup.Dedup;
import io.icebergcdc.dedup.TableScope;
import java.util.List;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.OperatorStateStore;
import org.apache.flink.api.common.typeinfo.Types;

/**
 * The operator state of one table's writer ({@link TableDeltaWriter}), named after its table's
 * {@link TableScope}; the keyed state is the dedup's.
 *
 * <ul>
 *   <li>{@code key-index-complete} (union): one flag per subtask, whether its index is complete (a
 *       key without an entry has no row). Their number is the parallelism that wrote them, and
 *       their presence says that the table's writer had state at all.
 *   <li>{@code own-data-files}: the data files this subtask wrote and may compact alone.
 *   <li>{@code files-shared-up-to} (union): the latest checkpoint before which the job was rescaled
 *       in place; the files named up to it are shared between subtasks.
 *   <li>{@code file-dictionary} (union): the names under which the index keeps data files.
 *   <li>{@code writer-subtasks} (union): per subtask whose writer had state, its index and the
 *       parallelism. A table that appeared while the job runs has a writer only on the subtasks its
 *       changes reached: a subtask without one in the restored state starts the table afresh, and a
 *       restore at another parallelism does not take the index as complete. Absent in the state of
 *       earlier versions, whose writers started on every subtask at once.
 *   <li>{@code started-empty} (union): per subtask, whether the table had no rows when the job's
 *       first writer of it started: then every row in it is one the job's writers wrote, and a
 *       subtask that never had a writer owns none.
 *   <li>{@code job-schema-id} (union): per subtask, the id of the table's schema its writer was
 *       built with (the id in the upper 32 bits, the subtask in the lower). A table that appeared
 *       while the job runs is built again from the catalog at a restore: in this schema, not the
 *       table's current one, so that its dedup's fingerprints and kept rows read as they were
 *       written. Absent in the state of earlier versions.
 *   <li>{@code keys-hashed-by-partition-spec} (union): per subtask, the id of the partition spec by
 *       which the writer's keys were hashed over the subtasks (a table distributed by partition),
 *       or {@link #BY_PRIMARY_KEY}. The keyed state's keys carry that hash, so a restore that would
 *       hash them otherwise is refused ({@link #checkKeysHashedAsRestored}). Absent in the state of
 *       earlier versions, whose writer of several tables hashed by primary key only, and whose
 *       writer of one table has a uid of its own per distribution.
 * </ul>
 */
final class WriterState {

  /** The operator state whose restored flags say that the table's writer had state. */
  private static final String INDEX_COMPLETE_STATE = "key-index-complete";

  private final ListState<Boolean> indexComplete;
  private final ListState<OwnDataFile> ownFiles;
  private final ListState<Long> sharedUpTo;
  private final ListState<FileDictionary.Entry> dictionary;
  private final ListState<Long> writerSubtasks;
  private final ListState<Boolean> startedEmpty;
  private final ListState<Long> jobSchema;
  private final ListState<Integer> hashedBySpec;
  private final boolean ofSeveralTables;
  private final int subtask;

  /** The entry of {@code keys-hashed-by-partition-spec} of a writer that hashes by primary key. */
  private static final int BY_PRIMARY_KEY = -1;

  private final int parallelism;

  private WriterState(OperatorStateStore store, TableScope scope, int subtask, int parallelism)
      throws Exception {
    this.subtask = subtask;
    this.parallelism = parallelism;
    writerSubtasks = store.getUnionListState(writerSubtasksDescriptor(scope));
    startedEmpty = store.getUnionListState(startedEmptyDescriptor(scope));
    indexComplete = store.getUnionListState(indexCompleteDescriptor(scope));
    ownFiles = store.getListState(ownFilesDescriptor(scope));
    sharedUpTo = store.getUnionListState(sharedUpToDescriptor(scope));
    dictionary = store.getUnionListState(dictionaryDescriptor(scope));
    jobSchema = store.getUnionListState(jobSchemaDescriptor(scope));
    hashedBySpec = store.getUnionListState(hashedBySpecDescriptor(scope));
    ofSeveralTables = scope != TableScope.WHOLE;
  }

  /** Registers the state of the table of {@code scope} for one subtask of the operator. */
  static WriterState register(
      OperatorStateStore store, TableScope scope, int subtask, int parallelism) throws Exception {
    return new WriterState(store, scope, subtask, parallelism);
  }

  /**
   * The tables whose writers' state a restored operator state holds, by the name of their {@link
   * TableScope}; some of them may have had their state forgotten ({@link #forget}) by an earlier
   * run.
   */
  static java.util.Set<String> restoredTables(OperatorStateStore store) {
    java.util.Set<String> tables = new java.util.TreeSet<>();
    String suffix = "/" + INDEX_COMPLETE_STATE;
    for (String name : store.getRegisteredStateNames()) {
      if (name.endsWith(suffix)) {
        tables.add(name.substring(0, name.length() - suffix.length()));
      }
    }
    return tables;
  }

  /**
   * The id of the table's schema that this subtask's writer was built with, which its dedup's
   * fingerprints hash and its awaiting rows are kept in, as the restored state holds it: the
   * subtask's own at the parallelism that wrote it; restored at another, the oldest of them (the
   * writers of a table taken in flight start at its first change on each subtask, in the schema it
   * has then). Null where the state holds none (a subtask that had no writer, or a state of an
   * earlier version): the table's current schema.
   */
  static Integer restoredJobSchema(
      OperatorStateStore store, TableScope scope, int subtask, int parallelism) throws Exception {
    java.util.Map<Integer, Integer> bySubtask = new java.util.HashMap<>();
    for (Long entry : store.getUnionListState(jobSchemaDescriptor(scope)).get()) {
      bySubtask.put(subtaskOf(entry), upperOf(entry));
    }
    if (bySubtask.isEmpty()) {
      return null;
    }
    int restoredParallelism = -1;
    for (Long writer : store.getUnionListState(writerSubtasksDescriptor(scope)).get()) {
      restoredParallelism = upperOf(writer);
    }
    if (restoredParallelism == parallelism) {
      return bySubtask.get(subtask);
    }
    return java.util.Collections.min(bySubtask.values());
  }

  /** Whether the table of {@code scope} has state in the restored operator state, not forgotten. */
  static boolean holdsState(OperatorStateStore store, TableScope scope) throws Exception {
    return store.getUnionListState(indexCompleteDescriptor(scope)).get().iterator().hasNext();
  }

  /**
   * Clears the operator state of the table of {@code scope}, which the job no longer writes: a
   * restore carries state that nothing claims into the next snapshots, and the table, added to the
   * job again, must start without state.
   */
  static void forget(OperatorStateStore store, TableScope scope) throws Exception {
    store.getUnionListState(indexCompleteDescriptor(scope)).clear();
    store.getListState(ownFilesDescriptor(scope)).clear();
    store.getUnionListState(sharedUpToDescriptor(scope)).clear();
    store.getUnionListState(dictionaryDescriptor(scope)).clear();
    store.getUnionListState(Dedup.tablePositionDescriptor(scope)).clear();
    store.getUnionListState(Dedup.truncatedAtDescriptor(scope)).clear();
    store.getUnionListState(writerSubtasksDescriptor(scope)).clear();
    store.getUnionListState(startedEmptyDescriptor(scope)).clear();
    store.getUnionListState(jobSchemaDescriptor(scope)).clear();
    store.getUnionListState(hashedBySpecDescriptor(scope)).clear();
  }

  /**
   * Refuses a restored state whose keys were hashed otherwise than this writer hashes them: by
   * primary key where it hashes by partition, by partition where it hashes by primary key, or by
   * another partition spec. The keyed state's keys carry their hash, so such a state would be
   * misread (a key's entry not found, its row written again beside the old one), not merely
   * redistributed.
   *
   * @param specId the id of the spec this writer hashes its keys by, or null where by primary key
   */
  void checkKeysHashedAsRestored(String table, Integer specId) throws Exception {
    java.util.Set<Integer> restored = new java.util.TreeSet<>();
    hashedBySpec.get().forEach(restored::add);
    if (restored.isEmpty()) {
      if (!ofSeveralTables) {
        // An earlier version's writer of one table: its uid says how its keys were hashed.
        return;
      }
      restored.add(BY_PRIMARY_KEY);
    }
    java.util.Set<Integer> now = java.util.Set.of(specId == null ? BY_PRIMARY_KEY : specId);
    if (!restored.equals(now)) {
      boolean specChanged = !restored.contains(BY_PRIMARY_KEY) && !now.contains(BY_PRIMARY_KEY);
      throw new io.icebergcdc.sink.RefusedRestoreException(
          "table "
              + table
              + ": the restored state hashed its keys over the writers "
              + hashing(restored)
              + ", this job hashes them "
              + hashing(now)
              + "; its state would be misread. "
              + (specChanged
                  ? "The table's partition spec changed since the state was written: start the"
                      + " job without state (its rows are loaded into the key index)"
                  : "Restore it into a job that hashes them as before (set --distribution, or"
                      + " sink.distribution, to what it was; a table's write.distribution-mode"
                      + " decides where it is not set), or start the job without state"));
    }
  }

  private static String hashing(java.util.Set<Integer> specs) {
    return specs.equals(java.util.Set.of(BY_PRIMARY_KEY))
        ? "by primary key"
        : "by partition (spec " + specs.iterator().next() + ")";
  }

  /**
   * Whether the restored state holds this subtask's writer of the table: each subtask whose writer
   * had state writes one flag; at the parallelism that wrote them, a subtask without a writer then
   * (of a table that appeared while the job ran) has none, and starts without state.
   */
  boolean restored() throws Exception {
    if (!indexComplete.get().iterator().hasNext()) {
      return false;
    }
    java.util.Set<Long> writers = restoredWriters();
    return writers.isEmpty()
        || restoredParallelism() != parallelism
        || writers.contains(pack(subtask, parallelism));
  }

  /**
   * Whether the restored index is complete for this subtask's keys: every subtask that wrote the
   * restored state had a complete index, and, restored at another parallelism, every subtask then
   * had a writer of the table, or the table had no rows when the job's first writer of it started
   * (else the keys of a subtask without one could have rows no index knows).
   */
  boolean restoredIndexComplete() throws Exception {
    boolean complete = true;
    boolean any = false;
    for (Boolean flag : indexComplete.get()) {
      complete &= flag;
      any = true;
    }
    java.util.Set<Long> writers = restoredWriters();
    int restoredParallelism = restoredParallelism();
    boolean everySubtask =
        writers.isEmpty()
            || restoredParallelism == parallelism
            || writers.size() == restoredParallelism
            || restoredStartedEmpty();
    return any && complete && everySubtask;
  }

  /** The parallelism that wrote the restored state. */
  int restoredParallelism() throws Exception {
    for (Long writer : writerSubtasks.get()) {
      return upperOf(writer);
    }
    // Written before the subtasks were recorded: one flag per subtask.
    int subtasks = 0;
    for (Boolean ignored : indexComplete.get()) {
      subtasks++;
    }
    return subtasks;
  }

  /** Whether a subtask that wrote the restored state saw the table start empty under the job. */
  boolean restoredStartedEmpty() throws Exception {
    for (Boolean flag : startedEmpty.get()) {
      if (flag) {
        return true;
      }
    }
    return false;
  }

  private java.util.Set<Long> restoredWriters() throws Exception {
    java.util.Set<Long> writers = new java.util.HashSet<>();
    for (Long writer : writerSubtasks.get()) {
      writers.add(writer);
    }
    return writers;
  }

  /**
   * A subtask's entry of a union state: a number of it (the parallelism, a schema id) in the upper
   * 32 bits, the subtask in the lower.
   */
  private static long pack(int subtask, int upper) {
    return ((long) upper << 32) | subtask;
  }

  private static int upperOf(long entry) {
    return (int) (entry >>> 32);
  }

  private static int subtaskOf(long entry) {
    return (int) (entry & 0xffffffffL);
  }

  /** The restored checkpoint up to which files are shared; -1 for none. */
  long restoredSharedUpTo() throws Exception {
    long upTo = -1;
    for (Long restored : sharedUpTo.get()) {
      upTo = Math.max(upTo, restored);
    }
    return upTo;
  }

  /** The restored own data files of this subtask's list (all subtasks' after a rescaling). */
  Iterable<OwnDataFile> restoredOwnFiles() throws Exception {
    return ownFiles.get();
  }

  /** The restored file dictionary, all subtasks' entries. */
  Iterable<FileDictionary.Entry> restoredDictionary() throws Exception {
    return dictionary.get();
  }

  /** Writes this subtask's state for a checkpoint. */
  void snapshot(
      boolean indexCompleteNow,
      boolean startedEmptyNow,
      long sharedUpToNow,
      List<OwnDataFile> ownFilesNow,
      List<FileDictionary.Entry> dictionaryNow,
      int jobSchemaId,
      Integer hashedBySpecId)
      throws Exception {
    jobSchema.update(List.of(pack(subtask, jobSchemaId)));
    hashedBySpec.update(List.of(hashedBySpecId == null ? BY_PRIMARY_KEY : hashedBySpecId));
    indexComplete.update(List.of(indexCompleteNow));
    writerSubtasks.update(List.of(pack(subtask, parallelism)));
    startedEmpty.update(List.of(startedEmptyNow));
    sharedUpTo.update(List.of(sharedUpToNow));
    ownFiles.update(ownFilesNow);
    dictionary.update(dictionaryNow);
  }

  // One descriptor each for the registration and for forgetting the state.

  private static ListStateDescriptor<Boolean> indexCompleteDescriptor(TableScope scope) {
    return new ListStateDescriptor<>(scope.stateName(INDEX_COMPLETE_STATE), Types.BOOLEAN);
  }

  private static ListStateDescriptor<Boolean> startedEmptyDescriptor(TableScope scope) {
    return new ListStateDescriptor<>(scope.stateName("started-empty"), Types.BOOLEAN);
  }

  private static ListStateDescriptor<Long> jobSchemaDescriptor(TableScope scope) {
    return new ListStateDescriptor<>(scope.stateName("job-schema-id"), Types.LONG);
  }

  private static ListStateDescriptor<Integer> hashedBySpecDescriptor(TableScope scope) {
    return new ListStateDescriptor<>(scope.stateName("keys-hashed-by-partition-spec"), Types.INT);
  }

  private static ListStateDescriptor<Long> writerSubtasksDescriptor(TableScope scope) {
    return new ListStateDescriptor<>(scope.stateName("writer-subtasks"), Types.LONG);
  }

  private static ListStateDescriptor<OwnDataFile> ownFilesDescriptor(TableScope scope) {
    return new ListStateDescriptor<>(
        scope.stateName("own-data-files"), OwnDataFile.Serializer.INSTANCE);
  }

  private static ListStateDescriptor<Long> sharedUpToDescriptor(TableScope scope) {
    return new ListStateDescriptor<>(scope.stateName("files-shared-up-to"), Types.LONG);
  }

  private static ListStateDescriptor<FileDictionary.Entry> dictionaryDescriptor(TableScope scope) {
    return new ListStateDescriptor<>(
        scope.stateName("file-dictionary"), FileDictionary.EntrySerializer.INSTANCE);
  }
}
