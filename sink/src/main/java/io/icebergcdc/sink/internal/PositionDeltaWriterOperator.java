package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.RowKey;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.ContentFileCodec;
import io.icebergcdc.commit.PositionDeletes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.encryption.EncryptedOutputFile;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.RowDataWrapper;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.data.RowDataProjection;
import org.apache.iceberg.flink.sink.FlinkFileWriterFactory;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.util.PropertyUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes net changes as Parquet data files, and the updates and deletes of existing rows as
 * positions to delete, which the committer turns into position delete files or deletion vectors.
 *
 * <p><b>Place in the topology:</b> after the dedup, on the same keyed partitioning (chained, no
 * shuffle); before the committer.
 *
 * <p><b>State:</b> the key index, in keyed state: for each primary key with a live row, the data
 * file and position of that row. And, in union operator state, whether the index is complete: true
 * when the job first started on an empty table or loaded the index from the table (bootstrap); then
 * a key without an entry has no row, and its insert needs no delete at all.
 *
 * <p><b>Writing:</b> an upsert of a key with a known row deletes that row by position and writes
 * the new one, whose position becomes the key's entry; a delete deletes by position and clears the
 * entry. Where the index is not complete and a key has no entry, the row may exist unknown to the
 * index: it is deleted by an equality delete on the key, counted as a fallback. Open files are
 * completed in {@link #prepareSnapshotPreBarrier}, so the index in a checkpoint only points into
 * files handed to the committer for that checkpoint or earlier.
 *
 * <p><b>Threading:</b> Flink's task thread only.
 */
public final class PositionDeltaWriterOperator<K> extends AbstractStreamOperator<ChangeCommittable>
    implements OneInputStreamOperator<ChangeEvent, ChangeCommittable>, BoundedOneInput {

  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(PositionDeltaWriterOperator.class);
  private static final int ROWS_BETWEEN_SIZE_CHECKS = 1000;

  private final TableLoader tableLoader;
  private final ChangeSchema schema;
  private final ChangeKeySelector<K> keySelector;
  private final boolean bootstrap;
  private final java.util.HashMap<String, String> writeProperties;

  private transient Table table;
  private transient String tablePrefix;
  private transient ValueState<RowLocation> index;
  private transient ListState<Boolean> indexCompleteState;
  private transient boolean indexComplete;

  /**
   * Without checkpoints (a bounded job), the bootstrapped index until each key is first changed;
   * null otherwise.
   */
  private transient Map<K, RowLocation> loadedWithoutState;

  private transient FlinkFileWriterFactory writerFactory;
  private transient OutputFileFactory outputFiles;
  private transient PartitionSpec spec;
  private transient PartitionKey partitionKey;
  private transient RowDataWrapper wrapper;
  private transient RowDataProjection keyProjection;
  private transient long targetFileSize;
  private transient Map<PartitionKey, OpenDataFile> openFiles;
  private transient List<DataFile> completedFiles;
  private transient Map<PartitionKey, EqualityDeleteWriter<RowData>> equalityDeletes;
  private transient Map<String, List<Long>> positionDeletes;
  private transient long fallbacks;
  private transient long insertsThatUpdated;
  private transient long deletesOfNothing;
  private transient Counter dataFilesWritten;
  private transient Counter equalityFallbacks;

  public PositionDeltaWriterOperator(
      TableLoader tableLoader,
      ChangeSchema schema,
      ChangeKeySelector<K> keySelector,
      boolean bootstrap,
      Map<String, String> writeProperties) {
    this.tableLoader = tableLoader;
    this.schema = schema;
    this.keySelector = keySelector;
    this.bootstrap = bootstrap;
    this.writeProperties = new java.util.HashMap<>(writeProperties);
  }

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    tableLoader.open();
    table = tableLoader.loadTable();
    tablePrefix = table.location().endsWith("/") ? table.location() : table.location() + "/";
    index =
        context
            .getKeyedStateStore()
            .getState(new ValueStateDescriptor<>("key-index", RowLocationSerializer.INSTANCE));
    indexCompleteState =
        context
            .getOperatorStateStore()
            .getUnionListState(new ListStateDescriptor<>("key-index-complete", Types.BOOLEAN));
    if (context.isRestored()) {
      boolean complete = true;
      boolean any = false;
      for (Boolean flag : indexCompleteState.get()) {
        complete &= flag;
        any = true;
      }
      indexComplete = any && complete;
    } else if (table.currentSnapshot() == null) {
      indexComplete = true;
    } else if (bootstrap) {
      if (!getRuntimeContext().isCheckpointingEnabled()) {
        // No checkpoint will hold the index, and batch execution keeps keyed state only for the
        // key at hand: the loaded index is kept aside and read per key instead.
        loadedWithoutState = new HashMap<>();
      }
      bootstrapIndex();
      indexComplete = true;
    } else {
      indexComplete = false;
    }
  }

  /** Loads the location of every live row of the keys this subtask owns. */
  private void bootstrapIndex() throws IOException {
    int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
    int parallelism = getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks();
    int maxParallelism = getRuntimeContext().getTaskInfo().getMaxNumberOfParallelSubtasks();
    Schema tableSchema = table.schema();
    Schema projection =
        TypeUtil.join(
            TypeUtil.select(tableSchema, tableSchema.identifierFieldIds()),
            new Schema(MetadataColumns.FILE_PATH, MetadataColumns.ROW_POSITION));
    int[] keyPositions = schema.keyPositions();
    long start = System.nanoTime();
    long loaded = 0;
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table).project(projection).build()) {
      for (Record row : rows) {
        GenericRowData keyRow = KeyRows.fromRecord(tableSchema, keyPositions, row);
        RowKey rowKey = schema.keyOf(keyRow);
        K key = keySelector.keyOf(rowKey, keyRow);
        if (KeyGroupRangeAssignment.assignKeyToParallelOperator(key, maxParallelism, parallelism)
            != subtask) {
          continue;
        }
        RowLocation location =
            new RowLocation(
                stored(row.getField(MetadataColumns.FILE_PATH.name()).toString()),
                (Long) row.getField(MetadataColumns.ROW_POSITION.name()));
        if (loadedWithoutState != null) {
          loadedWithoutState.put(key, location);
        } else {
          setCurrentKey(key);
          index.update(location);
        }
        loaded++;
      }
    }
    LOG.info(
        "Loaded the key index of table {} for subtask {}: {} keys in {} ms",
        table.name(),
        subtask,
        loaded,
        (System.nanoTime() - start) / 1_000_000L);
  }

  @Override
  public void open() throws Exception {
    super.open();
    spec = table.spec();
    Schema tableSchema = table.schema();
    Schema keySchema = TypeUtil.select(tableSchema, tableSchema.identifierFieldIds());
    RowType keyType = FlinkSchemaUtil.convert(keySchema);
    Map<String, String> properties =
        io.icebergcdc.sink.WriteProperties.effective(
            table.name(), table.properties(), writeProperties);
    writerFactory =
        new FlinkFileWriterFactory.Builder(table)
            .dataFileFormat(FileFormat.PARQUET)
            .dataSchema(tableSchema)
            .dataFlinkType(schema.rowType())
            .deleteFileFormat(FileFormat.PARQUET)
            .equalityFieldIds(
                tableSchema.identifierFieldIds().stream().mapToInt(Integer::intValue).toArray())
            .equalityDeleteRowSchema(keySchema)
            .equalityDeleteFlinkType(keyType)
            .writerProperties(properties)
            .build();
    outputFiles =
        OutputFileFactory.builderFor(
                table,
                getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                getRuntimeContext().getTaskInfo().getAttemptNumber())
            .format(FileFormat.PARQUET)
            .build();
    targetFileSize =
        PropertyUtil.propertyAsLong(
            properties,
            TableProperties.WRITE_TARGET_FILE_SIZE_BYTES,
            TableProperties.WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT);
    partitionKey = new PartitionKey(spec, tableSchema);
    wrapper = new RowDataWrapper(schema.rowType(), tableSchema.asStruct());
    keyProjection = RowDataProjection.create(tableSchema, keySchema);
    openFiles = new HashMap<>();
    completedFiles = new ArrayList<>();
    equalityDeletes = new HashMap<>();
    positionDeletes = new HashMap<>();
    dataFilesWritten = getMetricGroup().counter("dataFilesWritten");
    equalityFallbacks = getMetricGroup().counter("equalityFallbacks");
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    indexCompleteState.update(List.of(indexComplete));
  }

  @Override
  public void processElement(StreamRecord<ChangeEvent> element) throws Exception {
    ChangeEvent event = element.getValue();
    RowLocation location = index.value();
    if (location == null && loadedWithoutState != null) {
      @SuppressWarnings("unchecked")
      K key = (K) getCurrentKey();
      location = loadedWithoutState.remove(key);
    }
    RowData keyRow = event.keyRow();
    if (location != null) {
      positionDeletes
          .computeIfAbsent(absolute(location.file()), f -> new ArrayList<>())
          .add(location.position());
    } else if (!indexComplete) {
      deleteByKey(keyRow);
    }
    // The dedup labels a change by what it knows of the key; the index may know better (a key
    // loaded from the table, never changed by this job): the counts are corrected here.
    if (location != null && event.operation() == Operation.INSERT) {
      insertsThatUpdated++;
    } else if (location == null && indexComplete && event.operation() == Operation.DELETE) {
      deletesOfNothing++;
    }
    if (event.operation().isUpsert()) {
      index.update(write(event.after()));
    } else if (location != null) {
      index.clear();
    }
  }

  private RowLocation write(RowData row) throws IOException {
    partitionKey.partition(wrapper.wrap(row));
    OpenDataFile file = openFiles.get(partitionKey);
    if (file == null) {
      PartitionKey partition = partitionKey.copy();
      EncryptedOutputFile output = outputFiles.newOutputFile(spec, partition);
      file =
          new OpenDataFile(
              writerFactory.newDataWriter(output, spec, partition),
              output.encryptingOutputFile().location());
      openFiles.put(partition, file);
    }
    file.writer.write(row);
    RowLocation location = new RowLocation(file.storedLocation, file.rows++);
    if (file.rows % ROWS_BETWEEN_SIZE_CHECKS == 0 && file.writer.length() >= targetFileSize) {
      file.writer.close();
      completedFiles.add(file.writer.toDataFile());
      openFiles.remove(partitionKey);
    }
    return location;
  }

  private void deleteByKey(RowData keyRow) throws IOException {
    partitionKey.partition(wrapper.wrap(keyRow));
    EqualityDeleteWriter<RowData> writer = equalityDeletes.get(partitionKey);
    if (writer == null) {
      PartitionKey partition = partitionKey.copy();
      writer =
          writerFactory.newEqualityDeleteWriter(
              outputFiles.newOutputFile(spec, partition), spec, partition);
      equalityDeletes.put(partition, writer);
    }
    writer.write(keyProjection.wrap(keyRow));
    fallbacks++;
    equalityFallbacks.inc();
  }

  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    super.prepareSnapshotPreBarrier(checkpointId);
    flush();
  }

  @Override
  public void endInput() throws Exception {
    flush();
  }

  private void flush() throws IOException {
    for (OpenDataFile file : openFiles.values()) {
      file.writer.close();
      completedFiles.add(file.writer.toDataFile());
    }
    openFiles.clear();
    List<DeleteFile> deletes = new ArrayList<>();
    for (EqualityDeleteWriter<RowData> writer : equalityDeletes.values()) {
      writer.close();
      deletes.add(writer.toDeleteFile());
    }
    equalityDeletes.clear();
    ChangeStats corrections =
        new ChangeStats(-insertsThatUpdated, insertsThatUpdated, -deletesOfNothing, 0, 0, 0, null);
    insertsThatUpdated = 0;
    deletesOfNothing = 0;
    if (completedFiles.isEmpty() && deletes.isEmpty() && positionDeletes.isEmpty()) {
      if (!corrections.isEmpty()) {
        output.collect(new StreamRecord<>(ChangeCommittable.ofStats(corrections)));
      }
      return;
    }
    Map<String, long[]> positions = new HashMap<>();
    positionDeletes.forEach(
        (file, list) -> positions.put(file, list.stream().mapToLong(Long::longValue).toArray()));
    Map<Integer, PartitionSpec> specs = table.specs();
    dataFilesWritten.inc(completedFiles.size());
    output.collect(
        new StreamRecord<>(
            new ChangeCommittable(
                ContentFileCodec.encodeAll(completedFiles, specs),
                ContentFileCodec.encodeAll(deletes, specs),
                List.of(),
                corrections,
                PositionDeletes.of(positions),
                fallbacks)));
    completedFiles.clear();
    positionDeletes.clear();
    fallbacks = 0;
  }

  @Override
  public void close() throws Exception {
    try {
      if (openFiles != null) {
        for (OpenDataFile file : openFiles.values()) {
          abort(file.writer, file.location);
        }
        openFiles.clear();
      }
      if (equalityDeletes != null) {
        for (EqualityDeleteWriter<RowData> writer : equalityDeletes.values()) {
          writer.close();
        }
        equalityDeletes.clear();
      }
    } finally {
      tableLoader.close();
      super.close();
    }
  }

  /** Closes and removes a file that belongs to no checkpoint. */
  private void abort(DataWriter<RowData> writer, String location) {
    try {
      writer.close();
      table.io().deleteFile(location);
    } catch (IOException | UncheckedIOException e) {
      LOG.warn("Cannot remove the unfinished data file {}", location, e);
    }
  }

  /**
   * The form in which the index keeps a data file's location: relative to the table's location
   * where the file lies below it (most of a location is that prefix, and the index keeps one per
   * key), else whole. A relative form never starts with '/' nor holds a scheme, a whole one does.
   */
  private String stored(String location) {
    return location.startsWith(tablePrefix) ? location.substring(tablePrefix.length()) : location;
  }

  private String absolute(String stored) {
    return stored.startsWith("/") || stored.contains(":/") ? stored : tablePrefix + stored;
  }

  private final class OpenDataFile {
    final DataWriter<RowData> writer;
    final String location;
    final String storedLocation;
    long rows;

    OpenDataFile(DataWriter<RowData> writer, String location) {
      this.writer = writer;
      this.location = location;
      this.storedLocation = stored(location);
    }
  }
}
