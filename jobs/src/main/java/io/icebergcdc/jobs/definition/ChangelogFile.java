package io.icebergcdc.jobs.definition;

import java.nio.file.Paths;

/**
 * A file of Debezium JSON change events, one per line ({@code apply --source file}), applied to one
 * table.
 *
 * @param path the file, absolute
 * @param sequenceColumn a column that orders the changes of a key, or null for the source positions
 *     the events carry
 */
public record ChangelogFile(String path, String sequenceColumn) implements SourceDefinition {

  /** The file's name, which names its records in dead letters and messages. */
  @Override
  public String origin() {
    return Paths.get(path).getFileName().toString();
  }
}
