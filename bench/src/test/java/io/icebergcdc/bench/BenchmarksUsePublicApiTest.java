package io.icebergcdc.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import java.nio.file.Paths;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The benchmarks measure what the modules ship, through what they make public: no class of theirs
 * lies in another module's package or uses an {@code internal} one (the modules' own rule is {@code
 * ModuleBoundariesTest} of the job jar, which does not see the benchmarks).
 */
class BenchmarksUsePublicApiTest {

  @Test
  void theBenchmarksUseNoModulesInternalPackages() {
    // This module's compiled classes only: the other modules are jars or, in a build of the whole
    // project that stops before packaging, class folders of their own.
    JavaClasses classes = new ClassFileImporter().importPath(Paths.get("target", "classes"));
    Set<String> elsewhere = new TreeSet<>();
    Set<String> internal = new TreeSet<>();
    for (JavaClass origin : classes) {
      if (!origin.getPackageName().startsWith("io.icebergcdc.bench")) {
        elsewhere.add(origin.getName());
      }
      for (Dependency dependency : origin.getDirectDependenciesFromSelf()) {
        String target = dependency.getTargetClass().getName();
        if (target.startsWith("io.icebergcdc.") && target.contains(".internal.")) {
          internal.add(origin.getName() + " -> " + target);
        }
      }
    }
    assertThat(classes).as("the benchmarks' classes were found").isNotEmpty();
    assertThat(elsewhere).as("benchmark classes in another module's package").isEmpty();
    assertThat(internal).as("uses of a module's internal package").isEmpty();
  }
}
