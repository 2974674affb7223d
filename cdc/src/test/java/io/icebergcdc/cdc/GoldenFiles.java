package io.icebergcdc.cdc;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Bytes that a released serializer version wrote, kept under {@code src/test/resources} so that
 * every later release proves it still reads them. Running the tests with {@code
 * -Dgolden.regenerate=true} writes the files for a new version; existing files must never be
 * rewritten.
 */
public final class GoldenFiles {

  private GoldenFiles() {}

  /**
   * The stored bytes of {@code resource}, or, when regenerating, {@code current} after storing it.
   */
  public static byte[] bytes(String resource, byte[] current) {
    if (Boolean.getBoolean("golden.regenerate")) {
      Path file = Paths.get("src/test/resources", resource);
      try {
        Files.createDirectories(file.getParent());
        if (!Files.exists(file)) {
          Files.write(file, current);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    try (InputStream in = GoldenFiles.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("no golden file " + resource + " on the test classpath");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
