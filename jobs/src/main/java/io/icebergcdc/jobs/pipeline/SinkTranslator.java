package io.icebergcdc.jobs.pipeline;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.sink.IcebergCdcSink;
import io.icebergcdc.sink.SinkOptions;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;

/**
 * The second stage: each table's changes through an {@link IcebergCdcSink} of its own (dedup,
 * writers, committer).
 */
final class SinkTranslator {

  private SinkTranslator() {}

  /**
   * Applies each table's changes through its sink.
   *
   * @param prefixUids whether each sink's uids take the table's name as prefix
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
      DataStream<DeadLetter> refused =
          routed
              .deadLetters()
              .filter(letter -> letter.table().equals(name))
              .name("dead letters of " + name)
              .uid(options.get(SinkOptions.UID_PREFIX) + "-dead-letters-of-" + name);
      deadLetters = deadLetters.union(sink.apply(table.getValue(), refused));
    }
    return deadLetters;
  }
}
