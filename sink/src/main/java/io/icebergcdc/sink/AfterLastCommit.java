package io.icebergcdc.sink;

import java.io.IOException;
import java.io.Serializable;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;

/**
 * Work done in the job once the committer has made its last commit, at the end of a bounded input
 * (the publication of an atomic {@code CREATE TABLE ... AS SELECT}): it runs in the task after the
 * committer's, so that its failure fails the job, as the committer's would. Not run where the input
 * does not end.
 */
@FunctionalInterface
public interface AfterLastCommit extends Serializable {

  void run() throws Exception;

  /** The end of the commit chain that runs {@code action} at the end of its input. */
  static Sink<Void> endOfChainRunning(AfterLastCommit action) {
    return new EndOfChain(action);
  }

  /** Receives nothing (the committer emits nothing); runs the action when its input ends. */
  final class EndOfChain implements Sink<Void> {

    private static final long serialVersionUID = 1L;

    private final AfterLastCommit action;

    private EndOfChain(AfterLastCommit action) {
      this.action = action;
    }

    @Override
    public SinkWriter<Void> createWriter(WriterInitContext context) {
      return new SinkWriter<>() {
        @Override
        public void write(Void element, Context context) {}

        @Override
        public void flush(boolean endOfInput) throws IOException {
          if (!endOfInput) {
            return;
          }
          try {
            action.run();
          } catch (IOException | RuntimeException e) {
            throw e;
          } catch (Exception e) {
            throw new IOException(e);
          }
        }

        @Override
        public void close() {}
      };
    }
  }
}
