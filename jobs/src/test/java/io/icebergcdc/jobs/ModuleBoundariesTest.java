package io.icebergcdc.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Each module's {@code internal} packages are its own: no class of another module extends, calls or
 * names them. Checked on the compiled main classes of every module this one depends on (all but the
 * benchmarks), each module known by its package ({@code io.icebergcdc.<module>}).
 */
class ModuleBoundariesTest {

  /** A class's module and, if it lies in one, its internal package's module. */
  private static final Pattern MODULE = Pattern.compile("^io\\.icebergcdc\\.([a-z]+)\\.");

  private static final Pattern INTERNAL =
      Pattern.compile("^io\\.icebergcdc\\.([a-z]+)\\.internal\\.");

  @Test
  void noModuleUsesAnotherModulesInternalPackages() {
    JavaClasses classes =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            // The other modules are jars here; their test jars are not what they ship.
            .withImportOption(location -> !location.contains("-tests.jar"))
            .importPackages("io.icebergcdc");
    Set<String> modules = new TreeSet<>();
    Set<String> crossings = new TreeSet<>();
    for (JavaClass origin : classes) {
      String from = module(origin.getName());
      if (from == null) {
        continue;
      }
      modules.add(from);
      for (Dependency dependency : origin.getDirectDependenciesFromSelf()) {
        String target = dependency.getTargetClass().getName();
        Matcher internal = INTERNAL.matcher(target);
        if (internal.find() && !internal.group(1).equals(from)) {
          crossings.add(from + " -> " + target);
        }
      }
    }

    // The classes of every module were found (not only this one's, from its own target folder).
    assertThat(modules).contains("cdc", "capture", "dedup", "sink", "commit", "jobs");
    assertThat(crossings)
        .as("uses of another module's internal package (module -> class)")
        .isEmpty();
  }

  private static String module(String className) {
    Matcher matcher = MODULE.matcher(className);
    return matcher.find() ? matcher.group(1) : null;
  }
}
