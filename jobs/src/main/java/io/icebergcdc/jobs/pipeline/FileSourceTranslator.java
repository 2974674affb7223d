package io.icebergcdc.jobs.pipeline;

import com.fasterxml.jackson.databind.JsonNode;
import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.debezium.DebeziumJsonParseFunction;
import io.icebergcdc.cdc.debezium.DebeziumJsonParser;
import io.icebergcdc.cdc.typeutils.ChangeEventTypeInfo;
import io.icebergcdc.jobs.definition.ChangelogFile;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.JobDefinitionException;
import io.icebergcdc.jobs.definition.TableDefinition;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.java.tuple.Tuple4;
import org.apache.flink.connector.file.src.FileSource;
import org.apache.flink.connector.file.src.compression.StandardDeCompressors;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * A file of Debezium JSON change events, read by one reader and parsed, at the job's parallelism,
 * into the changes of one table. The reader hands each parser only a line's place in the file, and
 * the parser reads the line itself (a compressed file's lines go with their bytes). A missing table
 * is created from the Connect schema of the file's first event.
 */
final class FileSourceTranslator implements SourceTranslator {

  private final JobDefinition job;
  private final ChangelogFile file;

  /** The file's first event, once read ({@link #firstEvent()}). */
  private FirstEvent firstEvent;

  private boolean firstEventRead;

  FileSourceTranslator(JobDefinition job, ChangelogFile file) {
    this.job = job;
    this.file = file;
  }

  @Override
  public List<TableTarget> prepareTables(TablePreparation preparation) throws IOException {
    Catalog catalog = preparation.catalog();
    TableDefinition tables = job.tables();
    TableIdentifier identifier = TableIdentifier.parse(tables.nameTemplate());
    Schema schema = catalog.tableExists(identifier) ? null : schemaFromFirstEvent(identifier);
    TableChecks.check(catalog, identifier, schema, tables, job.sinkOptions());
    TableChecks.checkSequenceColumn(catalog, identifier, schema, file.sequenceColumn());
    Table table =
        preparation.createOrLoad(
            identifier,
            schema,
            tables.partitionBy(),
            tables.formatVersionToCreate(),
            tables.primaryKey());
    return List.of(
        new TableTarget(
            file.origin(), file.origin(), identifier, new ChangeSchema(table.schema())));
  }

  @Override
  public RoutedChanges translate(
      StreamExecutionEnvironment env,
      List<TableTarget> targets,
      java.util.Set<String> writtenTogether,
      java.util.Set<String> followingSchemaChanges,
      java.util.Set<String> applyingTruncates) {
    TableTarget target = targets.get(0);
    java.nio.file.Path path = Paths.get(file.path()).toAbsolutePath();
    boolean compressed = StandardDeCompressors.getDecompressorForFileName(path.toString()) != null;
    FileSource<Tuple4<Long, Long, Integer, byte[]>> source =
        FileSource.forRecordStreamFormat(
                new NumberedLineFormat(!compressed), new Path(path.toUri()))
            .setFileEnumerator(NumberedLineFormat.everyFile())
            .build();
    SingleOutputStreamOperator<ChangeEvent> changes =
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "changes file " + file.origin())
            .uid(OperatorUids.FILE_SOURCE)
            // One reader, so that a checkpoint holds a prefix of the file and a key's changes reach
            // the writers in the file's order from one checkpoint to the next.
            .setParallelism(1)
            // The lines go round to parsers at the job's parallelism: parsing is most of the work
            // of a file of events with schemas, and the changes of a checkpoint are ordered by
            // their source positions downstream, not by the order of the lines.
            .rebalance()
            .process(
                parser(
                    target,
                    followingSchemaChanges.contains(target.route()),
                    applyingTruncates.contains(target.route()),
                    compressed ? null : new MappedFileLines(path.toString())))
            .returns(ChangeEventTypeInfo.of(target.schema()))
            .name(OperatorUids.PARSE_DEBEZIUM_JSON_NAME)
            .uid(OperatorUids.PARSE_DEBEZIUM_JSON);
    return new RoutedChanges(
        Map.of(target.table(), changes),
        changes.getSideOutput(DebeziumJsonParseFunction.DEAD_LETTERS),
        Map.of(target.table(), target.table().toString()),
        null);
  }

  private DebeziumJsonParseFunction parser(
      TableTarget target,
      boolean followingSchemaChanges,
      boolean applyingTruncates,
      DebeziumJsonParseFunction.LineBytes lineBytes) {
    String tableName = target.table().toString();
    DebeziumJsonParseFunction parser =
        new DebeziumJsonParseFunction(
            target.schema(),
            tableName,
            file.sequenceColumn(),
            file.path(),
            job.deadLetters().policy(),
            sourceTableOfFirstEvent(),
            lineBytes);
    if (followingSchemaChanges) {
      parser.followingSchemaChanges(
          new CatalogSchemaEvolution(job.catalog().loader(), Map.of(tableName, target.table())));
    }
    // The key-indexed writer applies truncates; to the writer of equality deletes one is a bad
    // record.
    return applyingTruncates ? parser.applyingTruncates() : parser;
  }

  @Override
  public boolean prefixesSinkUids() {
    return false;
  }

  @Override
  public String jobName(List<TableTarget> targets) {
    return "iceberg-cdc apply " + file.origin() + " -> " + targets.get(0).table();
  }

  /**
   * The source table that the file's first event names, which every parser holds the others to;
   * null if it names none, or cannot be read (its line then fails in the parser).
   */
  private String sourceTableOfFirstEvent() {
    FirstEvent first;
    try {
      first = firstEvent();
    } catch (IOException e) {
      return null;
    }
    if (first == null || first.unreadable() != null) {
      return null;
    }
    JsonNode payload = first.root().has("payload") ? first.root().get("payload") : first.root();
    return payload == null || !payload.has("source")
        ? null
        : DebeziumJsonParser.sourceTableOf(payload.get("source"));
  }

  /**
   * The file's first event: its line number and its tree, or what made it unreadable.
   *
   * @param unreadable why the line is no JSON; null where it is
   */
  private record FirstEvent(int line, JsonNode root, RuntimeException unreadable) {}

  /** The file's first event, read once for the look of both stages; null if it holds none. */
  private FirstEvent firstEvent() throws IOException {
    if (!firstEventRead) {
      try (BufferedReader reader = firstLines()) {
        String line;
        int number = 0;
        while ((line = reader.readLine()) != null) {
          number++;
          if (line.isBlank()) {
            continue;
          }
          try {
            firstEvent =
                new FirstEvent(
                    number, DebeziumJsonParser.readTree(line, file.path() + ":" + number), null);
          } catch (RuntimeException e) {
            firstEvent = new FirstEvent(number, null, e);
          }
          break;
        }
      }
      firstEventRead = true;
    }
    return firstEvent;
  }

  /**
   * The file's lines for a look at its first events, decompressed as the source reads them (by the
   * file name's extension), without a UTF-8 byte order mark, which the parsers' byte input skips.
   */
  private BufferedReader firstLines() throws IOException {
    java.io.InputStream in = Files.newInputStream(Paths.get(file.path()));
    try {
      var decompressor = StandardDeCompressors.getDecompressorForFileName(file.path());
      if (decompressor != null) {
        in = decompressor.create(in);
      }
      java.io.PushbackInputStream bytes = new java.io.PushbackInputStream(in, 3);
      byte[] start = bytes.readNBytes(3);
      if (!(start.length == 3
          && (start[0] & 0xff) == 0xEF
          && (start[1] & 0xff) == 0xBB
          && (start[2] & 0xff) == 0xBF)) {
        bytes.unread(start);
      }
      return new BufferedReader(new java.io.InputStreamReader(bytes, StandardCharsets.UTF_8));
    } catch (IOException | RuntimeException e) {
      in.close();
      throw e;
    }
  }

  /** The table schema that the Connect schema of the file's first event describes. */
  private Schema schemaFromFirstEvent(TableIdentifier identifier) throws IOException {
    FirstEvent first = firstEvent();
    if (first == null) {
      throw new JobDefinitionException(
          "table "
              + identifier
              + " does not exist and "
              + file.path()
              + " holds no event to create it from");
    }
    if (first.unreadable() != null) {
      throw first.unreadable();
    }
    JsonNode root = first.root();
    if (root.has("schema") && root.has("payload")) {
      return TableChecks.schemaWithPrimaryKey(
          root.get("schema"),
          job.tables().primaryKey(),
          "the first event of " + file.path() + " (line " + first.line() + ")");
    }
    throw new JobDefinitionException(
        "table "
            + identifier
            + " does not exist and the first event of "
            + file.path()
            + " (line "
            + first.line()
            + ") carries no schema to create it from; create the table first, or write the"
            + " events with Debezium's schemas enabled");
  }
}
