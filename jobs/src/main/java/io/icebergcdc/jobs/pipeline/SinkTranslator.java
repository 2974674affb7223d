package io.icebergcdc.jobs.pipeline;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.sink.IcebergCdcSink;
import io.icebergcdc.sink.SinkOptions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;

/**
 * The second stage: each table's changes through the dedup and writers of an {@link IcebergCdcSink}
 * of its own, then the commit: by one committer for all tables of a job that writes several (a
 * capture or Kafka job), by the table's own for the one table of a file job.
 */
final class SinkTranslator {

  private SinkTranslator() {}

  /**
   * Applies each table's changes through its sink.
   *
   * @param prefixUids whether each sink's uids take the table's name as prefix; such jobs write
   *     several tables, and commit them with one committer
   * @param inSourceOrder whether the source delivers the changes in their sources' order ({@link
   *     SourceTranslator#readsInSourceOrder})
   * @param commitListener told of each table's commits (tests use it to inject failures), or null
   * @return the parser's dead letters and those the sinks refused; the parser's of a table are
   *     counted in its snapshots' summaries too
   */
  static DataStream<DeadLetter> apply(
      RoutedChanges routed,
      CatalogLoader catalog,
      Configuration sinkOptions,
      boolean prefixUids,
      boolean inSourceOrder,
      CommitListener commitListener) {
    DataStream<DeadLetter> deadLetters = routed.deadLetters();
    List<IcebergCdcSink.Written> written = new ArrayList<>();
    Map<String, String> tableOfDeadLetter = new HashMap<>();
    for (Map.Entry<TableIdentifier, DataStream<ChangeEvent>> table : routed.changes().entrySet()) {
      Configuration options = new Configuration(sinkOptions);
      if (prefixUids) {
        options.set(SinkOptions.UID_PREFIX, table.getKey().toString());
      }
      IcebergCdcSink sink =
          IcebergCdcSink.builder()
              .table(TableLoader.fromCatalog(catalog, table.getKey()))
              .options(options)
              .commitListener(commitListener)
              .skipChangesBeforeTablePosition(inSourceOrder)
              .build();
      String name =
          routed.deadLetterTables().getOrDefault(table.getKey(), table.getKey().toString());
      if (prefixUids) {
        IcebergCdcSink.Written tableWritten =
            sink.write(table.getValue(), table.getKey().toString());
        written.add(tableWritten);
        tableOfDeadLetter.put(name, tableWritten.table());
        deadLetters = deadLetters.union(tableWritten.deadLetters());
        continue;
      }
      DataStream<DeadLetter> refused =
          routed
              .deadLetters()
              .filter(letter -> letter.table().equals(name))
              .name("dead letters of " + name)
              .uid(options.get(SinkOptions.UID_PREFIX) + "-dead-letters-of-" + name);
      deadLetters = deadLetters.union(sink.apply(table.getValue(), refused));
    }
    if (!written.isEmpty()) {
      IcebergCdcSink.commitTogether(
          written, routed.deadLetters(), tableOfDeadLetter, catalog, OperatorUids.COMMITTER);
    }
    return deadLetters;
  }
}
