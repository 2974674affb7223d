package io.icebergcdc.sink.internal;

/**
 * The uids and names of the sink's operators, in one place: a uid that changes breaks the restore
 * of savepoints, so these are part of the compatibility contract.
 */
public final class OperatorUids {

  private final String prefix;

  public OperatorUids(String prefix) {
    this.prefix = prefix;
  }

  public String dedup() {
    return prefix + "-dedup";
  }

  public String writer() {
    return prefix + "-writer";
  }

  public String committer() {
    return prefix + "-committer";
  }

  public String stats() {
    return prefix + "-stats";
  }

  public String distribution() {
    return prefix + "-distribution";
  }
}
