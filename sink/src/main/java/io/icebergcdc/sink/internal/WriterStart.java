package io.icebergcdc.sink.internal;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * How one table's writer subtask starts, decided from its restored operator state ({@link
 * WriterState}) and the table: whether its key index is complete (a key without an entry then has
 * no row), is to be loaded from the table's rows (bootstrap), or neither; which of the restored
 * files are its own to compact; and up to which checkpoint the files of this job are shared after a
 * rescaling in place.
 *
 * @param indexComplete whether the index knows every live row of this subtask's keys, or will once
 *     bootstrapped
 * @param startedEmpty whether the table had no rows when the job's first writer of it started
 * @param bootstrapDue whether the index is to be loaded from the table's rows once every table's
 *     state is restored
 * @param sharedUpTo the latest checkpoint up to which the files this job named are shared by the
 *     writer subtasks (after a rescaling in place); -1 for none
 * @param lastCompletedCheckpoint the latest checkpoint known complete: the restored one, or that of
 *     the latest own file restored
 * @param ownFiles the restored data files this subtask wrote at this parallelism, which it compacts
 */
record WriterStart(
    boolean indexComplete,
    boolean startedEmpty,
    boolean bootstrapDue,
    long sharedUpTo,
    long lastCompletedCheckpoint,
    List<OwnDataFile> ownFiles) {

  /**
   * @param contextRestored whether the operator was restored (from a checkpoint or savepoint)
   * @param restoredCheckpoint the checkpoint it was restored from, if any
   * @param state the writer's operator state, registered
   * @param tableEmpty whether the table has no snapshot now
   * @param bootstrap whether the index of a writer that starts without its state on a table with
   *     rows is loaded from the table ({@code sink.bootstrap-index})
   */
  static WriterStart of(
      boolean contextRestored,
      OptionalLong restoredCheckpoint,
      WriterState state,
      boolean tableEmpty,
      boolean bootstrap,
      int subtask,
      int parallelism)
      throws Exception {
    boolean restored = contextRestored && state.restored();
    boolean startedEmpty =
        (contextRestored && state.restoredStartedEmpty()) || (!restored && tableEmpty);
    long lastCompleted = restoredCheckpoint.orElse(-1L);
    if (!restored) {
      if (tableEmpty) {
        return new WriterStart(true, startedEmpty, false, -1, lastCompleted, List.of());
      }
      // A job without state, or the first run of this table's writer in a restored job (a table
      // added to it, or a restore that left the writer's state unclaimed): with bootstrap, the
      // rows already in the table are loaded into the index once every table's state is restored.
      return new WriterStart(bootstrap, startedEmpty, bootstrap, -1, lastCompleted, List.of());
    }
    List<OwnDataFile> own = new ArrayList<>();
    long latestFile = -1;
    for (OwnDataFile file : state.restoredOwnFiles()) {
      // A file of the end of input is of no checkpoint: the restored one, whose state holds it (a
      // savepoint that drained the input), carried it.
      long checkpoint =
          file.checkpoint() == SnapshotSummaryKeys.END_OF_INPUT_CHECKPOINT_ID
              ? restoredCheckpoint.orElse(-1L)
              : file.checkpoint();
      latestFile = Math.max(latestFile, checkpoint);
      if (file.subtask() == subtask && file.parallelism() == parallelism) {
        own.add(file);
        // Restored from a completed checkpoint: the commits of its files are complete, or are
        // made by the committer's restore before any later one.
        lastCompleted = Math.max(lastCompleted, checkpoint);
      }
    }
    long sharedUpTo = Math.max(-1, state.restoredSharedUpTo());
    if (state.restoredParallelism() != parallelism) {
      // Rescaled: every file named up to the restored checkpoint is shared now.
      sharedUpTo = Math.max(sharedUpTo, Math.max(restoredCheckpoint.orElse(-1L), latestFile));
    }
    return new WriterStart(
        state.restoredIndexComplete(), startedEmpty, false, sharedUpTo, lastCompleted, own);
  }
}
