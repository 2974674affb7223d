package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.commit.OwnedFileNames;
import io.icebergcdc.commit.TableThreads;
import io.icebergcdc.dedup.NetChanges.Location;
import io.icebergcdc.sink.CdcTables;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.apache.flink.api.common.TaskInfo;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.encryption.EncryptedOutputFile;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.RowDataWrapper;
import org.apache.iceberg.flink.data.RowDataProjection;
import org.apache.iceberg.flink.sink.FlinkFileWriterFactory;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.util.PropertyUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The files one writer subtask of a table writes between two checkpoints, through Iceberg's Flink
 * file writers: Parquet data files, one open per partition and completed at the table's target
 * size; equality deletes on the key, where a row's position is not known; and the positions of rows
 * to delete, by data file, which the committer turns into deletion vectors or position delete
 * files. {@link #take} completes them all and hands them on, for one checkpoint.
 *
 * <p>Files are named by Iceberg's {@link OutputFileFactory}, with the operation id of {@link
 * OwnedFileNames} where the sink has a tag: the job, the sink and the first checkpoint that can
 * hand the file on ({@link #setEpoch}).
 *
 * <p><b>Threading:</b> Flink's task thread, but for {@link #closeOpenFiles}.
 */
final class DeltaFiles {

  private static final Logger LOG = LoggerFactory.getLogger(DeltaFiles.class);
  private static final int ROWS_BETWEEN_SIZE_CHECKS = 1000;

  /** What the writer learns of each row written and each data file completed. */
  interface Listener {

    /** {@code row} was written at {@code position} of the data file named {@code stored}. */
    void written(String stored, long position, RowData row);

    /** The data file named {@code stored} was completed with {@code rows} rows. */
    void completed(String stored, long rows) throws IOException;
  }

  /** The files of one checkpoint, completed. */
  record Taken(
      List<DataFile> dataFiles,
      List<DeleteFile> deletes,
      Map<String, Positions> positionDeletes,
      long fallbacks) {

    boolean isEmpty() {
      return dataFiles.isEmpty() && deletes.isEmpty() && positionDeletes.isEmpty();
    }
  }

  private final Supplier<Table> table;
  private final TaskInfo task;
  private final String jobId;
  private final String sinkTag;
  private final UnaryOperator<String> stored;
  private final Listener listener;

  private final long targetFileSize;

  // The layout of the rows written: the table's schema and spec when the writer opened, or when
  // the table's schema last changed while the job runs (useSchema).
  private ChangeSchema schema;
  private PartitionSpec spec;
  private FlinkFileWriterFactory writerFactory;
  private PartitionKey partitionKey;

  /**
   * The specs of data files the equality deletes do not reach: other specs of the table's data
   * files whose partition does not follow from the key; empty where they reach every row. Null
   * until {@link #equalityDeletes} is made.
   */
  private List<Integer> unreachedSpecs;

  /** The schema of the rows written now, whose keys the equality deletes take. */
  private Schema tableSchema;

  private RowDataWrapper wrapper;
  private RowDataProjection keyProjection;
  private final Map<String, String> properties;

  private final Map<PartitionKey, OpenDataFile> openFiles = new HashMap<>();
  private final List<DataFile> completedFiles = new ArrayList<>();

  /** Whether {@link #closeOpenFiles} is under way or failed: {@link #take} then refuses. */
  private boolean closingIncomplete;

  /**
   * The locations of the equality delete files opened since the last {@link #take}, closed or not,
   * which {@link #abort} removes: a file whose close failed is known by its location only.
   */
  private final List<String> deletesNotHandedOn = new ArrayList<>();

  /**
   * The equality delete files written now: a key's delete goes to its partition in the table's spec
   * and in each other spec of which it holds data files ({@link
   * io.icebergcdc.commit.EqualityDeleteSpecs}). Made at the first delete by key (or check), which
   * the position writer rarely needs: finding those specs reads the table's manifest list.
   */
  private io.icebergcdc.commit.EqualityDeleteFiles<RowData> equalityDeletes;

  private final List<DeleteFile> completedDeletes = new ArrayList<>();
  private Map<String, Positions> positionDeletes = new HashMap<>();
  private long fallbacks;

  private final Counter dataFilesWritten;
  private final Counter equalityFallbacks;

  private OutputFileFactory outputFiles;

  /** The first checkpoint that can hand on the files written now ({@link OwnedFileNames}). */
  private long epoch;

  /** The epoch that {@link #outputFiles} names files for. */
  private long outputFilesEpoch;

  /**
   * @param table the table as its writer last loaded it
   * @param schema the changes' schema, whose rows are written
   * @param properties the table's effective write properties
   * @param task the writer subtask
   * @param jobId the job's id, in the names of the files of a sink with a tag
   * @param sinkTag the sink's tag in the names of its files, or null for none
   * @param stored the name under which the writer's key index keeps a file's location
   * @param listener told of each row written and each data file completed
   * @param metrics where {@code dataFilesWritten} and {@code equalityFallbacks} are counted
   */
  DeltaFiles(
      Supplier<Table> table,
      ChangeSchema schema,
      Map<String, String> properties,
      TaskInfo task,
      String jobId,
      String sinkTag,
      UnaryOperator<String> stored,
      Listener listener,
      MetricGroup metrics) {
    this.table = table;
    this.task = task;
    this.jobId = jobId;
    this.sinkTag = sinkTag;
    this.stored = stored;
    this.listener = listener;
    this.properties = properties;
    targetFileSize =
        PropertyUtil.propertyAsLong(
            properties,
            TableProperties.WRITE_TARGET_FILE_SIZE_BYTES,
            TableProperties.WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT);
    Table current = table.get();
    // The rows' own schema, not the table's current one: a writer starts in the table's schema
    // where that is later than the job's (RowSchemas#startAt), so the two are the same but for a
    // table changed since by someone else, whose files written now still read by field id.
    layout(current, schema.schema(), schema);
    dataFilesWritten = metrics.counter("dataFilesWritten");
    equalityFallbacks = metrics.counter("equalityFallbacks");
  }

  /** Writes the rows of {@code tableSchema}, given as {@code rows}, with the table's spec. */
  private void layout(Table current, Schema tableSchema, ChangeSchema rows) {
    this.schema = rows;
    spec = current.spec();
    try {
      // Checked when the job is built; checked again here for a spec another engine changed since.
      CdcTables.checkPartitionColumnsAreKeyColumns(current.schema(), spec);
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(
          "table "
              + current.name()
              + " is now partitioned by spec "
              + spec.specId()
              + " "
              + spec.fields()
              + ", which the job cannot write: "
              + e.getMessage()
              + " (a key's delete would go to another partition than its row); give the table a"
              + " spec of key columns",
          e);
    }
    Schema keySchema = TypeUtil.select(tableSchema, tableSchema.identifierFieldIds());
    RowType keyType = FlinkSchemaUtil.convert(keySchema);
    writerFactory =
        new FlinkFileWriterFactory.Builder(current)
            .dataFileFormat(FileFormat.PARQUET)
            .dataSchema(tableSchema)
            .dataFlinkType(rows.rowType())
            .deleteFileFormat(FileFormat.PARQUET)
            .equalityFieldIds(
                tableSchema.identifierFieldIds().stream().mapToInt(Integer::intValue).toArray())
            .equalityDeleteRowSchema(keySchema)
            .equalityDeleteFlinkType(keyType)
            .writerProperties(io.icebergcdc.commit.ParquetWriterProperties.of(properties))
            .build();
    partitionKey = new PartitionKey(spec, tableSchema);
    this.tableSchema = tableSchema;
    equalityDeletes = null;
    unreachedSpecs = null;
    wrapper = new RowDataWrapper(rows.rowType(), tableSchema.asStruct());
    keyProjection = RowDataProjection.create(tableSchema, keySchema);
  }

  /**
   * Fails where the equality deletes would not reach every row: the table holds data files of
   * another partition spec than its current one, by columns outside the primary key, and has no
   * unpartitioned spec to write deletes that reach them. For a writer that deletes every row by
   * key.
   */
  void checkDeletesReachEveryRow() {
    equalityDeletes();
    if (!unreachedSpecs.isEmpty()) {
      Table current = table.get();
      throw new IllegalStateException(
          "table "
              + current.name()
              + " holds data files of partition spec "
              + unreachedSpecs
              + " besides its current spec "
              + spec.specId()
              + ", partitioned by columns outside the primary key: an equality delete, which"
              + " Iceberg applies only to the files of its own spec and partition, cannot be put"
              + " in the partition of their rows; rewrite those files into spec "
              + spec.specId()
              + " (rewrite_data_files) or write the table with sink.delete-mode = POSITION");
    }
  }

  /** The equality delete files written now, made at the first call after a layout. */
  private io.icebergcdc.commit.EqualityDeleteFiles<RowData> equalityDeletes() {
    if (equalityDeletes == null) {
      Table current = table.get();
      io.icebergcdc.commit.EqualityDeleteSpecs deleteSpecs =
          io.icebergcdc.commit.EqualityDeleteSpecs.of(
              current, spec, tableSchema.identifierFieldIds());
      unreachedSpecs = deleteSpecs.unreached();
      if (!unreachedSpecs.isEmpty()) {
        LOG.warn(
            "Table {} holds data files of partition spec {}, partitioned by columns outside the"
                + " primary key: a delete by key (equality delete) cannot reach their rows; rewrite"
                + " them into spec {}",
            current.name(),
            unreachedSpecs,
            spec.specId());
      }
      equalityDeletes =
          new io.icebergcdc.commit.EqualityDeleteFiles<>(
              deleteSpecs.specs(),
              tableSchema,
              (deleteSpec, partition) -> {
                EncryptedOutputFile output = outputFiles().newOutputFile(deleteSpec, partition);
                deletesNotHandedOn.add(output.encryptingOutputFile().location());
                return writerFactory.newEqualityDeleteWriter(output, deleteSpec, partition);
              });
    }
    return equalityDeletes;
  }

  /** The schema of the rows written now. */
  ChangeSchema schema() {
    return schema;
  }

  /**
   * Writes the rows of {@code rows}, a schema of {@code current} that changed while the job runs,
   * from now on: the files open now are completed, and handed on with the others at {@link #take}.
   */
  void useSchema(Table current, ChangeSchema rows) throws IOException {
    for (OpenDataFile file : openFiles.values()) {
      complete(file);
    }
    openFiles.clear();
    if (equalityDeletes != null) {
      equalityDeletes.close(completedDeletes);
    }
    layout(current, rows.schema(), rows);
  }

  /** The files written from now on are handed on with checkpoint {@code epoch} or later. */
  void setEpoch(long epoch) {
    this.epoch = epoch;
  }

  /** Writes {@code row}; returns where, as the key index keeps it. */
  Location write(RowData row) throws IOException {
    partitionKey.partition(wrapper.wrap(row));
    OpenDataFile file = openFiles.get(partitionKey);
    if (file == null) {
      PartitionKey partition = partitionKey.copy();
      EncryptedOutputFile output = outputFiles().newOutputFile(spec, partition);
      file =
          new OpenDataFile(
              writerFactory.newDataWriter(output, spec, partition),
              output.encryptingOutputFile().location());
      openFiles.put(partition, file);
    }
    file.writer.write(row);
    listener.written(file.storedLocation, file.rows, row);
    Location location = new Location(file.storedLocation, file.rows++);
    if (file.rows % ROWS_BETWEEN_SIZE_CHECKS == 0 && file.writer.length() >= targetFileSize) {
      complete(file);
      openFiles.remove(partitionKey);
    }
    return location;
  }

  /** Deletes the row at {@code position} of the data file at {@code location}. */
  void deletePosition(String location, long position) {
    positionDeletes.computeIfAbsent(location, f -> new Positions()).add(position);
  }

  /** Deletes the row of the key of {@code keyRow}, whose position is not known, by key. */
  void deleteByKey(RowData keyRow) throws IOException {
    deleteKey(keyRow);
    fallbacks++;
    equalityFallbacks.inc();
  }

  /**
   * Deletes the row of the key of {@code keyRow}, wherever it is, by an equality delete on the key:
   * how a writer in equality mode deletes the rows of committed checkpoints, not counted as a
   * fallback.
   */
  void deleteKey(RowData keyRow) throws IOException {
    equalityDeletes().delete(wrapper.wrap(keyRow), keyProjection.wrap(keyRow));
  }

  /** Whether data or equality delete files are open, which {@link #take} completes. */
  boolean hasOpenFiles() {
    return !openFiles.isEmpty() || (equalityDeletes != null && equalityDeletes.hasOpenFiles());
  }

  /**
   * Closes the open data and equality delete files, whose completion {@link #take} then only
   * records: on object storage a file is uploaded as it closes, so an operator of several tables
   * closes each table's on threads of its own while its task thread goes on with other tables, and
   * either operator closes a table's data files of several partitions on {@code threads}, several
   * at once (its equality deletes one after the other). On any one thread, while the task thread
   * touches nothing of these files. After a failure here {@link #take} refuses to hand on anything
   * (a data file's writer closed again would not say it failed).
   */
  void closeOpenFiles(TableThreads threads) throws Exception {
    closingIncomplete = true;
    (openFiles.size() > 1 ? threads : TableThreads.none())
        .forEach(openFiles.values(), file -> file.writer.close());
    if (equalityDeletes != null) {
      equalityDeletes.close(completedDeletes);
    }
    closingIncomplete = false;
  }

  /** Completes the open files and hands on all files written since the last time. */
  Taken take() throws IOException {
    if (closingIncomplete) {
      throw new IllegalStateException(
          "the files of table " + table.get().name() + " failed to close: none is handed on");
    }
    for (OpenDataFile file : openFiles.values()) {
      complete(file);
    }
    openFiles.clear();
    if (equalityDeletes != null) {
      equalityDeletes.close(completedDeletes);
    }
    List<DeleteFile> deletes = new ArrayList<>(completedDeletes);
    completedDeletes.clear();
    deletesNotHandedOn.clear();
    Taken taken = new Taken(List.copyOf(completedFiles), deletes, positionDeletes, fallbacks);
    dataFilesWritten.inc(completedFiles.size());
    completedFiles.clear();
    positionDeletes = new HashMap<>();
    fallbacks = 0;
    return taken;
  }

  /**
   * Closes the open files and removes every file not handed on ({@link #take}), which belongs to no
   * checkpoint: the open data files, those completed since, and the equality deletes.
   */
  void abort() {
    for (OpenDataFile file : openFiles.values()) {
      try {
        file.writer.close();
      } catch (IOException | RuntimeException e) {
        LOG.warn("Cannot close the unfinished data file {}", file.location, e);
      }
      remove(file.location);
    }
    openFiles.clear();
    for (DataFile file : completedFiles) {
      remove(file.location());
    }
    completedFiles.clear();
    completedDeletes.clear();
    if (equalityDeletes != null) {
      try {
        equalityDeletes.close(new ArrayList<>());
      } catch (IOException | RuntimeException e) {
        LOG.warn("Cannot close the unfinished equality delete files", e);
      }
    }
    for (String location : deletesNotHandedOn) {
      remove(location);
    }
    deletesNotHandedOn.clear();
  }

  private void remove(String location) {
    try {
      table.get().io().deleteFile(location);
    } catch (RuntimeException e) {
      LOG.warn("Cannot remove the file {}, which no checkpoint holds", location, e);
    }
  }

  private void complete(OpenDataFile file) throws IOException {
    file.writer.close();
    completedFiles.add(file.writer.toDataFile());
    listener.completed(file.storedLocation, file.rows);
  }

  /** The factory of the files written now, which names them for {@link #epoch}. */
  private OutputFileFactory outputFiles() {
    if (outputFiles == null || (sinkTag != null && outputFilesEpoch != epoch)) {
      OutputFileFactory.Builder builder =
          OutputFileFactory.builderFor(
                  table.get(), task.getIndexOfThisSubtask(), task.getAttemptNumber())
              .format(FileFormat.PARQUET);
      if (sinkTag != null) {
        builder.operationId(OwnedFileNames.operationId(jobId, sinkTag, epoch));
      }
      outputFiles = builder.build();
      outputFilesEpoch = epoch;
    }
    return outputFiles;
  }

  private final class OpenDataFile {
    final DataWriter<RowData> writer;
    final String location;
    final String storedLocation;
    long rows;

    OpenDataFile(DataWriter<RowData> writer, String location) {
      this.writer = writer;
      this.location = location;
      this.storedLocation = stored.apply(location);
    }
  }
}
