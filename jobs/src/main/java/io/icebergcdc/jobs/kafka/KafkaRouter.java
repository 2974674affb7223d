package io.icebergcdc.jobs.kafka;

import io.icebergcdc.cdc.BadRecordPolicy;
import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.cdc.NewSourceTableException;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.RefusedSourceException;
import io.icebergcdc.cdc.SchemaEvolution;
import io.icebergcdc.cdc.TableRoute;
import io.icebergcdc.cdc.TruncateCopies;
import io.icebergcdc.cdc.debezium.DebeziumChanges;
import io.icebergcdc.cdc.debezium.DebeziumJsonParseFunction;
import io.icebergcdc.cdc.debezium.DebeziumJsonParser;
import io.icebergcdc.cdc.debezium.MaxwellJsonParser;
import io.icebergcdc.cdc.debezium.UpsertJsonParser;
import io.icebergcdc.jobs.definition.KafkaTopics;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Parses change records read from Kafka, in Debezium's JSON (with or without the schema part),
 * Maxwell's JSON ({@link MaxwellJsonParser}) or as upsert records ({@link UpsertJsonParser}), and
 * sends the changes of each topic to its table's side output ({@link #outputOf}), typed by the
 * table's schema, or to the main output for the tables one writer takes, each marked with the
 * partition and offset it came from. Runs beside the Kafka source, at its parallelism.
 *
 * <p>A null value is, in Debezium's JSON, a tombstone (it tells log compaction that a key was
 * deleted, after the delete event itself) and yields nothing, as in Maxwell's; an upsert record
 * with a null value deletes its key. A record that cannot be applied fails the job with its topic,
 * partition and offset, or, under {@link BadRecordPolicy#DEAD_LETTER}, goes to {@link
 * DebeziumJsonParseFunction#DEAD_LETTERS} with them and the reason, and is counted in {@code
 * badRecords}.
 *
 * <p>In a job whose topics a pattern chose, a record of a matching topic that the job has no table
 * for (a topic created after the job was built) ends the job with {@link NewSourceTableException},
 * so that it is built again with that topic's table.
 */
public final class KafkaRouter extends ProcessFunction<KafkaRecord, ChangeEvent> {

  private static final long serialVersionUID = 1L;
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(KafkaRouter.class);
  private final Map<String, TableRoute> routes;

  /** The table name the changes of each topic on the main output carry. */
  private final Map<String, String> mainOutputNames;

  private final String sequenceColumn;
  private final String format;
  private final BadRecordPolicy badRecordPolicy;
  private final Pattern topicPattern;

  /** What evolves the tables of {@link #following} when their events' schema changes; or null. */
  private SchemaEvolution evolution;

  /**
   * The topics whose tables' writers follow their schema changes (with {@link #evolution}); those
   * that appear while the job runs do.
   */
  private java.util.Set<String> following = java.util.Set.of();

  /**
   * The topics whose tables have a key-indexed writer, which applies their truncates; those that
   * appear while the job runs have one.
   */
  private java.util.Set<String> truncating = java.util.Set.of();

  /** What makes the tables of topics that appear while the job runs ready; or null. */
  private NewTopics newTopics;

  /** The routes of the topics that appeared while this task runs, by topic. */
  private transient Map<String, TableRoute> appeared;

  /**
   * The topics that appeared while this task runs whose table could not be made ready, with why and
   * when: their records are bad records, the table tried again at most every {@link
   * #UNREADY_RETRY_NANOS} (a Maxwell or upsert topic's table created meanwhile, a Debezium record
   * with its schema).
   */
  private transient Map<String, Unready> unready;

  private record Unready(String why, long at) {}

  public static final long UNREADY_RETRY_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(10);

  /** Nanoseconds, for the retries of unready tables; null for {@link System#nanoTime}. */
  private transient java.util.function.LongSupplier clock;

  private transient Map<String, RecordParser> parsers;
  private transient Counter badRecords;

  /**
   * @param schemas the schema of each topic's table
   * @param tableNames the Iceberg table of each topic, for messages and dead letters
   * @param topicPattern the pattern the job's topics were chosen by, or null for a list of topics:
   *     a record of a matching topic that the job has no table for ends the job with {@link
   *     NewSourceTableException}
   */
  public KafkaRouter(
      Map<String, ChangeSchema> schemas,
      Map<String, String> tableNames,
      String sequenceColumn,
      String format,
      BadRecordPolicy badRecordPolicy,
      Pattern topicPattern) {
    this(schemas, tableNames, Map.of(), sequenceColumn, format, badRecordPolicy, topicPattern);
  }

  /**
   * @param onMainOutput the topics whose changes go to the main output, for one writer of them all,
   *     each with the table name its changes carry there; the others' go to a side output each
   */
  public KafkaRouter(
      Map<String, ChangeSchema> schemas,
      Map<String, String> tableNames,
      Map<String, String> onMainOutput,
      String sequenceColumn,
      String format,
      BadRecordPolicy badRecordPolicy,
      Pattern topicPattern) {
    this.routes = TableRoute.byTopic(schemas, tableNames, onMainOutput.keySet());
    this.mainOutputNames = Map.copyOf(onMainOutput);
    this.sequenceColumn = sequenceColumn;
    this.format = format;
    this.badRecordPolicy = badRecordPolicy;
    this.topicPattern = topicPattern;
  }

  /**
   * Follows the schema changes of {@code topics} while the job runs, for Debezium JSON events with
   * their {@code schema} part: {@code evolution} evolves the topic's table at the first event of a
   * changed schema, and the changes from then on carry the evolved schema's rows ({@link
   * ChangeEvent#rowSchemaId()}), which the topics' writers read (the one writer of the tables on
   * the main output, and writers of their own). Without it, or for another topic, an event with a
   * column the table lacks is a bad record.
   */
  public KafkaRouter followingSchemaChanges(
      SchemaEvolution schemaEvolution, java.util.Set<String> topics) {
    this.evolution = schemaEvolution;
    this.following = java.util.Set.copyOf(topics);
    return this;
  }

  /**
   * Applies the truncates of {@code topics}, whose tables have a key-indexed writer, which knows
   * every key of the table; a truncate of another topic is a bad record.
   */
  public KafkaRouter applyingTruncates(java.util.Set<String> topics) {
    this.truncating = java.util.Set.copyOf(topics);
    return this;
  }

  /**
   * The table of a topic that appeared while the job runs, made ready for its first record: in
   * Debezium JSON, created from the record's Connect schema where it is missing.
   */
  public interface NewTopics extends java.io.Serializable {

    /**
     * @throws MalformedChangeException if the record cannot tell the table to create
     */
    NewTopic tableOf(String topic, KafkaRecord record, String locator);

    /**
     * Whether the writer of the new topics' tables applies their truncates: the key-indexed writer
     * (not one that deletes by key); otherwise a truncate is a bad record, as of the job's own
     * topics.
     */
    boolean appliesTruncates();
  }

  /**
   * A topic's table, ready to be written.
   *
   * @param tableName its identifier, which its changes carry
   * @param schema its schema now
   * @param evolution what evolves it when its events' schema changes
   */
  public record NewTopic(String tableName, ChangeSchema schema, SchemaEvolution evolution)
      implements java.io.Serializable {}

  /**
   * Reads the topics that appear while the job runs and match its pattern without ending the job:
   * at a new topic's first record, {@code tables} makes its table ready, and its changes go to the
   * main output, named as that table, with rows that carry its schema's id, for the one writer that
   * writes the tables that appear ({@link io.icebergcdc.sink.NewTables}). Without it, such a record
   * ends the job with {@link NewSourceTableException}.
   */
  public KafkaRouter takingNewTopics(NewTopics tables) {
    this.newTopics = tables;
    return this;
  }

  /** Replaces the clock of the retries of unready tables, in nanoseconds; for tests. */
  @org.apache.flink.annotation.VisibleForTesting
  public KafkaRouter useClock(java.util.function.LongSupplier nanos) {
    this.clock = nanos;
    return this;
  }

  private long now() {
    return clock == null ? System.nanoTime() : clock.getAsLong();
  }

  public OutputTag<ChangeEvent> outputOf(String topic) {
    return TableRoute.outputOf(routes, topic);
  }

  @Override
  public void open(OpenContext openContext) {
    parsers = new HashMap<>();
    appeared = new HashMap<>();
    unready = new HashMap<>();
    routes.forEach((topic, route) -> parsers.put(topic, parser(route, following.contains(topic))));
    badRecords = getRuntimeContext().getMetricGroup().counter("badRecords");
  }

  /** Parses one Kafka record into the changes of its table. */
  private interface RecordParser {
    List<ChangeEvent> parse(KafkaRecord record, String locator);
  }

  private RecordParser parser(TableRoute route, boolean followsSchemaChanges) {
    switch (format) {
      case KafkaTopics.UPSERT_JSON:
        UpsertJsonParser upsert = new UpsertJsonParser(route.schema(), route.tableName());
        return (record, locator) ->
            upsert.parse(
                record.keyText(),
                record.valueText(),
                record.partition,
                record.offset,
                record.timestamp,
                locator);
      case KafkaTopics.MAXWELL_JSON:
        MaxwellJsonParser maxwell =
            new MaxwellJsonParser(route.schema(), route.tableName(), sequenceColumn);
        return (record, locator) -> maxwell.parse(record.valueText(), locator);
      default:
        DebeziumJsonParser debezium =
            new DebeziumJsonParser(route.schema(), route.tableName(), sequenceColumn);
        if (evolution != null && followsSchemaChanges) {
          debezium.followingSchemaChanges(evolution);
        }
        // From the bytes: Jackson refuses bytes that are not UTF-8.
        return (record, locator) -> debezium.parse(record.value, locator);
    }
  }

  /**
   * The parser of a topic that appeared while the job runs: its changes carry the id of its table's
   * schema, whose rows they hold, for the writer that learns the table from them. Debezium JSON
   * events with their schema part also evolve the table; Maxwell's and upsert records carry no
   * schema to follow.
   */
  private RecordParser parserOfNewTopic(NewTopic table) {
    if (format.equals(KafkaTopics.DEBEZIUM_JSON)) {
      DebeziumJsonParser parser =
          new DebeziumJsonParser(table.schema(), table.tableName(), sequenceColumn)
              .carryingSchemaId()
              .followingSchemaChanges(table.evolution());
      return (record, locator) -> parser.parse(record.value, locator);
    }
    RecordParser parser = parser(new TableRoute(table.tableName(), table.schema(), null), false);
    int schemaId = table.schema().schema().schemaId();
    return (record, locator) -> DebeziumChanges.inSchema(parser.parse(record, locator), schemaId);
  }

  /**
   * Starts reading the topic of {@code record}, which appeared while the job runs: its table made
   * ready, its changes routed to the main output, each carrying the table's schema id.
   */
  private TableRoute startReading(KafkaRecord record) {
    String locator = "topic " + record.position();
    Unready before = unready.get(record.topic);
    if (before != null && now() - before.at() < UNREADY_RETRY_NANOS) {
      throw new MalformedChangeException(
          locator + ": the table of its topic could not be made ready (" + before.why() + ")");
    }
    NewTopic table;
    try {
      table = newTopics.tableOf(record.topic, record, locator);
    } catch (MalformedChangeException e) {
      unready.put(record.topic, new Unready(e.getMessage(), now()));
      throw e;
    }
    unready.remove(record.topic);
    String other = null;
    for (Map.Entry<String, String> known : mainOutputNames.entrySet()) {
      other = known.getValue().equals(table.tableName()) ? known.getKey() : other;
    }
    for (Map.Entry<String, TableRoute> known : appeared.entrySet()) {
      other = known.getValue().tableName().equals(table.tableName()) ? known.getKey() : other;
    }
    if (other != null) {
      // Two topics into one table: their changes' sequences cannot be compared. The start refuses
      // it too; the writer, for topics met by different readers.
      throw new RefusedSourceException(
          "topic "
              + record.topic
              + ", which appeared while the job runs, is named into table "
              + table.tableName()
              + ", which topic "
              + other
              + " writes; give --table-template a template that tells them apart (with {topic})");
    }
    TableRoute route = new TableRoute(table.tableName(), table.schema(), null);
    parsers.put(record.topic, parserOfNewTopic(table));
    appeared.put(record.topic, route);
    LOG.info(
        "Topic {} appeared while the job runs: reading it into table {}",
        record.topic,
        table.tableName());
    return route;
  }

  @Override
  public void processElement(KafkaRecord record, Context ctx, Collector<ChangeEvent> out) {
    if (record.value == null && !format.equals(KafkaTopics.UPSERT_JSON)) {
      return;
    }
    TableRoute route = routes.get(record.topic);
    if (route == null) {
      route = appeared.get(record.topic);
    }
    boolean matches =
        route == null && topicPattern != null && topicPattern.matcher(record.topic).matches();
    if (matches && newTopics == null) {
      throw new NewSourceTableException(record.topic, "topic " + record.position());
    }
    try {
      if (matches) {
        route = startReading(record);
      }
      if (route == null) {
        throw new MalformedChangeException(
            "topic " + record.position() + ": the job reads no table from this topic");
      }
      String partition = record.topic + "/" + record.partition;
      String locator = "topic " + record.position();
      List<ChangeEvent> events = parsers.get(record.topic).parse(record, locator);
      for (ChangeEvent event : events) {
        if (event.operation() == Operation.TRUNCATE
            && !(appeared.containsKey(record.topic)
                ? newTopics.appliesTruncates()
                : truncating.contains(record.topic))) {
          throw new MalformedChangeException(locator + ": " + Operation.TRUNCATE_NOT_APPLIED);
        }
      }
      int maxParallelism = getRuntimeContext().getTaskInfo().getMaxNumberOfParallelSubtasks();
      for (ChangeEvent event : events) {
        ChangeEvent located = event.withOrigin(partition, record.offset);
        boolean truncate = event.operation() == Operation.TRUNCATE;
        if (route.onMainOutput()) {
          // One stream of several tables: each change named as its writer knows the table.
          ChangeEvent named =
              located.withTable(mainOutputNames.getOrDefault(record.topic, route.tableName()));
          if (truncate) {
            TruncateCopies.forTables(named, maxParallelism, out::collect);
          } else {
            out.collect(named);
          }
        } else if (truncate) {
          OutputTag<ChangeEvent> output = route.output();
          TruncateCopies.forOneTable(located, maxParallelism, e -> ctx.output(output, e));
        } else {
          ctx.output(route.output(), located);
        }
      }
    } catch (MalformedChangeException e) {
      if (badRecordPolicy == BadRecordPolicy.FAIL) {
        throw TableRoute.withRecord(e, record.describe());
      }
      badRecords.inc();
      ctx.output(
          DebeziumJsonParseFunction.DEAD_LETTERS,
          new DeadLetter(
                  route == null ? record.topic : route.tableName(),
                  "kafka " + record.position(),
                  e.getMessage(),
                  record.describe())
              .writtenAs(
                  route != null && route.onMainOutput()
                      ? mainOutputNames.getOrDefault(record.topic, route.tableName())
                      : null));
    }
  }
}
