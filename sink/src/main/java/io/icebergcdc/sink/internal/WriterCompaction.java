package io.icebergcdc.sink.internal;

import io.icebergcdc.commit.LiveFiles;
import io.icebergcdc.commit.PositionDeletes;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.flink.data.FlinkParquetReaders;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.parquet.Parquet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The compaction of one position-mode writer subtask: the data files it wrote with how many of
 * their rows it has deleted since (and, in memory, which, and the rows of the most recent ones),
 * the choice at each checkpoint of the files to move rows out of ({@link CompactionPlan}), and the
 * moving itself: each row of such a file that is live in the table and that its key's index entry
 * still points to is written again into the checkpoint's files and deleted in the old one by
 * position; an own file, all of whose keys are the subtask's, is then handed to the committer to
 * remove whole.
 *
 * <p>A checkpoint moves about as many rows as it writes otherwise (at least {@value #MIN_ROWS});
 * the last file may pass that budget, so a file larger than it is compacted too, alone. The table
 * is read for it when an own file reached the compaction ratio, and otherwise at most once per
 * survey interval, to find small files and shared ones: the first at the first checkpoint after the
 * subtask wrote the table, restored it or loaded its index (an interval after that checkpoint where
 * the table had no snapshot at the start, {@link #startsOnAnEmptyTable}), and then only while the
 * subtask writes it or deletes its rows by position (files it wrote within an interval before a
 * survey were too young for it) or the last survey ran out of budget. A job of hundreds of tables,
 * most of them idle at any time, reads only those it writes. What a deleted row's file tells
 * (whether it left the table) is read again where the last read is older than an interval.
 *
 * <p><b>Threading:</b> the writer's task thread, but for {@link #readAhead}, on another thread
 * while the task thread waits for it.
 */
final class WriterCompaction {

  private static final Logger LOG = LoggerFactory.getLogger(WriterCompaction.class);
  static final long MIN_ROWS = 100_000;
  private static final int MAX_OWN_FILES = 10_000;

  /** What compaction needs of its writer: the table, its key index and the checkpoint's files. */
  interface Writer {
    /** The table as it is now; throws if the catalog cannot be reached. */
    Table refreshedTable();

    /** The location of a file that the key index names {@code stored}, or null. */
    String locationOf(String stored);

    /**
     * Moves the row at {@code position} of the data file at {@code location} if its key is this
     * subtask's and its entry still points there: writes it again into the checkpoint's files,
     * moves the entry and deletes the old row by position.
     */
    Move move(RowData row, String location, long position) throws Exception;

    /** Whether another writer subtask of this job wrote the file and compacts it. */
    boolean writtenByAnotherSubtask(String location);

    /** The own file the index names {@code stored} is compacted: no key points into it now. */
    void compacted(String stored);
  }

  /** What {@link Writer#move} did with a row. */
  enum Move {
    MOVED,
    /** The key is this subtask's, but its row is elsewhere (updated or deleted since). */
    NOT_CURRENT,
    /** The key is another subtask's. */
    OTHER_SUBTASK
  }

  private final Writer writer;
  private Schema rowSchema;
  private final double ratio;
  private final long smallFileSize;
  private final Duration surveyInterval;
  private final int parallelism;
  private final java.util.function.LongSupplier clock;

  /** This subtask's own data files, by location as the index stores it, in order of writing. */
  private final Map<String, OwnFile> ownFiles = new LinkedHashMap<>();

  /** The own files written in this run whose checkpoint is not known complete, oldest first. */
  private final java.util.ArrayDeque<OwnFile> unconfirmed = new java.util.ArrayDeque<>();

  /** The table's live files as compaction last read them; null before the first read. */
  private LiveFiles lastLive;

  /** The snapshot {@link #lastLive} is of; -1 for none. */
  private long liveSnapshotId = -1;

  /** When {@link #lastLive} was read, or a read of it failed, by the clock. */
  private long liveReadAt;

  /** Whether {@link #liveReadAt} holds a time: the table was read, or a read of it failed. */
  private boolean liveReadTried;

  /**
   * The latest checkpoint known complete when {@link #lastLive} was read: own files confirmed three
   * or more checkpoints before it ({@link OwnFile#committedBy}) were committed by then, and missing
   * from it only if they left the table.
   */
  private long liveReadCompleted = -1;

  /**
   * Whether the subtask wrote rows or deleted rows by position since the last checkpoint, or
   * started on rows it may share ({@link #surveyOnceAfterStart}).
   */
  private boolean activeSinceCheckpoint;

  /**
   * When the subtask last completed a file of the table, or, by the clock at the checkpoint after,
   * did what {@link #activeSinceCheckpoint} tells; meaningful only if {@link #everActive}.
   */
  private long lastActivity;

  /** Whether {@link #lastActivity} holds a time. */
  private boolean everActive;

  /** Whether the last survey left candidates for want of budget. */
  private boolean surveyLeftWork;

  /** The rows of this subtask's most recent own files. */
  private RecentRows recentRows;

  /** Shared files in the table that this subtask has moved its rows out of. */
  private final Set<String> movedOut = new HashSet<>();

  /** Own files compacted at this checkpoint, for the committer to remove. */
  private final List<String> compacted = new ArrayList<>();

  /** The positions of the rows moved at this checkpoint, by data file. */
  private final Map<String, Positions> movedRows = new HashMap<>();

  private final Counter dataFilesCompacted;
  private final Counter rowsCompacted;
  private final Counter dataFilesCompactedFromMemory;
  private final Counter tableSurveys;

  /**
   * When the table was last surveyed, by the clock ({@link System#nanoTime()}, whose values may be
   * negative); meaningful only if {@link #surveyedBefore}.
   */
  private long lastSurvey;

  /**
   * Whether the table was surveyed in this run, or its first survey was found needless ({@link
   * #startsOnAnEmptyTable}): {@link #lastSurvey} holds a time.
   */
  private boolean surveyedBefore;

  /** Whether the table had no snapshot when the writer started ({@link #startsOnAnEmptyTable}). */
  private boolean startedEmpty;

  /** See {@link #refreshes}. */
  private long refreshes;

  /** The read made ahead for a checkpoint ({@link #readAhead}); null for none. */
  private ReadAhead readAhead;

  /** See {@link #readsAheadUsed}. */
  private long readsAheadUsed;

  WriterCompaction(
      Writer writer,
      Schema rowSchema,
      RecentRows recentRows,
      double ratio,
      long smallFileSize,
      Duration surveyInterval,
      int parallelism,
      MetricGroup metrics,
      java.util.function.LongSupplier clock) {
    this.writer = writer;
    this.rowSchema = rowSchema;
    this.recentRows = recentRows;
    this.ratio = ratio;
    this.smallFileSize = smallFileSize;
    this.surveyInterval = surveyInterval;
    this.parallelism = parallelism;
    this.clock = clock;
    this.dataFilesCompacted = metrics.counter("dataFilesCompacted");
    this.rowsCompacted = metrics.counter("rowsCompacted");
    this.dataFilesCompactedFromMemory = metrics.counter("dataFilesCompactedFromMemory");
    this.tableSurveys = metrics.counter("tableSurveys");
  }

  /**
   * Reads and writes the rows of {@code schema} from now on, a table's schema that changed while
   * the job runs, and holds them in {@code rows}: the rows held until now are of the schema before.
   */
  void useSchema(Schema schema, RecentRows rows) {
    this.rowSchema = schema;
    this.recentRows = rows;
  }

  /**
   * Tracks an own file again after a restore from a state whose checkpoints up to {@code
   * completedCheckpoint} are complete, the file's among them.
   */
  void restored(OwnDataFile file, long completedCheckpoint) {
    OwnFile own = new OwnFile(file);
    own.confirm(completedCheckpoint);
    ownFiles.put(file.file(), own);
  }

  /** Checkpoint {@code checkpointId} is complete: the own files it carries are confirmed. */
  void checkpointComplete(long checkpointId) {
    while (!unconfirmed.isEmpty() && unconfirmed.peekFirst().checkpoint() <= checkpointId) {
      unconfirmed.pollFirst().confirm(checkpointId);
    }
  }

  /**
   * Has the table surveyed at the next checkpoint whatever the subtask writes: the writer started
   * on rows of the table it may share with the other subtasks (its index loaded from the table's
   * files, or its state restored, after a rescaling too), or own files from before.
   */
  void surveyOnceAfterStart() {
    activeSinceCheckpoint = true;
  }

  /**
   * {@code table} had no snapshot when the writer started without state of it (as a job creates its
   * tables). Nothing a survey finds at the first checkpoint after the subtask's first write is a
   * file it could move rows out of: its key index points only into its own files, none of which is
   * known to be committed yet. So the first survey comes an interval after that checkpoint, as if
   * one had run then, and the surveys of a job's new tables stay spread as their first writes were.
   * The table as it is now, without files, is compaction's first read of it, which {@link
   * #leftTheTable} answers from for an interval from the writer's start, as it would from a
   * survey's.
   *
   * @param lastCompletedCheckpoint the latest checkpoint known complete
   */
  void startsOnAnEmptyTable(Table table, long lastCompletedCheckpoint) {
    startedEmpty = true;
    read(table, lastCompletedCheckpoint);
  }

  /** Tracks a file the subtask has just written, whose rows went through {@link #written}. */
  void completed(OwnDataFile file) {
    // (Files of the end of input, of no checkpoint, are never confirmed; a bounded job without
    // checkpoints confirms none.)
    if (ownFiles.size() >= MAX_OWN_FILES) {
      // The oldest file that never reached the ratio is left to table maintenance.
      forget(ownFiles.keySet().iterator().next());
    }
    long now = clock.getAsLong();
    OwnFile own = new OwnFile(file, now);
    ownFiles.put(file.file(), own);
    if (file.checkpoint() != SnapshotSummaryKeys.END_OF_INPUT_CHECKPOINT_ID) {
      if (unconfirmed.size() >= MAX_OWN_FILES) {
        // Never confirmed, it is never taken as left: deleted by position, as before it was known.
        unconfirmed.pollFirst();
      }
      unconfirmed.addLast(own);
    }
    lastActivity = now;
    everActive = true;
  }

  /** Holds a row the subtask wrote at {@code position} of the file it names {@code file}. */
  void written(String file, long position, RowData row) {
    recentRows.add(file, position, row);
    activeSinceCheckpoint = true;
  }

  /**
   * Counts a row of the subtask's file {@code file} that it deleted; a row of another file only
   * makes the next survey due (it may take a shared file past the ratio).
   */
  void deleted(String file, long position) {
    OwnFile own = ownFiles.get(file);
    if (own != null) {
      own.deleted(position);
    }
    activeSinceCheckpoint = true;
  }

  /**
   * Whether the data file at {@code location}, which the key index names {@code file}, had left the
   * table when compaction last read it: another writer replaced or removed it. Its rows then live
   * elsewhere (a rewrite's copies), and the file itself may be gone by the commit (snapshot expiry
   * deletes it), so a change of one of its keys is deleted by key. One of this subtask's own files
   * only if it is missing from a read made when its commit was known (three checkpoints or more
   * after its own had completed), as a survey finds it: the file is then no longer tracked as own.
   * The table is read for it where compaction has not read it for longer than a survey interval (a
   * table this subtask left idle); false where it has never been read and cannot be now.
   *
   * @param lastCompletedCheckpoint the latest checkpoint whose commit is known to be complete
   */
  boolean leftTheTable(String file, String location, long lastCompletedCheckpoint) {
    long now = clock.getAsLong();
    if (!liveReadTried || now - liveReadAt > surveyInterval.toNanos()) {
      try {
        read(refreshedTable(), lastCompletedCheckpoint);
      } catch (RuntimeException e) {
        // As for a survey: the catalog out of reach for a while. Tried again an interval later.
        liveReadAt = now;
        liveReadTried = true;
        LOG.warn("The table cannot be refreshed, its files are as last read: {}", e.toString());
      }
    }
    if (lastLive == null || lastLive.dataFile(location) != null) {
      return false;
    }
    OwnFile own = ownFiles.get(file);
    if (own == null) {
      return true;
    }
    if (own.committedBy(liveReadCompleted)) {
      // Not in the table when it was read, though committed by then: replaced by another writer
      // (or its commit was lost), as a survey finds. Its rows held in memory stay, for other
      // changes of its keys that lack values, until they are evicted.
      ownFiles.remove(file);
      return true;
    }
    return false;
  }

  /**
   * Reads the live files of {@code table} as it is now, unless they are of the last read's, with
   * checkpoint {@code lastCompletedCheckpoint} known complete.
   */
  LiveFiles read(Table table, long lastCompletedCheckpoint) {
    org.apache.iceberg.Snapshot current = table.currentSnapshot();
    long snapshotId = current == null ? -1 : current.snapshotId();
    if (lastLive == null || snapshotId != liveSnapshotId) {
      lastLive = LiveFiles.of(table, current);
      liveSnapshotId = snapshotId;
    }
    liveReadAt = clock.getAsLong();
    liveReadTried = true;
    liveReadCompleted = lastCompletedCheckpoint;
    return lastLive;
  }

  /** The names of the own files, whose entries the key index's dictionary keeps. */
  Set<String> ownFileNames() {
    return ownFiles.keySet();
  }

  /** The own files as state holds them. */
  List<OwnDataFile> state() {
    List<OwnDataFile> files = new ArrayList<>(ownFiles.size());
    for (OwnFile file : ownFiles.values()) {
      files.add(file.state());
    }
    return files;
  }

  /** How many data files compaction copied from the rows held in memory. */
  long dataFilesCompactedFromMemory() {
    return dataFilesCompactedFromMemory.getCount();
  }

  /** The table as it is now, from the catalog: the writer's, counted. */
  private Table refreshedTable() {
    refreshes++;
    return writer.refreshedTable();
  }

  /** How many times compaction tried to refresh the table from the catalog, for tests. */
  long refreshes() {
    return refreshes;
  }

  /** How many times compaction used a read made ahead, for tests. */
  long readsAheadUsed() {
    return readsAheadUsed;
  }

  /** How many times the table was read for small and shared files. */
  long tableSurveys() {
    return tableSurveys.getCount();
  }

  /** Whether this checkpoint compacted any own file. */
  boolean compactedAny() {
    return !compacted.isEmpty();
  }

  /** The own files compacted at this checkpoint, which the commit removes; then forgets them. */
  List<String> takeCompacted() {
    List<String> files = new ArrayList<>(compacted);
    compacted.clear();
    return files;
  }

  /** The positions of the rows moved at this checkpoint, by data file; then forgets them. */
  PositionDeletes takeMovedRows() {
    PositionDeletes rows = Positions.of(movedRows);
    movedRows.clear();
    return rows;
  }

  /**
   * Moves the live rows out of the files {@link CompactionPlan} picks.
   *
   * @param checkpointId the checkpoint being prepared
   * @param lastCompletedCheckpoint the latest checkpoint whose commit is known to be complete
   * @param rowsWritten the rows the checkpoint wrote otherwise, the budget
   */
  void compact(long checkpointId, long lastCompletedCheckpoint, long rowsWritten) throws Exception {
    ReadAhead ahead =
        readAhead != null && readAhead.checkpointId() == checkpointId ? readAhead : null;
    readAhead = null;
    boolean due = ownFileAtRatio(lastCompletedCheckpoint);
    long now = clock.getAsLong();
    boolean survey = surveyDue(now);
    if (activeSinceCheckpoint) {
      lastActivity = now;
      everActive = true;
      activeSinceCheckpoint = false;
    }
    if (startedEmpty && !surveyedBefore && everActive) {
      // The first checkpoint after the first write to a table that started without rows.
      lastSurvey = now;
      surveyedBefore = true;
    }
    if (!due && !survey) {
      return;
    }
    // Compaction copies what the table holds now: only files still in it, without the rows that
    // anyone (another engine too) has deleted from them. A read ahead was made for this
    // checkpoint once the operator's tables' changes were written, after the last completed
    // checkpoint was known: as good a read (what changes meanwhile, the commit checks again).
    Table table;
    try {
      if (ahead != null && ahead.refreshFailure() != null) {
        throw ahead.refreshFailure();
      }
      table = ahead != null ? ahead.table() : refreshedTable();
    } catch (RuntimeException e) {
      // A catalog out of reach for a while: the committer waits for it; compaction, which can
      // always wait, tries again at a later checkpoint.
      LOG.warn("The table cannot be refreshed, compaction waits: {}", e.toString());
      return;
    }
    if (survey) {
      // A refresh only for an own file at the ratio does not look for small and shared files.
      lastSurvey = now;
      surveyedBefore = true;
      surveyLeftWork = false;
      tableSurveys.inc();
    }
    LiveFiles live = ahead != null ? ahead.live() : read(table, lastCompletedCheckpoint);
    if (ahead != null) {
      readsAheadUsed++;
    }
    for (OwnFile file : new ArrayList<>(ownFiles.values())) {
      String location = writer.locationOf(file.file());
      if ((location == null || live.dataFile(location) == null)
          && file.committedBy(lastCompletedCheckpoint)) {
        // Not in the table: replaced by another writer (or its commit was lost). Its rows held in
        // memory stay, for changes of its keys that lack values, until they are evicted.
        ownFiles.remove(file.file());
      } else if (location != null && live.hasEqualityDeletes(location)) {
        // Rows deleted by key, by another writer: left to table maintenance.
        forget(file.file());
      }
    }
    movedOut.removeIf(location -> live.dataFile(location) == null);
    List<CompactionPlan.Candidate> candidates =
        CompactionPlan.of(
            ownFiles.values(),
            writer::locationOf,
            live,
            table.specs(),
            ratio,
            // Small files are merged at a survey, once they stayed small for an interval: under
            // updates most fresh files soon lose enough rows to be compacted instead.
            survey ? smallFileSize : 0,
            file -> file.writtenBefore(now, surveyInterval.toNanos()),
            lastCompletedCheckpoint,
            writer::writtenByAnotherSubtask,
            movedOut::contains,
            parallelism);
    long budget = Math.max(MIN_ROWS, rowsWritten);
    long moved = 0;
    int files = 0;
    int shared = 0;
    long fromMemory = dataFilesCompactedFromMemory.getCount();
    for (CompactionPlan.Candidate candidate : candidates) {
      if (moved >= budget) {
        surveyLeftWork |= survey;
        break;
      }
      moved += candidate.rows();
      if (candidate.own() != null) {
        if (compact(table, candidate.own(), candidate.location(), live)) {
          files++;
        }
      } else if (moveOut(table, candidate.location(), live) > 0) {
        shared++;
      }
    }
    if (files > 0 || shared > 0) {
      LOG.info(
          "Compacted {} data files ({} from memory) of table {} and moved rows out of {} shared"
              + " ones at checkpoint {} in {} ms",
          files,
          dataFilesCompactedFromMemory.getCount() - fromMemory,
          table.name(),
          shared,
          checkpointId,
          (clock.getAsLong() - now) / 1_000_000L);
    }
  }

  /** Whether an own file known committed has reached the compaction ratio. */
  private boolean ownFileAtRatio(long lastCompletedCheckpoint) {
    if (ratio < 1) {
      for (OwnFile file : ownFiles.values()) {
        if (file.checkpoint() <= lastCompletedCheckpoint && file.deleted() >= ratio * file.rows()) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * Whether a survey is due at a checkpoint at {@code now}: the activity since the last checkpoint
   * counted, as {@link #compact} then records it (the first checkpoint after the first write to a
   * table that started without rows standing for a survey).
   */
  private boolean surveyDue(long now) {
    boolean active = everActive || activeSinceCheckpoint;
    long activity = activeSinceCheckpoint ? now : lastActivity;
    boolean standsForOne = startedEmpty && !surveyedBefore && active;
    boolean surveyed = surveyedBefore || standsForOne;
    long last = standsForOne ? now : lastSurvey;
    long interval = surveyInterval.toNanos();
    return (ratio < 1 || smallFileSize > 0)
        && (!surveyed
            ? active
            : now - last >= interval
                // Idle since an interval before the last survey: it found all there is to find.
                && (surveyLeftWork || activity - last >= -interval));
  }

  /**
   * Whether {@link #compact} would read the table if called now, the checkpoint's net changes
   * written: an own file reached the ratio, or a survey is due. {@link #compact} decides again when
   * it runs: a read ahead it no longer needs is left unused (it does not happen: the time only
   * makes a survey more due), and a read it needs but was not made ahead it makes itself (a survey
   * that fell due meanwhile).
   */
  boolean readsTableNow(long lastCompletedCheckpoint) {
    return ownFileAtRatio(lastCompletedCheckpoint) || surveyDue(clock.getAsLong());
  }

  /**
   * Refreshes the table and reads its live files now, for {@link #compact} at checkpoint {@code
   * checkpointId}: on a thread of the operator's for reads (several tables read at once) while the
   * task thread waits for all of them, so nothing else touches this compaction meanwhile. A refresh
   * that fails makes compaction wait, as one of its own would; where the read of the manifests
   * fails, {@link #compact} refreshes and reads the table itself.
   */
  void readAhead(long checkpointId, long lastCompletedCheckpoint) {
    Table table;
    try {
      table = refreshedTable();
    } catch (RuntimeException e) {
      readAhead = new ReadAhead(checkpointId, null, null, e);
      return;
    }
    try {
      readAhead = new ReadAhead(checkpointId, table, read(table, lastCompletedCheckpoint), null);
    } catch (RuntimeException e) {
      LOG.info("Reading the table ahead failed; compaction reads it itself: {}", e.toString());
    }
  }

  /**
   * What {@link #readAhead} read for a checkpoint: the table refreshed and its live files, or the
   * refresh's failure.
   */
  private record ReadAhead(
      long checkpointId, Table table, LiveFiles live, RuntimeException refreshFailure) {}

  /**
   * Writes the live rows of {@code own} again and, if all were the subtask's, hands the file to the
   * committer to remove.
   *
   * @return whether the file was compacted
   */
  private boolean compact(Table table, OwnFile own, String location, LiveFiles live)
      throws Exception {
    Iterable<RowData> held = recentRows.rowsOf(own.file(), own.rows());
    Moved moved;
    try {
      moved = moveRows(table, location, own, held, live);
    } catch (NotFoundException e) {
      LOG.warn(
          "Data file {} of table {} is gone; it is no longer compacted by this writer",
          location,
          table.name(),
          e);
      forget(own.file());
      return false;
    }
    forget(own.file());
    rowsCompacted.inc(moved.rows);
    if (moved.otherSubtasks) {
      // Rows of keys another subtask owns stay where they are, and the file with them, until
      // that subtask moves them out too (a file shared after a rescaling, say).
      movedOut.add(location);
      return false;
    }
    compacted.add(location);
    writer.compacted(own.file());
    dataFilesCompacted.inc();
    if (held != null) {
      dataFilesCompactedFromMemory.inc();
    }
    return true;
  }

  /**
   * Moves the live rows of this subtask's keys out of a shared data file: the commit deletes them
   * there by position, and removes the file with the last of its live rows.
   *
   * @return how many rows were moved
   */
  private long moveOut(Table table, String location, LiveFiles live) throws Exception {
    movedOut.add(location);
    try {
      long rows = moveRows(table, location, null, null, live).rows;
      rowsCompacted.inc(rows);
      return rows;
    } catch (NotFoundException e) {
      LOG.warn("Data file {} of table {} is gone", location, table.name(), e);
      return 0;
    }
  }

  /**
   * @param own the subtask's own file, or null for a shared one
   * @param held the file's rows held in memory, or null to read the file
   */
  private Moved moveRows(
      Table table, String location, OwnFile own, Iterable<RowData> held, LiveFiles live)
      throws Exception {
    List<DeleteFile> positional = live.positionDeletesOf(location);
    PositionDeleteIndex deleted =
        positional.isEmpty()
            ? null
            : new BaseDeleteLoader(f -> table.io().newInputFile(f.location()))
                .loadPositionDeletes(positional, location);
    Moved moved = new Moved();
    Positions positions = null;
    // Read as this job writes rows (by field id, whatever columns the table has gained since).
    try (CloseableIterable<RowData> reader =
        held != null
            ? CloseableIterable.withNoopClose(held)
            : Parquet.read(table.io().newInputFile(location))
                .project(rowSchema)
                .createReaderFunc(
                    fileSchema -> FlinkParquetReaders.buildReader(rowSchema, fileSchema))
                .build()) {
      long position = 0;
      for (RowData row : reader) {
        // Rows this subtask deleted are not live; those committed are in the table's deletes too,
        // the others need no lookup of their keys either.
        if ((deleted == null || !deleted.isDeleted(position))
            && (own == null || !own.deletedHere(position))) {
          Move move = writer.move(row, location, position);
          if (move == Move.OTHER_SUBTASK) {
            moved.otherSubtasks = true;
          } else if (move == Move.MOVED) {
            if (positions == null) {
              positions = new Positions();
              movedRows.put(location, positions);
            }
            positions.add(position);
            moved.rows++;
          }
        }
        position++;
      }
    }
    return moved;
  }

  /** Stops tracking an own file: it was compacted, left the table, or is left to maintenance. */
  private void forget(String file) {
    ownFiles.remove(file);
    recentRows.forget(file);
  }

  /** What moving the rows out of a file did. */
  private static final class Moved {
    long rows;
    boolean otherSubtasks;
  }
}
