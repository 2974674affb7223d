package io.icebergcdc.sink;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.MetricsConfig;
import org.apache.iceberg.OverwriteFiles;
import org.apache.iceberg.PartitionData;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotChanges;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.mapping.MappingUtil;
import org.apache.iceberg.mapping.NameMapping;
import org.apache.iceberg.mapping.NameMappingParser;
import org.apache.iceberg.parquet.ParquetSchemaUtil;
import org.apache.iceberg.parquet.ParquetUtil;
import org.apache.iceberg.util.SnapshotUtil;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.schema.MessageType;

/**
 * Adopts existing Parquet files into an Iceberg table without copying them ({@code add_files}):
 * lists the Parquet files under a location through the table's file IO, reads each one's footer for
 * its schema and statistics, and adds them all in one append snapshot whose summary says how many
 * files came from where ({@link SnapshotSummaryKeys#ADDED_FILES}, {@link
 * SnapshotSummaryKeys#ADDED_FILES_SOURCE}). The table references the files where they are: they
 * must stay there, and expiring or deleting the table's data removes them.
 *
 * <p>Every file is checked before anything is committed, and one refused file refuses them all: its
 * columns must read as the table's ({@link FileSchemaCheck}: by field id, or by name through the
 * table's name mapping for files written without Iceberg field ids), it must not be in the table
 * already, and its partition must be known ({@link FilePartition}: from {@code col=value}
 * directories for identity partitions, else from its statistics). When a file has no field ids and
 * the table no name mapping, the same commit sets the table's {@code schema.name-mapping.default}
 * to the mapping by the current column names, which readers need to read such files.
 *
 * <p>The commit is validated from the snapshot the files were checked against: if data files were
 * added since (another {@code add_files}, a streaming job's commit), the snapshots that added them
 * are read, and one of the files among them refuses the adoption; otherwise it is committed again
 * from the new snapshot. Two adoptions of the same files at the same time commit them once.
 */
public final class AddFiles {

  private final Table table;
  private final FileIO io;
  private final NameMapping mapping;
  private final MetricsConfig metricsConfig;
  private final FileSchemaCheck schemaCheck;
  private final FilePartition partitions;

  /** How many times a commit is validated again after other commits added data files. */
  static final int COMMIT_ATTEMPTS = 10;

  /** Whether a file read so far has no Iceberg field ids. */
  private boolean withoutIds;

  /** Run once the files are checked, before the commit: a test's concurrent commit. */
  private Runnable afterChecks = () -> {};

  private AddFiles(Table table) {
    this.table = table;
    this.io = table.io();
    this.mapping = nameMapping(table);
    this.metricsConfig = MetricsConfig.forTable(table);
    this.schemaCheck = new FileSchemaCheck(table, mapping);
    this.partitions = new FilePartition(table.spec(), table.schema());
  }

  /**
   * What an adoption added.
   *
   * @param files the number of data files added
   * @param rows their rows
   * @param snapshotId the snapshot that added them
   */
  public record Result(int files, long rows, long snapshotId) {}

  /**
   * Adds the Parquet files under {@code location} to the table in one snapshot.
   *
   * @param location a directory or S3 prefix (read recursively) or one {@code .parquet} file, as an
   *     absolute path or a URI such as {@code file:///data/events} or {@code s3://bucket/events}
   * @throws IllegalArgumentException naming the file and why, when a file does not fit the table or
   *     is in it already, or when there is no Parquet file; nothing is committed then
   */
  public static Result adopt(Table table, String location) {
    if (location == null || location.isBlank()) {
      throw new IllegalArgumentException(
          "give the location of the Parquet files to add to table " + table.name());
    }
    String given = location.trim();
    if (!given.startsWith("/") && CatalogDefinition.schemeOf(given) == null) {
      throw new IllegalArgumentException(
          "the location "
              + given
              + " is relative; give an absolute path or a URI such as file:///data/events or"
              + " s3://bucket/events");
    }
    table.refresh();
    return new AddFiles(table).add(given);
  }

  /** {@link #adopt}, running {@code afterChecks} between the files' checks and the commit. */
  static Result adopt(Table table, String location, Runnable afterChecks) {
    table.refresh();
    AddFiles adding = new AddFiles(table);
    adding.afterChecks = afterChecks;
    return adding.add(location);
  }

  private Result add(String location) {
    List<ParquetFileListing.ListedFile> listed = ParquetFileListing.list(io, location);
    if (listed.isEmpty()) {
      throw new IllegalArgumentException(
          "there is no Parquet file under " + location + " to add to table " + table.name());
    }
    Snapshot checkedAt = table.currentSnapshot();
    Set<String> present = dataFileLocations();
    for (ParquetFileListing.ListedFile file : listed) {
      if (present.contains(ParquetFileListing.normalized(file.location()))) {
        throw refused(file, "it is in the table already", null);
      }
    }
    List<DataFile> files = new ArrayList<>();
    long rows = 0;
    for (ParquetFileListing.ListedFile file : listed) {
      DataFile dataFile;
      try {
        dataFile = dataFile(file);
      } catch (IllegalArgumentException e) {
        throw refused(file, e.getMessage(), e.getCause());
      }
      files.add(dataFile);
      rows += dataFile.recordCount();
    }
    boolean setMapping =
        withoutIds && !table.properties().containsKey(TableProperties.DEFAULT_NAME_MAPPING);
    afterChecks.run();
    long snapshotId =
        commit(
            location, listed, files, setMapping, checkedAt == null ? null : checkedAt.snapshotId());
    return new Result(files.size(), rows, snapshotId);
  }

  /** The data file of a Parquet file, once its schema and partition are checked. */
  private DataFile dataFile(ParquetFileListing.ListedFile file) {
    ParquetMetadata footer = footer(file);
    MessageType type = footer.getFileMetaData().getSchema();
    withoutIds |= !ParquetSchemaUtil.hasIds(type);
    Metrics metrics = ParquetUtil.footerMetrics(footer, Stream.empty(), metricsConfig, mapping);
    Map<Integer, String> fromPath = partitions.fromPath(file.location());
    schemaCheck.check(type, metrics, fromPath.keySet());
    PartitionData partition = partitions.of(fromPath, metrics);
    DataFiles.Builder dataFile =
        DataFiles.builder(table.spec())
            .withPath(file.location())
            .withFormat(FileFormat.PARQUET)
            .withFileSizeInBytes(file.size())
            .withMetrics(metrics)
            .withSplitOffsets(ParquetUtil.getSplitOffsets(footer));
    if (partition != null) {
      dataFile.withPartition(partition);
    }
    return dataFile.build();
  }

  /**
   * Appends the files in one snapshot, validated against data files added since snapshot {@code
   * from} (the one they were checked against; null for an empty table): where there are some, the
   * snapshots that added them are read for the files, and the commit is made again from the table's
   * new snapshot. Sets the table's name mapping in the same commit if asked.
   *
   * @return the id of the snapshot
   * @throws IllegalArgumentException naming a file that another commit added meanwhile
   */
  private long commit(
      String location,
      List<ParquetFileListing.ListedFile> listed,
      List<DataFile> files,
      boolean setMapping,
      Long from) {
    Long validFrom = from;
    for (int attempt = 1; ; attempt++) {
      Transaction transaction = table.newTransaction();
      if (setMapping) {
        transaction
            .updateProperties()
            .set(TableProperties.DEFAULT_NAME_MAPPING, NameMappingParser.toJson(mapping))
            .commit();
      }
      // An overwrite that only adds files is an append snapshot, and one that validates.
      OverwriteFiles append = transaction.newOverwrite();
      files.forEach(append::addFile);
      if (validFrom != null) {
        append.validateFromSnapshot(validFrom);
      }
      append.conflictDetectionFilter(Expressions.alwaysTrue()).validateNoConflictingData();
      append.set(SnapshotSummaryKeys.ADDED_FILES, Integer.toString(files.size()));
      append.set(SnapshotSummaryKeys.ADDED_FILES_SOURCE, location);
      try {
        append.commit();
        // The snapshot id stays the same when the transaction retries its commit.
        long snapshotId = transaction.table().currentSnapshot().snapshotId();
        transaction.commitTransaction();
        return snapshotId;
      } catch (ValidationException e) {
        table.refresh();
        boolean expired =
            validFrom != null
                && !SnapshotUtil.isAncestorOf(
                    table, table.currentSnapshot().snapshotId(), validFrom);
        refuseAddedSince(validFrom, expired, listed);
        if (!expired && !e.getMessage().startsWith("Found conflicting files")) {
          // Not data files added meanwhile: a refusal of another kind, said as it is.
          throw new IllegalStateException(
              "cannot add the files under "
                  + location
                  + " to table "
                  + table.name()
                  + ": "
                  + e.getMessage()
                  + "; nothing was committed",
              e);
        }
        if (attempt == COMMIT_ATTEMPTS) {
          throw new IllegalStateException(
              "cannot add the files under "
                  + location
                  + " to table "
                  + table.name()
                  + ": other commits added data files to it "
                  + attempt
                  + " times while the files were being committed; nothing was committed, try"
                  + " again",
              e);
        }
        validFrom = table.currentSnapshot().snapshotId();
      }
    }
  }

  /**
   * Refuses the adoption if a snapshot after {@code from} (all of them for null) added one of the
   * files {@code listed}: another adoption of the same files committed first. {@code expired} says
   * that {@code from} is no longer an ancestor of the current snapshot.
   */
  private void refuseAddedSince(
      Long from, boolean expired, List<ParquetFileListing.ListedFile> listed) {
    Map<String, ParquetFileListing.ListedFile> byLocation = new HashMap<>();
    for (ParquetFileListing.ListedFile file : listed) {
      byLocation.put(ParquetFileListing.normalized(file.location()), file);
    }
    if (expired) {
      // The snapshot checked against has expired meanwhile: the table's live files tell.
      for (String present : dataFileLocations()) {
        ParquetFileListing.ListedFile file = byLocation.get(present);
        if (file != null) {
          throw refused(file, "another commit added it to the table meanwhile", null);
        }
      }
      return;
    }
    long current = table.currentSnapshot().snapshotId();
    for (Snapshot snapshot : SnapshotUtil.ancestorsBetween(table, current, from)) {
      for (DataFile added :
          SnapshotChanges.builderFor(table).snapshot(snapshot).build().addedDataFiles()) {
        ParquetFileListing.ListedFile file =
            byLocation.get(ParquetFileListing.normalized(added.location()));
        if (file != null) {
          throw refused(
              file,
              "another commit added it to the table meanwhile (snapshot "
                  + snapshot.snapshotId()
                  + "); nothing was committed",
              null);
        }
      }
    }
  }

  /** The table's name mapping, or one by its current column names when it has none. */
  private static NameMapping nameMapping(Table table) {
    String json = table.properties().get(TableProperties.DEFAULT_NAME_MAPPING);
    return json != null ? NameMappingParser.fromJson(json) : MappingUtil.create(table.schema());
  }

  private ParquetMetadata footer(ParquetFileListing.ListedFile file) {
    try {
      return ParquetFooter.read(io.newInputFile(file.location(), file.size()));
    } catch (IOException | RuntimeException e) {
      throw new IllegalArgumentException(
          "it cannot be read as a Parquet file: " + e.getMessage(), e);
    }
  }

  /**
   * The live data files of the table's current snapshot, spelt as {@link
   * ParquetFileListing#normalized}.
   */
  private Set<String> dataFileLocations() {
    Set<String> locations = new HashSet<>();
    if (table.currentSnapshot() == null) {
      return locations;
    }
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        locations.add(ParquetFileListing.normalized(task.file().location()));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return locations;
  }

  private IllegalArgumentException refused(
      ParquetFileListing.ListedFile file, String reason, Throwable cause) {
    return new IllegalArgumentException(
        "cannot add " + file.location() + " to table " + table.name() + ": " + reason, cause);
  }
}
