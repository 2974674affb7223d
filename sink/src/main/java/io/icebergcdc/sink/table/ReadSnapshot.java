package io.icebergcdc.sink.table;

import org.apache.flink.table.connector.RowLevelModificationScanContext;

/**
 * The snapshot that the scan of an {@code UPDATE} or {@code DELETE} reads, handed from the source
 * to the sink by the planner.
 *
 * @param snapshotId the snapshot read, or null for a table without one
 */
record ReadSnapshot(Long snapshotId) implements RowLevelModificationScanContext {}
