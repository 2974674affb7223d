package io.icebergcdc.sink;

import io.icebergcdc.commit.OrphanFiles;
import java.io.FileNotFoundException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.SupportsPrefixOperations;

/**
 * The Parquet files under a location, listed through a table's {@link FileIO}: every file whose
 * name ends in {@code .parquet} in the directory (or S3 prefix, taken as a directory) and its
 * subdirectories, leaving out hidden ones ({@code _temporary/}, {@code .name}) as Hive and Spark
 * do; or the one file the location names.
 *
 * <p>A file's location is given as the location the user gave followed by its path below it, so
 * that a table adopting {@code file:///data} records {@code file:///data/a.parquet}, not the {@code
 * file:/data/a.parquet} of a Hadoop listing.
 */
final class ParquetFileListing {

  /** A file found: where it is and its length in bytes. */
  record ListedFile(String location, long size) {}

  private ParquetFileListing() {}

  /**
   * Lists the Parquet files under {@code location}, sorted by location; empty when there are none.
   *
   * @throws IllegalArgumentException when the file IO cannot list a directory
   */
  static List<ListedFile> list(FileIO io, String location) {
    // Without "." and "..": a Hadoop listing names the files under it so, and a file whose path
    // below it is not found is not checked for hidden directories.
    String root =
        withoutTrailingSlash(
            withoutDotSegments(location, io instanceof org.apache.iceberg.hadoop.HadoopFileIO));
    List<ListedFile> files = new ArrayList<>();
    if (io instanceof SupportsPrefixOperations lister) {
      String prefix = normalized(root) + "/";
      for (FileInfo info : listOrEmpty(lister, root + "/")) {
        String found = normalized(info.location());
        if (found.equals(normalized(root))) {
          // A Hadoop listing of a file's own path.
          files.add(new ListedFile(root, info.size()));
          continue;
        }
        String relative = found.startsWith(prefix) ? found.substring(prefix.length()) : null;
        String name = relative != null ? relative : found.substring(found.lastIndexOf('/') + 1);
        if (isParquet(name) && !isHidden(name)) {
          files.add(
              new ListedFile(
                  relative != null ? root + "/" + relative : info.location(), info.size()));
        }
      }
    } else if (!isParquet(root)) {
      throw new IllegalArgumentException(
          "cannot list the files under "
              + location
              + ": the table's file IO "
              + io.getClass().getName()
              + " cannot list files (S3FileIO and HadoopFileIO can); give a single .parquet file");
    }
    if (files.isEmpty() && isParquet(root)) {
      InputFile file = io.newInputFile(root);
      if (file.exists()) {
        files.add(new ListedFile(root, file.getLength()));
      }
    }
    files.sort(Comparator.comparing(ListedFile::location));
    return files;
  }

  private static Iterable<FileInfo> listOrEmpty(SupportsPrefixOperations io, String prefix) {
    List<FileInfo> listed = new ArrayList<>();
    try {
      io.listPrefix(prefix).forEach(listed::add);
    } catch (UncheckedIOException e) {
      if (!(e.getCause() instanceof FileNotFoundException)) {
        throw e;
      }
    }
    return listed;
  }

  /**
   * A location spelt one way for comparison: {@code file:/x}, {@code file:///x} and {@code /x} as
   * {@code /x}; {@code s3a://} and {@code s3n://} as {@code s3://}.
   */
  static String normalized(String location) {
    if (location.startsWith("file:")) {
      return "/" + location.substring("file:".length()).replaceFirst("^/+", "");
    }
    if (location.startsWith("s3a://") || location.startsWith("s3n://")) {
      return "s3://" + location.substring("s3a://".length());
    }
    return location;
  }

  /**
   * {@code location} with its path's repeated slashes and {@code .} and {@code ..} segments
   * resolved, as Hadoop's file systems name the files under it ({@code throughHadoop}: read through
   * Hadoop, which resolves them in any scheme's paths); a location of an object store read through
   * its own file IO (where such a segment is part of a key) as it is.
   */
  static String withoutDotSegments(String location, boolean throughHadoop) {
    String scheme = CatalogDefinition.schemeOf(location);
    int pathStart = 0;
    if (scheme != null) {
      if (!throughHadoop && !FILE_SYSTEMS.contains(scheme.toLowerCase(Locale.ROOT))) {
        return location;
      }
      pathStart = scheme.length() + 1;
      if (location.startsWith("//", pathStart)) {
        int slash = location.indexOf('/', pathStart + 2);
        pathStart = slash < 0 ? location.length() : slash;
      }
    }
    String path = location.substring(pathStart).replaceAll("/{2,}", "/");
    if (path.contains("/.")) {
      path = OrphanFiles.withoutDotSegments(path);
    }
    return location.substring(0, pathStart) + path;
  }

  /** The schemes of file systems whose paths resolve {@code .} and {@code ..}. */
  private static final java.util.Set<String> FILE_SYSTEMS =
      java.util.Set.of("file", "hdfs", "viewfs");

  private static String withoutTrailingSlash(String location) {
    String root = location;
    while (root.endsWith("/") && !root.endsWith("://") && root.length() > 1) {
      root = root.substring(0, root.length() - 1);
    }
    return root;
  }

  private static boolean isParquet(String name) {
    return name.toLowerCase(Locale.ROOT).endsWith(".parquet");
  }

  /** Whether a path below the location has a part that starts with {@code _} or {@code .}. */
  private static boolean isHidden(String relative) {
    for (String part : relative.split("/")) {
      if (part.startsWith("_") || part.startsWith(".")) {
        return true;
      }
    }
    return false;
  }
}
