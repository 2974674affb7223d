package io.icebergcdc.capture;

import java.util.List;
import org.apache.flink.api.connector.source.SourceEvent;

/**
 * From the enumerator to the log's reader: the topics of tables that appeared while the job runs
 * and that the job now captures ({@link AppearingTables}). Sent when the enumerator takes tables,
 * before any of their chunks is planned, and, with every table it has taken, whenever the log's
 * reader registers, before its log split is handed over: the reader starts its connector from a
 * restored split only once it has this list, so it never skips a change of a table it should know.
 *
 * @param topics the tables' topics
 */
record TablesTaken(List<String> topics) implements SourceEvent {

  private static final long serialVersionUID = 1L;

  TablesTaken {
    topics = List.copyOf(topics);
  }
}
