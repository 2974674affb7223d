package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.commit.TableRefresh;
import io.icebergcdc.dedup.SchemaFollower;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;

/**
 * The schemas one table takes while the job runs, read from its catalog ({@link RowSchemas}): for
 * the dedup before the writer of equality deletes, which so hands that writer the net changes of a
 * checkpoint in one schema.
 */
public final class TableSchemaFollower implements SchemaFollower {

  private static final long serialVersionUID = 1L;

  private final TableLoader tableLoader;
  private final ChangeSchema job;

  private transient Table table;
  private transient RowSchemas schemas;

  /**
   * @param job the schema the job was built with for the table
   */
  public TableSchemaFollower(TableLoader tableLoader, ChangeSchema job) {
    this.tableLoader = tableLoader;
    this.job = job;
  }

  @Override
  public ChangeSchema open() {
    tableLoader.open();
    table = tableLoader.loadTable();
    schemas =
        new RowSchemas(
            job,
            () -> {
              table = TableRefresh.refresh(table, tableLoader);
              return table;
            });
    schemas.startAt(table);
    return schemas.current();
  }

  @Override
  public ChangeSchema current() {
    return schemas.current();
  }

  @Override
  public ChangeEvent fit(ChangeEvent change) {
    return schemas.fit(change);
  }

  @Override
  public void close() throws Exception {
    tableLoader.close();
  }
}
