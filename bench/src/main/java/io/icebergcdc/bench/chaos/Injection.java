package io.icebergcdc.bench.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;

/**
 * The failures the chaos run asks its job to fail with, passed through a directory that both
 * processes see: the driver arms a kind by creating {@code armed/<kind>}; the first hook of the job
 * to meet it moves it to {@code fired/<kind>-<time>} (a rename, so exactly one hook takes it, and
 * it is recorded even if the process is killed next) and throws. Kinds:
 *
 * <ul>
 *   <li>{@code writer}: a writer fails creating a data file ({@link ChaosFileIO});
 *   <li>{@code file-io}: the committer fails writing a manifest, in the middle of its commit;
 *   <li>{@code before-commit}, {@code after-commit}: the committer fails just before or just after
 *       its Iceberg commit ({@link ChaosListener}).
 * </ul>
 */
public final class Injection {

  /** The system property that names the control directory in the job's JVM. */
  public static final String CONTROL_PROPERTY = "chaos.control";

  private Injection() {}

  static Path control() {
    String dir = System.getProperty(CONTROL_PROPERTY);
    return dir == null ? null : Paths.get(dir);
  }

  /** Arms one failure of {@code kind}. */
  public static void arm(Path control, String kind) throws IOException {
    Files.createDirectories(control.resolve("armed"));
    Files.createDirectories(control.resolve("fired"));
    Files.write(control.resolve("armed").resolve(kind), new byte[0]);
  }

  /** Whether the failure of {@code kind} armed last has fired. */
  public static boolean fired(Path control, String kind) {
    return !Files.exists(control.resolve("armed").resolve(kind));
  }

  /** Disarms {@code kind}, if it has not fired; true if it had not. */
  public static boolean disarm(Path control, String kind) throws IOException {
    return Files.deleteIfExists(control.resolve("armed").resolve(kind));
  }

  /** Throws if a failure of {@code kind} is armed, taking it. */
  static void failIfArmed(String kind, String where) {
    Path control = control();
    if (control == null) {
      return;
    }
    Path armed = control.resolve("armed").resolve(kind);
    if (!Files.exists(armed)) {
      return;
    }
    try {
      Files.move(
          armed,
          control.resolve("fired").resolve(kind + "-" + System.nanoTime()),
          StandardCopyOption.ATOMIC_MOVE);
    } catch (NoSuchFileException e) {
      return; // another hook took it
    } catch (AtomicMoveNotSupportedException e) {
      throw new IllegalStateException("the chaos control directory must allow renames", e);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    throw new InjectedFailure("injected " + kind + " failure " + where);
  }

  /** A failure the chaos run injected. */
  public static final class InjectedFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    InjectedFailure(String message) {
      super(message);
    }
  }
}
