package io.icebergcdc.sink;

import java.io.IOException;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;

/**
 * The end of the commit chain that runs an {@link AfterLastCommit} when its input ends, which is
 * after the committer's last commit (its end of input comes first, chained or not). It receives
 * nothing: the committer emits nothing. Not run by speculative attempts, unlike a discarding end.
 */
final class EndOfInputSink implements Sink<Void> {

  private static final long serialVersionUID = 1L;

  private final AfterLastCommit action;

  EndOfInputSink(AfterLastCommit action) {
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
