package io.icebergcdc.dedup;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import java.io.Serializable;

/**
 * The schemas a table takes while the job runs ({@link ChangeEvent#rowSchemaId()}), as the dedup
 * before a writer without state follows them ({@link Dedup#operator}): every change is given the
 * rows of the newest schema its table's changes have shown, so the net changes of a checkpoint are
 * all of one schema, which the writer then writes.
 *
 * <p><b>Threading:</b> Flink's task thread only.
 */
public interface SchemaFollower extends Serializable {

  /**
   * Starts following; called once, before any other method.
   *
   * @return the schema of the rows {@link #fit} gives to begin with: the job's, or the table's
   *     current schema where the table took a later one of the job's before this start (a restart)
   */
  ChangeSchema open() throws Exception;

  /** The schema of the rows {@link #fit} gives, the newest the changes have shown. */
  ChangeSchema current();

  /**
   * {@code change} with rows of the {@link #current} schema, which it makes the change's own schema
   * first if that is newer.
   */
  ChangeEvent fit(ChangeEvent change);

  void close() throws Exception;
}
