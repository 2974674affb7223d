package io.icebergcdc.jobs.pipeline;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.sink.IcebergCdcSink;
import io.icebergcdc.sink.MultiTableSink;
import io.icebergcdc.sink.NewTables;
import io.icebergcdc.sink.SharedCatalog;
import io.icebergcdc.sink.SinkOptions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;

/**
 * The second stage: the tables' changes through dedup and writers, then the commit. A job that
 * writes several tables (a capture or Kafka job) dedups and writes them with one operator, those
 * distributed by partition and those written with equality deletes too, but for any table it cannot
 * take ({@link IcebergCdcSink#writesWithOthers}), which keeps an {@link IcebergCdcSink}'s dedup and
 * writers of its own, and commits them all with one committer. The one table of a file job has its
 * sink's own operators, committer included.
 */
final class SinkTranslator {

  private final Map<TableIdentifier, IcebergCdcSink> sinks;
  private final Set<String> followingSchemaChanges;
  private final Set<String> applyingTruncates;
  private final Set<String> writableTogether;
  private final boolean severalTables;

  /** Whether the tables of a checkpoint are committed in one transaction of their catalog. */
  private final boolean inOneTransaction;

  /** The uid prefix of the one table of a job that does not prefix uids with the table. */
  private final String uidPrefix;

  /** How the tables that appear while the job runs are written, if the source takes any. */
  private final NewTables newTables;

  private SinkTranslator(
      Map<TableIdentifier, IcebergCdcSink> sinks,
      Set<String> followingSchemaChanges,
      Set<String> applyingTruncates,
      Set<String> writableTogether,
      boolean severalTables,
      boolean inOneTransaction,
      String uidPrefix,
      NewTables newTables) {
    this.sinks = sinks;
    this.followingSchemaChanges = followingSchemaChanges;
    this.applyingTruncates = applyingTruncates;
    this.writableTogether = writableTogether;
    this.severalTables = severalTables;
    this.inOneTransaction = inOneTransaction;
    this.uidPrefix = uidPrefix;
    this.newTables = newTables;
  }

  /**
   * The sinks of the job's tables, built before its source so that the source's router knows which
   * tables one writer takes.
   *
   * @param severalTables whether the job may write several tables (uids prefixed with each table's
   *     name, one writer and one committer for the tables): every source but the file
   * @param inSourceOrder whether the source delivers the changes in their sources' order ({@link
   *     SourceTranslator#readsInSourceOrder})
   * @param commitListener told of each table's commits (tests use it to inject failures), or null
   */
  /**
   * Refuses two sources of {@code tableOf} (a source's route to its table) named into one table:
   * their changes' sequences cannot be compared, and each table has one set of operators. Sources
   * call it before they create or change a table.
   */
  static void refuseSourcesSharingATable(Map<String, TableIdentifier> tableOf) {
    Map<TableIdentifier, String> routeOf = new HashMap<>();
    tableOf.forEach(
        (route, table) -> {
          String other = routeOf.put(table, route);
          if (other != null) {
            throw new io.icebergcdc.jobs.definition.JobDefinitionException(
                "sources "
                    + other
                    + " and "
                    + route
                    + " are both named into table "
                    + table
                    + "; give the job a table template that tells them apart");
          }
        });
  }

  static SinkTranslator of(
      List<TableTarget> targets,
      SharedCatalog shared,
      Configuration sinkOptions,
      boolean severalTables,
      boolean inSourceOrder,
      CommitListener commitListener,
      NewTables.KafkaTopicIds newTopicIds) {
    Map<TableIdentifier, IcebergCdcSink> sinks = new LinkedHashMap<>();
    Set<String> following = new LinkedHashSet<>();
    Set<String> truncating = new LinkedHashSet<>();
    Set<String> writable = new LinkedHashSet<>();
    Map<String, TableIdentifier> tableOf = new LinkedHashMap<>();
    targets.forEach(target -> tableOf.put(target.route(), target.table()));
    refuseSourcesSharingATable(tableOf);
    // One catalog for the tables of each writer and committer, and for the tables they take in
    // flight (each subtask deserializes one); kept open here while the sinks read their tables.
    try (java.io.Closeable open = shared.open()) {
      for (TableTarget target : targets) {
        Configuration options = new Configuration(sinkOptions);
        if (severalTables) {
          options.set(SinkOptions.UID_PREFIX, target.table().toString());
        }
        IcebergCdcSink sink =
            IcebergCdcSink.builder()
                .table(shared.tableLoader(target.table()))
                .writerTable(shared.writerTableLoader(target.table()))
                .options(options)
                .commitListener(commitListener)
                .skipChangesBeforeTablePosition(inSourceOrder)
                .kafkaTopicIds(
                    target.kafkaTopicId() == null
                        ? Map.of()
                        : Map.of(target.route(), target.kafkaTopicId()))
                .build();
        sinks.put(target.table(), sink);
        if (sink.followsSchemaChanges()) {
          following.add(target.route());
        }
        if (sink.appliesTruncates()) {
          truncating.add(target.route());
        }
        if (sink.writesWithOthers()) {
          writable.add(target.route());
        }
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException("closing the tables' catalog", e);
    }
    return new SinkTranslator(
        sinks,
        following,
        truncating,
        writable,
        severalTables,
        sinkOptions.get(SinkOptions.COMMIT_ATOMIC_ACROSS_TABLES),
        sinkOptions.get(SinkOptions.UID_PREFIX),
        new NewTables(shared, sinkOptions, commitListener, inSourceOrder)
            .withKafkaTopicIds(newTopicIds));
  }

  /**
   * How many writer operators the job has: one for the tables written together, and one for each
   * other table; what the network buffers grow with.
   */
  int writerOperators() {
    return sinks.size() - writtenTogether().size() + (writtenTogether().isEmpty() ? 0 : 1);
  }

  /** The routes of the tables that one writer takes, for the source's router. */
  Set<String> writtenTogether() {
    // In a job of several tables, one writer takes every table whose writer could be shared.
    return severalTables ? writableTogether : Set.of();
  }

  /**
   * The routes of the tables whose writer takes the changes of a schema the table took while the
   * job runs ({@link IcebergCdcSink#followsSchemaChanges}): those written together.
   */
  Set<String> followingSchemaChanges() {
    return followingSchemaChanges;
  }

  /**
   * The routes of the tables whose writer applies their truncates ({@link
   * IcebergCdcSink#appliesTruncates}): those of the key-indexed writer, shared or their own.
   */
  Set<String> applyingTruncates() {
    return applyingTruncates;
  }

  /**
   * Applies the tables' changes through the writers and committers.
   *
   * @param takesNewTables whether the source sends the changes of tables that appear while the job
   *     runs to the one writer of the tables written together ({@link
   *     SourceTranslator#takesNewTables}), which then writes and commits them too
   * @return the parser's dead letters and those the writers refused; the parser's of a table are
   *     counted in its snapshots' summaries too
   */
  DataStream<DeadLetter> apply(
      RoutedChanges routed,
      List<TableTarget> targets,
      CatalogLoader catalog,
      boolean takesNewTables) {
    DataStream<DeadLetter> deadLetters = routed.deadLetters();
    List<MultiTableSink.Written> written = new ArrayList<>();
    Map<String, String> tableOfDeadLetter = new HashMap<>();
    Map<String, IcebergCdcSink> together = new TreeMap<>();
    Map<String, String> committedAs = new HashMap<>();
    for (TableTarget target : targets) {
      TableIdentifier table = target.table();
      IcebergCdcSink sink = sinks.get(table);
      String name = routed.deadLetterTables().getOrDefault(table, table.toString());
      if (writtenTogether().contains(target.route())) {
        // One source per table: of() refuses two.
        String writtenAs = RoutedChanges.nameOnMainOutput(target);
        together.put(writtenAs, sink);
        committedAs.put(writtenAs, table.toString());
        tableOfDeadLetter.put(name, table.toString());
        continue;
      }
      DataStream<ChangeEvent> changes = routed.changes().get(table);
      if (severalTables) {
        MultiTableSink.Written tableWritten = sink.write(changes, table.toString());
        written.add(tableWritten);
        tableOfDeadLetter.put(name, table.toString());
        deadLetters = deadLetters.union(tableWritten.deadLetters());
        continue;
      }
      DataStream<DeadLetter> refused =
          routed
              .deadLetters()
              .filter(letter -> letter.table().equals(name))
              .name("dead letters of " + name)
              .uid(uidPrefix + "-dead-letters-of-" + name);
      deadLetters = deadLetters.union(sink.apply(changes, refused));
    }
    if (!together.isEmpty()) {
      MultiTableSink.Written tables =
          MultiTableSink.writeTogether(
              routed.together(),
              together,
              committedAs,
              OperatorUids.WRITER,
              takesNewTables ? newTables : null);
      written.add(tables);
      deadLetters = deadLetters.union(tables.deadLetters());
    }
    if (!written.isEmpty()) {
      MultiTableSink.commitTogether(
          written,
          routed.deadLetters(),
          tableOfDeadLetter,
          catalog,
          inOneTransaction,
          OperatorUids.COMMITTER,
          takesNewTables && !together.isEmpty() ? newTables : null);
    }
    return deadLetters;
  }
}
