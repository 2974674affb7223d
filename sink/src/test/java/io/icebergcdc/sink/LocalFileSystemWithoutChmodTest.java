package io.icebergcdc.sink;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocalFileSystemWithoutChmodTest {

  @TempDir java.nio.file.Path dir;

  private static FileSystem fileSystem() throws Exception {
    Configuration conf = CatalogDefinition.hadoopConfiguration();
    // A file system of its own, not one an earlier test left in Hadoop's cache.
    conf.setBoolean("fs.file.impl.disable.cache", true);
    return FileSystem.get(URI.create("file:///"), conf);
  }

  @Test
  void theCatalogsWriteLocalFilesWithItAndTheirPermissionsAreSet() throws Exception {
    try (FileSystem fs = fileSystem()) {
      assertThat(fs).isInstanceOf(LocalFileSystemWithoutChmod.class);
      Path file = new Path(dir.resolve("data.parquet").toUri());
      try (FSDataOutputStream out =
          fs.create(file, new FsPermission((short) 0640), true, 4096, (short) 1, 1 << 20, null)) {
        out.write(new byte[] {1, 2, 3});
      }
      assertThat(Files.readAllBytes(dir.resolve("data.parquet"))).containsExactly(1, 2, 3);
      assertThat(
              PosixFilePermissions.toString(
                  Files.getPosixFilePermissions(dir.resolve("data.parquet"))))
          .isEqualTo("rw-r-----");
      // Its checksum beside it, as Hadoop's local file system writes one.
      assertThat(dir.resolve(".data.parquet.crc")).exists();

      fs.setPermission(file, new FsPermission((short) 0604));
      assertThat(
              PosixFilePermissions.toString(
                  Files.getPosixFilePermissions(dir.resolve("data.parquet"))))
          .isEqualTo("rw----r--");
    }
  }
}
