package io.icebergcdc.sink;

import java.io.Serializable;

/**
 * Work done in the job once the committer has made its last commit, at the end of a bounded input
 * (the publication of an atomic {@code CREATE TABLE ... AS SELECT}): it runs in the task after the
 * committer's ({@link EndOfInputSink}), so that its failure fails the job, as the committer's
 * would. Not run where the input does not end.
 */
@FunctionalInterface
public interface AfterLastCommit extends Serializable {

  void run() throws Exception;
}
