package io.icebergcdc.commit;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;

/**
 * The partition specs in which an equality delete on a table's primary key is written so that it
 * reaches every live row of the key. Iceberg applies an equality delete only to the data files of
 * its own spec and partition, or to all of them if its spec is unpartitioned; a table partitioned
 * since it got rows (or written by another engine in another spec) holds data files that a delete
 * of its current spec does not reach. So a key's delete goes to its partition in the current spec
 * and in each other spec of the table's live data files, or once to an unpartitioned spec where one
 * of those is unpartitioned, or where one of them is partitioned by a column outside the key and
 * the table has an unpartitioned spec at all.
 *
 * @param specs the specs to write a key's equality delete in, the current one first
 * @param unreached the ids of the specs of live data files that no delete can reach: partitioned by
 *     a column outside the primary key, so that the partition of a key's row there does not follow
 *     from the key, in a table without an unpartitioned spec
 */
public record EqualityDeleteSpecs(List<PartitionSpec> specs, List<Integer> unreached) {

  /**
   * The specs for the deletes of {@code table} written in {@code current}, its spec for them.
   *
   * @param keyIds the field ids of the primary key the deletes are on
   */
  public static EqualityDeleteSpecs of(Table table, PartitionSpec current, Set<Integer> keyIds) {
    List<PartitionSpec> specs = new ArrayList<>();
    List<Integer> unreached = new ArrayList<>();
    specs.add(current);
    if (current.isPartitioned()) {
      for (int other : specsOfOtherData(table, current)) {
        PartitionSpec spec = table.specs().get(other);
        if (spec.fields().stream()
            .filter(field -> !field.transform().isVoid())
            .map(PartitionField::sourceId)
            .allMatch(keyIds::contains)) {
          specs.add(spec);
        } else {
          unreached.add(other);
        }
      }
    }
    PartitionSpec unpartitioned =
        specs.stream().filter(PartitionSpec::isUnpartitioned).findFirst().orElse(null);
    if (unpartitioned == null && !unreached.isEmpty()) {
      // A delete of an unpartitioned spec reaches every file, whatever its spec.
      unpartitioned =
          table.specs().values().stream()
              .filter(PartitionSpec::isUnpartitioned)
              .findFirst()
              .orElse(null);
    }
    if (unpartitioned != null) {
      return new EqualityDeleteSpecs(List.of(unpartitioned), List.of());
    }
    return new EqualityDeleteSpecs(List.copyOf(specs), List.copyOf(unreached));
  }

  /** The ids of the specs other than {@code current} that the table's live data files have. */
  private static Set<Integer> specsOfOtherData(Table table, PartitionSpec current) {
    Set<Integer> others = new TreeSet<>();
    if (table.currentSnapshot() == null) {
      return others;
    }
    for (ManifestFile manifest : table.currentSnapshot().dataManifests(table.io())) {
      if (manifest.partitionSpecId() != current.specId()
          && (manifest.hasAddedFiles() || manifest.hasExistingFiles())) {
        others.add(manifest.partitionSpecId());
      }
    }
    return others;
  }
}
