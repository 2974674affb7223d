package io.icebergcdc.jobs.pipeline;

import io.icebergcdc.capture.CaptureRoutes;
import io.icebergcdc.capture.CapturedChange;
import io.icebergcdc.capture.CapturedChangeRouter;
import io.icebergcdc.capture.ChunkedSnapshot;
import io.icebergcdc.capture.DebeziumSource;
import io.icebergcdc.capture.NewTableWatch;
import io.icebergcdc.capture.TableListing;
import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.SchemaEvolution;
import io.icebergcdc.jobs.capture.CapturedTable;
import io.icebergcdc.jobs.capture.SourceTables;
import io.icebergcdc.jobs.definition.DatabaseSource;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.sink.CdcTables;
import io.icebergcdc.sink.NewTables;
import io.icebergcdc.sink.SharedCatalog;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A PostgreSQL, MySQL or MariaDB database captured through Debezium: a source whose reader 0 runs
 * the connector and converts each record for its table, and a router chained to it that sends each
 * table's changes on. With a chunked snapshot (PostgreSQL) the source runs at the job's parallelism
 * and all its readers read chunks of the snapshot; otherwise at parallelism 1. Tables missing in
 * the catalog are created from the source's schema; existing ones are evolved to it ({@link
 * CdcTables#evolve}). A job with a chunked snapshot looks for tables created while it runs that its
 * table patterns match ({@link NewTableWatch}): it takes them in flight into its one writer ({@link
 * #takesNewTables}, {@link CaptureTables}), or ends at the first, to be built again with it.
 */
final class DatabaseSourceTranslator implements SourceTranslator {

  private static final Logger LOG = LoggerFactory.getLogger(DatabaseSourceTranslator.class);

  private final JobDefinition job;
  private final DatabaseSource source;
  private List<CapturedTable> captured;

  DatabaseSourceTranslator(JobDefinition job, DatabaseSource source) {
    this.job = job;
    this.source = source;
  }

  @Override
  public List<TableTarget> prepareTables(TablePreparation preparation) {
    Catalog catalog = preparation.catalog();
    captured = SourceTables.discover(source);
    // Before any Iceberg table is created or changed.
    DebeziumSource.checkSource(
        source.debeziumProperties(captured, false),
        captured.stream().map(t -> new TableListing.Name(t.namespace(), t.name())).toList());
    Map<String, TableIdentifier> tableOf = new LinkedHashMap<>();
    for (CapturedTable table : captured) {
      tableOf.put(
          table.topic(source.name()),
          TableIdentifier.parse(
              job.tables().nameOf(table.namespace(), table.name(), source.database())));
    }
    SinkTranslator.refuseSourcesSharingATable(tableOf);
    List<TableTarget> targets = new ArrayList<>();
    for (CapturedTable table : captured) {
      TableIdentifier identifier = tableOf.get(table.topic(source.name()));
      TableChecks.check(catalog, identifier, table.schema(), job.tables(), job.sinkOptions());
      Table iceberg =
          preparation.createOrLoad(
              identifier,
              table.schema(),
              null,
              job.tables().formatVersionToCreate(),
              table.primaryKey());
      List<String> evolved = CdcTables.evolve(iceberg, table.schema(), true);
      if (!evolved.isEmpty()) {
        LOG.info("Evolved Iceberg table {} to its source's schema: {}", identifier, evolved);
        iceberg.refresh();
      }
      targets.add(
          new TableTarget(
              table.qualifiedName(),
              table.topic(source.name()),
              identifier,
              new ChangeSchema(iceberg.schema())));
    }
    return targets;
  }

  @Override
  public RoutedChanges translate(
      StreamExecutionEnvironment env,
      List<TableTarget> targets,
      java.util.Set<String> writtenTogether,
      java.util.Set<String> followingSchemaChanges,
      java.util.Set<String> applyingTruncates) {
    Map<String, ChangeSchema> schemas = new LinkedHashMap<>();
    Map<String, String> tableNames = new LinkedHashMap<>();
    for (TableTarget target : targets) {
      schemas.put(target.route(), target.schema());
      tableNames.put(target.route(), target.source());
    }
    CaptureRoutes routes =
        new CaptureRoutes(
            schemas,
            tableNames,
            RoutedChanges.namesOnMainOutput(targets, writtenTogether),
            source.origin(),
            job.deadLetters().policy(),
            followingSchemaChanges.isEmpty() ? null : evolution(targets),
            followingSchemaChanges,
            applyingTruncates);
    boolean takesNewTables = takesNewTables(writtenTogether);
    if (takesNewTables) {
      routes.takingTablesThatAppear(
          new CaptureTables(
              job,
              source,
              new NewTables(
                  new SharedCatalog(job.catalog().loader()),
                  job.sinkOptions(),
                  null,
                  readsInSourceOrder()),
              targets.stream().map(target -> target.table().toString()).toList()));
    }
    List<ChunkedSnapshot.Table> tables = new ArrayList<>();
    for (CapturedTable table : captured) {
      tables.add(table.chunkedSnapshotTable(table.topic(source.name())));
    }
    boolean chunked = source.snapshotChunkRows() > 0;
    int parallelism = chunked ? env.getParallelism() : 1;
    DataStream<CapturedChange> records =
        env.fromSource(
                new DebeziumSource(
                    source.debeziumProperties(captured, takesNewTables),
                    routes,
                    tables,
                    source.snapshotChunkRows(),
                    DebeziumSource.DEFAULT_QUEUE_CAPACITY,
                    newTableWatch(chunked)),
                WatermarkStrategy.noWatermarks(),
                "Debezium " + source.origin())
            .uid(OperatorUids.DEBEZIUM_SOURCE)
            .setParallelism(parallelism);
    SingleOutputStreamOperator<ChangeEvent> routed =
        records
            .process(new CapturedChangeRouter(routes))
            .returns(RoutedChanges.mainOutputType(targets, writtenTogether))
            .name(OperatorUids.ROUTE_DEBEZIUM_NAME)
            .uid(OperatorUids.ROUTE_DEBEZIUM)
            .setParallelism(parallelism);
    return RoutedChanges.ofRouter(
        routed, targets, routes::outputOf, TableTarget::source, writtenTogether);
  }

  /**
   * Whether the job takes the tables created while it runs without ending: with the chunked
   * snapshot and a table discovery interval, into tables that one writer takes with the others.
   */
  @Override
  public boolean takesNewTables(java.util.Set<String> writtenTogether) {
    return source.snapshotChunkRows() != 0
        && !source.tableDiscoveryInterval().isZero()
        && !writtenTogether.isEmpty();
  }

  /** What evolves the job's tables when their sources' schemas change. */
  private SchemaEvolution evolution(List<TableTarget> targets) {
    Map<String, TableIdentifier> tables = new LinkedHashMap<>();
    for (TableTarget target : targets) {
      tables.put(target.source(), target.table());
    }
    return new CatalogSchemaEvolution(job.catalog().loader(), tables);
  }

  /**
   * What looks for the tables created while the job runs: with a chunked snapshot, which reads such
   * a table beside the log (Debezium's own snapshot is over once the job streams). A MySQL or
   * MariaDB connector knows the new table from its schema history, which holds every table of the
   * database ({@link DatabaseSource#debeziumProperties}).
   */
  private NewTableWatch newTableWatch(boolean chunked) {
    if (!chunked || source.tableDiscoveryInterval().isZero()) {
      return null;
    }
    boolean postgres = source.kind() == DatabaseSource.Kind.POSTGRES;
    return new NewTableWatch(
        source.tablePatterns().stream().map(Pattern::pattern).toList(),
        captured.stream().map(CapturedTable::qualifiedName).collect(Collectors.toSet()),
        source.tableDiscoveryInterval(),
        postgres,
        postgres ? null : source.database());
  }

  @Override
  public boolean prefixesSinkUids() {
    return true;
  }

  @Override
  public String jobName(List<TableTarget> targets) {
    return "iceberg-cdc capture " + source.origin();
  }
}
