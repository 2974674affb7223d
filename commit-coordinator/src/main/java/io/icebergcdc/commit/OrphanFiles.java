package io.icebergcdc.commit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.ReachableFileUtil;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.SupportsPrefixOperations;

/**
 * The files under a table's locations that none of its metadata references: not a metadata file of
 * its log, a manifest list, a manifest, a data or delete file of a manifest, or a statistics file
 * of any snapshot it keeps. These are orphans, or files of a write still in flight; which of them
 * may be deleted is for the caller to decide (the committer, by what it knows of its own
 * checkpoints and by age; {@code inspect} only counts them).
 *
 * <p>Locations are compared by their path alone, without scheme and authority ({@code file:/a},
 * {@code file:///a} and {@code /a} are one file), so that a file named in another form than the
 * listing's is kept rather than taken for an orphan. Only files of the kinds a table consists of
 * are considered ({@code .parquet}, {@code .avro}, {@code .orc}, {@code .puffin}, {@code
 * .metadata.json}): {@code version-hint.text} and anything else stored beside the table are never
 * candidates.
 */
public final class OrphanFiles {

  private OrphanFiles() {}

  /**
   * A file no metadata of the table references.
   *
   * @param underTableLocation whether the file is under the table's location, rather than under a
   *     data or metadata location that properties put elsewhere, which other tables may share
   */
  public record Candidate(
      String location,
      long sizeBytes,
      long modifiedMillis,
      OwnedFileNames.Owner owner,
      boolean underTableLocation) {}

  /** Whether the table's file IO can list its files (Hadoop's and S3's can). */
  public static boolean canList(Table table) {
    return table.io() instanceof SupportsPrefixOperations;
  }

  /**
   * The unreferenced files under the table's location (and its data and metadata locations, where
   * properties move them elsewhere): listed first, then compared with what the table's current
   * metadata references, so that a file committed meanwhile counts as referenced.
   *
   * @throws UnsupportedOperationException when the table's file IO cannot list
   */
  public static List<Candidate> unreferenced(Table table) {
    if (!canList(table)) {
      throw new UnsupportedOperationException(
          "the file IO of table "
              + table.name()
              + " ("
              + table.io().getClass().getName()
              + ")"
              + " cannot list files");
    }
    SupportsPrefixOperations io = (SupportsPrefixOperations) table.io();
    List<FileInfo> listed = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (String root : roots(table)) {
      String prefix = root.endsWith("/") ? root : root + "/";
      String normalizedRoot = normalize(prefix) + "/";
      if (!normalizedRoot.startsWith("/") || normalizedRoot.equals("//")) {
        // A relative location (a listing names files by absolute paths, so none would match),
        // or one that resolves to the root, under which every file would.
        continue;
      }
      for (FileInfo file : isLocal(table, root) ? listLocally(root) : io.listPrefix(prefix)) {
        String path = normalize(file.location());
        if (path.startsWith(normalizedRoot) && isTableFile(path) && seen.add(path)) {
          listed.add(file);
        }
      }
    }
    table.refresh();
    Set<String> referenced = referenced(table);
    List<Candidate> candidates = new ArrayList<>();
    String tableRoot = normalize(table.location()) + "/";
    for (FileInfo file : listed) {
      String path = normalize(file.location());
      if (!referenced.contains(path)) {
        candidates.add(
            new Candidate(
                file.location(),
                file.size(),
                file.createdAtMillis(),
                OwnedFileNames.ownerOf(file.location()),
                path.startsWith(tableRoot)));
      }
    }
    return candidates;
  }

  /** Every file the table's current metadata references, as {@link #normalize normalized} paths. */
  public static Set<String> referenced(Table table) {
    FileIO io = table.io();
    Map<Integer, PartitionSpec> specs = table.specs();
    Set<String> referenced = new HashSet<>();
    ReachableFileUtil.metadataFileLocations(table, false)
        .forEach(l -> referenced.add(normalize(l)));
    ReachableFileUtil.manifestListLocations(table).forEach(l -> referenced.add(normalize(l)));
    ReachableFileUtil.statisticsFilesLocations(table).forEach(l -> referenced.add(normalize(l)));
    Set<String> manifestsRead = new HashSet<>();
    for (Snapshot snapshot : table.snapshots()) {
      for (ManifestFile manifest : snapshot.allManifests(io)) {
        if (!manifestsRead.add(manifest.path())) {
          continue;
        }
        referenced.add(normalize(manifest.path()));
        try (CloseableIterable<? extends ContentFile<?>> files =
            contentFiles(manifest, io, specs)) {
          for (ContentFile<?> file : files) {
            referenced.add(normalize(file.location()));
          }
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    }
    return referenced;
  }

  private static CloseableIterable<? extends ContentFile<?>> contentFiles(
      ManifestFile manifest, FileIO io, Map<Integer, PartitionSpec> specs) {
    List<String> columns = List.of("file_path");
    switch (manifest.content()) {
      case DATA:
        return ManifestFiles.read(manifest, io, specs).select(columns);
      case DELETES:
        return ManifestFiles.readDeleteManifest(manifest, io, specs).select(columns);
      default:
        throw new IllegalStateException("unknown manifest content " + manifest.content());
    }
  }

  /** Whether a location is on the local file system: a {@code file:} URI, or a path there. */
  private static boolean isLocal(Table table, String location) {
    if (location.startsWith("file:")) {
      return true;
    }
    return location.startsWith("/")
        && table.io() instanceof org.apache.iceberg.hadoop.HadoopFileIO hadoop
        && hadoop.getConf().get("fs.defaultFS", "file:///").startsWith("file:");
  }

  /**
   * The files under a local directory, listed by Java rather than through Hadoop's local file
   * system, which starts an {@code ls} process per file to read its permissions. A file deleted
   * while the directory is walked (an old metadata file, say) is left out.
   */
  private static List<FileInfo> listLocally(String root) {
    java.nio.file.Path dir = java.nio.file.Paths.get(normalize(root));
    List<FileInfo> files = new ArrayList<>();
    if (!java.nio.file.Files.isDirectory(dir)) {
      return files;
    }
    try {
      java.nio.file.Files.walkFileTree(
          dir,
          new java.nio.file.SimpleFileVisitor<>() {
            @Override
            public java.nio.file.FileVisitResult visitFile(
                java.nio.file.Path file, java.nio.file.attribute.BasicFileAttributes attributes) {
              if (attributes.isRegularFile()) {
                files.add(
                    new FileInfo(
                        file.toString(),
                        attributes.size(),
                        attributes.lastModifiedTime().toMillis()));
              }
              return java.nio.file.FileVisitResult.CONTINUE;
            }

            @Override
            public java.nio.file.FileVisitResult visitFileFailed(
                java.nio.file.Path file, IOException e) throws IOException {
              if (e instanceof java.nio.file.NoSuchFileException) {
                return java.nio.file.FileVisitResult.CONTINUE;
              }
              throw e;
            }
          });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return files;
  }

  private static Set<String> roots(Table table) {
    Set<String> roots = new LinkedHashSet<>();
    roots.add(table.location());
    for (String key :
        List.of(TableProperties.WRITE_DATA_LOCATION, TableProperties.WRITE_METADATA_LOCATION)) {
      String location = table.properties().get(key);
      if (location != null && !normalize(location).startsWith(normalize(table.location()) + "/")) {
        roots.add(location);
      }
    }
    return roots;
  }

  private static boolean isTableFile(String path) {
    String name = path.substring(path.lastIndexOf('/') + 1);
    return !name.startsWith(".")
        && (name.endsWith(".parquet")
            || name.endsWith(".avro")
            || name.endsWith(".orc")
            || name.endsWith(".puffin")
            || name.endsWith(".metadata.json"));
  }

  /**
   * A location's path without scheme and authority, without repeated or trailing slashes, and
   * without {@code .} and {@code ..} segments: Hadoop's file systems name a table's files with its
   * location resolved so, where a table's own location, as its catalog was given it (a relative
   * {@code --warehouse} made absolute), may keep them, and a listing under it names them as it
   * does. On an object store, where such a segment is part of a key, two keys that resolve alike
   * count as one: a listed file then counts as referenced, never the other way round.
   */
  public static String normalize(String location) {
    String path = location;
    int colon = path.indexOf(':');
    int slash = path.indexOf('/');
    if (colon > 0 && (slash < 0 || colon < slash)) {
      path = path.substring(colon + 1);
      if (path.startsWith("//")) {
        int end = path.indexOf('/', 2);
        path = end < 0 ? "/" : path.substring(end);
      }
    }
    path = path.replaceAll("/{2,}", "/");
    if (path.contains("/.") || path.startsWith(".")) {
      path = withoutDotSegments(path);
    }
    return path.length() > 1 && path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
  }

  /**
   * {@code path}, the path of a location without its scheme and authority, with its {@code .}
   * segments left out and each {@code ..} taking the segment before it (none above the root), as
   * Hadoop's {@code Path} resolves them.
   */
  public static String withoutDotSegments(String path) {
    java.util.ArrayDeque<String> kept = new java.util.ArrayDeque<>();
    for (String segment : path.split("/", -1)) {
      if (segment.equals("..")) {
        if (!kept.isEmpty() && !kept.peekLast().isEmpty()) {
          kept.removeLast();
        }
      } else if (!segment.equals(".")) {
        kept.addLast(segment);
      }
    }
    String resolved = String.join("/", kept);
    return path.startsWith("/") && !resolved.startsWith("/") ? "/" + resolved : resolved;
  }
}
