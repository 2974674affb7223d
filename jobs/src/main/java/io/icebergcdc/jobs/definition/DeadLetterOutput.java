package io.icebergcdc.jobs.definition;

import io.icebergcdc.cdc.BadRecordPolicy;

/**
 * Where records that cannot be applied go: files of JSON lines under a directory, a Kafka topic of
 * the source's cluster (Kafka sources only), both, or neither, in which case such a record fails
 * the job.
 *
 * @param path a directory (a path or a URI), or null
 * @param topic a topic, or null
 */
public record DeadLetterOutput(String path, String topic) {

  public static final DeadLetterOutput NONE = new DeadLetterOutput(null, null);

  public BadRecordPolicy policy() {
    return path == null && topic == null ? BadRecordPolicy.FAIL : BadRecordPolicy.DEAD_LETTER;
  }

  /** Where the dead letters go, for messages. */
  public String describe() {
    if (path != null) {
      return path;
    }
    return topic != null ? "topic " + topic : "(none)";
  }
}
