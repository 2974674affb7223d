package io.icebergcdc.commit;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.deletes.EqualityDeleteWriter;

/**
 * The equality delete files of one write, opened as keys come: one for each spec and partition a
 * key's delete goes to ({@link EqualityDeleteSpecs}).
 *
 * <p><b>Threading:</b> one thread at a time.
 *
 * @param <T> the rows of the keys written
 */
public final class EqualityDeleteFiles<T> {

  /** Opens the writer of an equality delete file of {@code spec}'s {@code partition}. */
  @FunctionalInterface
  public interface Opener<T> {
    EqualityDeleteWriter<T> open(PartitionSpec spec, PartitionKey partition) throws IOException;
  }

  /** An open file's spec and partition. */
  private record At(int specId, PartitionKey partition) {}

  private final List<PartitionSpec> specs;
  private final List<PartitionKey> partitionsOfKey = new ArrayList<>();
  private final Opener<T> opener;
  private final Map<At, EqualityDeleteWriter<T>> writers = new LinkedHashMap<>();

  /**
   * @param specs the specs a key's delete goes to ({@link EqualityDeleteSpecs#specs})
   * @param schema the schema of the rows the keys' partitions are taken from
   */
  public EqualityDeleteFiles(List<PartitionSpec> specs, Schema schema, Opener<T> opener) {
    this.specs = List.copyOf(specs);
    for (PartitionSpec spec : this.specs) {
      partitionsOfKey.add(new PartitionKey(spec, schema));
    }
    this.opener = opener;
  }

  /** Deletes {@code key} in each spec, in the partition of {@code row}, which holds its values. */
  public void delete(StructLike row, T key) throws IOException {
    for (int i = 0; i < specs.size(); i++) {
      PartitionSpec spec = specs.get(i);
      PartitionKey partition = partitionsOfKey.get(i);
      partition.partition(row);
      EqualityDeleteWriter<T> writer = writers.get(new At(spec.specId(), partition));
      if (writer == null) {
        PartitionKey copy = partition.copy();
        writer = opener.open(spec, copy);
        writers.put(new At(spec.specId(), copy), writer);
      }
      writer.write(key);
    }
  }

  /** Whether files are open, which {@link #close} closes. */
  public boolean hasOpenFiles() {
    return !writers.isEmpty();
  }

  /** Closes the open files and returns them; a later delete opens new ones. */
  public List<DeleteFile> close() throws IOException {
    List<DeleteFile> files = new ArrayList<>();
    close(files);
    return files;
  }

  /**
   * Closes the open files, adding each to {@code closed} as it closes (so that a caller can remove
   * them when another fails); a later delete opens new ones. Every file is closed, or tried: the
   * first failure is thrown after, with the others suppressed.
   */
  public void close(List<DeleteFile> closed) throws IOException {
    IOException failure = null;
    for (EqualityDeleteWriter<T> writer : writers.values()) {
      try {
        writer.close();
        closed.add(writer.toDeleteFile());
      } catch (IOException | RuntimeException e) {
        IOException cause = e instanceof IOException io ? io : new IOException(e);
        if (failure == null) {
          failure = cause;
        } else {
          failure.addSuppressed(cause);
        }
      }
    }
    writers.clear();
    if (failure != null) {
      throw failure;
    }
  }
}
