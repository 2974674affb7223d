package io.icebergcdc.sink;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.io.nativeio.NativeIO;

/**
 * Hadoop's local file system ({@code file:}), whose tables' files are written without starting a
 * process for each: Hadoop sets the permissions of every file it creates, and without its native
 * library, which the jars do not carry, it does so by running {@code chmod}. A job that commits
 * often to local tables started processes all the time (one for each data, delete, manifest and
 * metadata file, and one more for its checksum file), and each start of a process from a large JVM
 * with many threads costs the machine far more than the write. This one sets the permissions
 * through Java's file API; where that cannot (no POSIX file attributes, a sticky bit), Hadoop's own
 * way.
 *
 * <p>Catalogs of this project use it for {@code file:} unless the Hadoop configuration names
 * another implementation ({@code fs.file.impl}).
 */
public final class LocalFileSystemWithoutChmod extends LocalFileSystem {

  public LocalFileSystemWithoutChmod() {
    super(new Raw());
  }

  /** The raw file system underneath the checksums. */
  static final class Raw extends RawLocalFileSystem {
    @Override
    public void setPermission(Path path, FsPermission permission) throws IOException {
      if (NativeIO.isAvailable() || permission.getStickyBit()) {
        super.setPermission(path, permission);
        return;
      }
      try {
        Files.setPosixFilePermissions(
            pathToFile(path).toPath(), PosixFilePermissions.fromString(permission.toString()));
      } catch (UnsupportedOperationException | IllegalArgumentException e) {
        super.setPermission(path, permission);
      }
    }
  }
}
