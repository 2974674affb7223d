package io.icebergcdc.jobs.cli;

import io.icebergcdc.sink.CatalogDefinition;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;

/**
 * The catalog flags every command shares, named as the SQL connector's options: {@code
 * --catalog-type}, {@code --catalog-impl}, {@code --catalog-name}, {@code --catalog-uri}, {@code
 * --warehouse}, {@code --catalog-property key=value} and {@code --catalog-properties-file}. Secrets
 * are read from the file only: a secret given on the command line would be seen by every user of
 * the machine ({@code ps}) and kept in shell histories.
 */
final class CatalogFlags {

  private CatalogFlags() {}

  static final String PROPERTY = "catalog-property";
  static final String PROPERTIES_FILE = "catalog-properties-file";

  static final List<Flag> FLAGS =
      List.of(
          Flag.of(CatalogDefinition.CATALOG_TYPE, "hadoop|rest|jdbc|hive"),
          Flag.of(CatalogDefinition.CATALOG_IMPL, "<class>"),
          Flag.of(CatalogDefinition.CATALOG_NAME, "<name>"),
          Flag.of(CatalogDefinition.URI, "<uri>"),
          Flag.of(CatalogDefinition.WAREHOUSE, "<dir or uri>"),
          Flag.of(
                  PROPERTY,
                  "<key=value>",
                  "A further catalog property, such as io-impl=org.apache.iceberg.aws.s3.S3FileIO,"
                      + " s3.endpoint=http://host:9000 or s3.path-style-access=true. Not for"
                      + " secrets: those go in the properties file.")
              .repeated(),
          Flag.of(
              PROPERTIES_FILE,
              "<file>",
              "A Java properties file of catalog properties, for secrets such as credential,"
                  + " token, s3.access-key-id, s3.secret-access-key or jdbc.password; read when"
                  + " the job starts, never printed."));

  /**
   * The catalog of the flags.
   *
   * @param fallbackWarehouse the warehouse of a hadoop catalog when none is given, or null to
   *     require one
   */
  static CatalogDefinition definition(Arguments args, String fallbackWarehouse) {
    String command = args.command();
    String type = args.optional(CatalogDefinition.CATALOG_TYPE.key(), null);
    String impl = args.optional(CatalogDefinition.CATALOG_IMPL.key(), null);
    String warehouse = args.optional(CatalogDefinition.WAREHOUSE.key(), null);
    boolean hadoop = impl == null && (type == null || type.equalsIgnoreCase("hadoop"));
    if (hadoop && warehouse == null) {
      if (fallbackWarehouse == null) {
        throw new Arguments.UsageException(
            command + ": --warehouse is required (the directory of the hadoop catalog)");
      }
      warehouse = fallbackWarehouse;
    }
    if (hadoop
        && CatalogDefinition.schemeOf(warehouse) == null
        && CatalogDefinition.localDefaultFileSystem()) {
      warehouse = localDirectory(command, warehouse);
    }
    CatalogDefinition.Builder catalog =
        CatalogDefinition.builder()
            .type(type)
            .impl(impl)
            .name(args.optional(CatalogDefinition.CATALOG_NAME.key(), "iceberg_cdc"))
            .uri(args.optional("catalog-uri", null))
            .warehouse(warehouse);
    for (String pair : args.all(PROPERTY)) {
      int eq = pair.indexOf('=');
      if (eq <= 0) {
        throw new Arguments.UsageException(
            command + ": --" + PROPERTY + " takes key=value, not '" + pair + "'");
      }
      String key = pair.substring(0, eq).trim();
      if (CatalogDefinition.isSecret(key)) {
        throw new Arguments.UsageException(
            command
                + ": --"
                + PROPERTY
                + " "
                + key
                + " is a secret; put it in the file of --"
                + PROPERTIES_FILE
                + " instead of on the command line");
      }
      catalog.property(key, pair.substring(eq + 1).trim());
    }
    String file = args.optional(PROPERTIES_FILE, null);
    if (file != null) {
      catalog.properties(readFile(command, file));
    }
    try {
      return catalog.build();
    } catch (IllegalArgumentException e) {
      throw new Arguments.UsageException(command + ": " + e.getMessage());
    }
  }

  private static Map<String, String> readFile(String command, String file) {
    try {
      return CatalogDefinition.readPropertiesFile(Paths.get(file));
    } catch (IOException e) {
      throw new Arguments.UsageException(
          command + ": cannot read --" + PROPERTIES_FILE + " " + file + ": " + e.getMessage());
    }
  }

  /**
   * A warehouse directory on this machine, absolute and without {@code .} or {@code ..} segments
   * (the tables' locations keep the warehouse as given, where Hadoop names their files without
   * them); refused when it is a file.
   */
  private static String localDirectory(String command, String warehouse) {
    Path path = Paths.get(warehouse).toAbsolutePath().normalize();
    if (Files.exists(path) && !Files.isDirectory(path)) {
      throw new Arguments.UsageException(
          command + ": --warehouse " + warehouse + " is a file, not a directory");
    }
    return path.toString();
  }
}
