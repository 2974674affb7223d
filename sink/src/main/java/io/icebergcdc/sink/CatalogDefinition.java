package io.icebergcdc.sink;

import java.io.Closeable;
import java.io.IOException;
import java.io.Reader;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.rest.RESTCatalogProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Iceberg catalog a job or a SQL table writes through: its type ({@code hadoop}, {@code rest},
 * {@code jdbc}, {@code hive}) or the class of any other catalog ({@code catalog-impl}, such as
 * Glue's or Nessie's), its uri and warehouse, and its further properties ({@code io-impl}, {@code
 * s3.endpoint}, {@code credential}, ...). The command line and the SQL connector share these option
 * names: {@code --catalog-type}, {@code --catalog-uri}, {@code --warehouse}, {@code
 * --catalog-property k=v} mirror {@code catalog-type}, {@code uri}, {@code warehouse}, {@code
 * catalog.k}.
 *
 * <p>Properties whose key names a secret ({@link #isSecret}) are never printed: {@link #toString()}
 * and {@link #describe()} leave them out. They travel in the job graph inside the {@link
 * CatalogLoader}, as for Iceberg's own Flink sink, and never in checkpoint state or snapshot
 * summaries.
 */
public final class CatalogDefinition implements Serializable {

  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(CatalogDefinition.class);

  /** The catalog types the project knows by name; any other catalog is given by its class. */
  public enum Type {
    HADOOP,
    REST,
    JDBC,
    HIVE;

    /** The type of a name, in any case. */
    public static Type of(String name) {
      for (Type type : values()) {
        if (type.name().equalsIgnoreCase(name.trim())) {
          return type;
        }
      }
      throw new IllegalArgumentException(
          "catalog type '"
              + name
              + "' is not known; use hadoop, rest, jdbc or hive, or give the"
              + " class of another catalog as catalog-impl");
    }

    public String lowerCase() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  public static final ConfigOption<String> CATALOG_TYPE =
      ConfigOptions.key("catalog-type")
          .stringType()
          .defaultValue("hadoop")
          .withDescription(
              "The Iceberg catalog: hadoop (tables in a warehouse directory), rest, jdbc or hive.");

  public static final ConfigOption<String> CATALOG_IMPL =
      ConfigOptions.key("catalog-impl")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "The class of another Iceberg catalog (such as org.apache.iceberg.aws.glue"
                  + ".GlueCatalog or org.apache.iceberg.nessie.NessieCatalog), instead of a"
                  + " catalog-type.");

  public static final ConfigOption<String> CATALOG_NAME =
      ConfigOptions.key("catalog-name")
          .stringType()
          .defaultValue("iceberg_cdc")
          .withDescription("The catalog's name, as the catalog and its metrics report it.");

  public static final ConfigOption<String> URI =
      ConfigOptions.key("uri")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "The catalog's address: the REST endpoint, the JDBC URL or the Hive metastore's"
                  + " thrift:// address.");

  public static final ConfigOption<String> PROPERTIES_FILE =
      ConfigOptions.key("catalog-properties-file")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "A Java properties file of further catalog properties, read where the statement is"
                  + " planned: the place for secrets (credential, token, s3.secret-access-key),"
                  + " which Flink would otherwise print with the options of a table or catalog it"
                  + " cannot create");

  public static final ConfigOption<String> WAREHOUSE =
      ConfigOptions.key("warehouse")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "Where tables are kept: the directory of a hadoop catalog (required there), the"
                  + " location of new tables for jdbc and hive, or the warehouse a REST catalog"
                  + " is asked for.");

  /** The prefix of the SQL connector's further catalog properties: {@code catalog.<key>}. */
  public static final String PROPERTY_PREFIX = "catalog.";

  private static final List<String> SECRET_WORDS =
      List.of(
          "secret",
          "password",
          "token",
          "credential",
          "session",
          "private",
          "key-id",
          "header.",
          "sse.key",
          "shared-key.account.key");

  private final String name;
  private final Type type;
  private final String impl;
  private final Map<String, String> properties;

  private CatalogDefinition(String name, Type type, String impl, Map<String, String> properties) {
    this.name = name;
    this.type = type;
    this.impl = impl;
    this.properties = Map.copyOf(properties);
  }

  /** A hadoop catalog over a warehouse directory: the embedded default. */
  public static CatalogDefinition hadoop(String warehouse) {
    return builder().warehouse(warehouse).build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The catalog's name. */
  public String name() {
    return name;
  }

  /** The catalog type, or null when {@link #impl()} names the catalog's class. */
  public Type type() {
    return type;
  }

  /** The class of a catalog given by {@code catalog-impl}, or null. */
  public String impl() {
    return impl;
  }

  /** All the catalog's properties, secrets included: for the catalog only, never to print. */
  public Map<String, String> properties() {
    return properties;
  }

  public String uri() {
    return properties.get(CatalogProperties.URI);
  }

  public String warehouse() {
    return properties.get(CatalogProperties.WAREHOUSE_LOCATION);
  }

  /**
   * The Hadoop configuration of the catalog's file IO: Hadoop's defaults and the class path's
   * {@code core-site.xml}, with local files written by {@link LocalFileSystemWithoutChmod} unless
   * that names another implementation for {@code file:}.
   */
  private static final Pattern SCHEME = Pattern.compile("^([A-Za-z][A-Za-z0-9+.-]*):");

  /**
   * The scheme of a location, as RFC 3986 spells one ({@code file}, {@code s3}, {@code hdfs}), or
   * null for a path without one ({@code /data}, {@code ./warehouse}).
   */
  public static String schemeOf(String location) {
    Matcher scheme = SCHEME.matcher(location);
    return scheme.find() ? scheme.group(1) : null;
  }

  /**
   * Whether Hadoop's default file system ({@code fs.defaultFS} of the class path's {@code
   * core-site.xml}) is this machine's, where a path without a scheme is a local one.
   */
  public static boolean localDefaultFileSystem() {
    return "file"
        .equalsIgnoreCase(
            org.apache.hadoop.fs.FileSystem.getDefaultUri(hadoopConfiguration()).getScheme());
  }

  static org.apache.hadoop.conf.Configuration hadoopConfiguration() {
    org.apache.hadoop.conf.Configuration hadoop = new org.apache.hadoop.conf.Configuration();
    if (hadoop.get("fs.file.impl") == null) {
      hadoop.set("fs.file.impl", LocalFileSystemWithoutChmod.class.getName());
    }
    return hadoop;
  }

  /**
   * {@code properties} with every snapshot of a table loaded, over the catalog server's defaults:
   * the committer commits, which loads every snapshot of the table anyway (Iceberg builds a
   * commit's metadata from all of them, apache/iceberg#18073), and checks a table's history.
   */
  private static Map<String, String> withSnapshotLoadingMode(
      Map<String, String> properties, String mode) {
    Map<String, String> withMode = new java.util.HashMap<>(properties);
    withMode.put(SNAPSHOT_LOADING_MODE, mode);
    return withMode;
  }

  /** A loader of the catalog, for the job's operators. */
  public CatalogLoader loader() {
    org.apache.hadoop.conf.Configuration hadoop = hadoopConfiguration();
    if (impl != null) {
      return CatalogLoader.custom(name, properties, hadoop, impl);
    }
    switch (type) {
      case HADOOP:
        return CatalogLoader.hadoop(name, hadoop, properties);
      case REST:
        return CatalogLoader.rest(name, hadoop, withSnapshotLoadingMode(properties, "all"));
      case JDBC:
        return CatalogLoader.custom(
            name, properties, hadoop, "org.apache.iceberg.jdbc.JdbcCatalog");
      case HIVE:
        // Iceberg's HiveCatalog comes with iceberg-flink; the Hive metastore client does not.
        if (!onClassPath(CatalogUtil.ICEBERG_CATALOG_HIVE)
            || !onClassPath("org.apache.hadoop.hive.conf.HiveConf")) {
          throw new IllegalArgumentException(
              "catalog "
                  + describe()
                  + ": catalog-type hive needs iceberg-hive-metastore and the Hive metastore"
                  + " client, which this jar does not carry; add them to the class path (the"
                  + " README says how)");
        }
        return CatalogLoader.hive(name, hadoop, properties);
      default:
        throw new IllegalStateException("unknown catalog type " + type);
    }
  }

  /**
   * A loader of the catalog for the writers, or null where they load tables as the others do. The
   * writers read a table's current snapshot, schemas, specs and properties, never its history, and
   * keep their tables for the life of their task: a REST catalog loads their tables with only the
   * snapshots that a branch or tag points to ({@code snapshot-loading-mode=refs}, the REST
   * protocol's {@code snapshots=refs}), unless its properties set that mode to {@code all}. The
   * others ({@link #loader()}) load every snapshot.
   */
  public CatalogLoader writersLoader() {
    if (impl != null
        || type != Type.REST
        || "all".equals(snapshotLoadingMode(properties.get(SNAPSHOT_LOADING_MODE)))) {
      return null;
    }
    return CatalogLoader.rest(
        name, hadoopConfiguration(), withSnapshotLoadingMode(properties, "refs"));
  }

  private static final String SNAPSHOT_LOADING_MODE = RESTCatalogProperties.SNAPSHOT_LOADING_MODE;

  /** {@code snapshot-loading-mode} as Iceberg reads it, or null if not given. */
  private static String snapshotLoadingMode(String value) {
    if (value == null) {
      return null;
    }
    // As Iceberg reads it: upper-cased, not trimmed.
    String mode = value.toLowerCase(Locale.ROOT);
    if (!mode.equals("all") && !mode.equals("refs")) {
      throw new IllegalArgumentException(
          "catalog property "
              + SNAPSHOT_LOADING_MODE
              + " must be all or refs, not '"
              + value
              + "'");
    }
    return mode;
  }

  /**
   * Loads the catalog here, for a moment (to create tables, to inspect one), with a failure told as
   * one line naming the catalog: unreachable, refused credentials, a class that is missing.
   */
  public Catalog connect() {
    try {
      return loader().loadCatalog();
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(
          "catalog " + describe() + " cannot be used: " + rootCause(e), e);
    }
  }

  /** The innermost message of a failure, with the type of the exception that carries it. */
  public static String rootCause(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message = root.getMessage();
    String outer = e.getMessage();
    if (root != e && outer != null && !outer.equals(message)) {
      return outer + " (" + root.getClass().getSimpleName() + ": " + message + ")";
    }
    return root.getClass().getSimpleName() + ": " + message;
  }

  /**
   * Closes a catalog loaded for a moment (to create tables, say): a REST catalog holds an HTTP
   * client and a thread that refreshes its token.
   */
  public static void close(Catalog catalog) {
    if (catalog instanceof Closeable closeable) {
      try {
        closeable.close();
      } catch (IOException e) {
        LOG.warn("Closing catalog {} failed", catalog.name(), e);
      }
    }
  }

  /** The catalog for messages: its type or class, uri and warehouse; no other property. */
  public String describe() {
    StringBuilder text = new StringBuilder(impl != null ? impl : type.lowerCase());
    if (uri() != null) {
      text.append(' ').append(redactUri(uri()));
    }
    if (warehouse() != null) {
      text.append(" warehouse ").append(warehouse());
    }
    return text.toString();
  }

  /** The catalog with its properties, secrets shown as {@code ***}. */
  @Override
  public String toString() {
    Map<String, String> shown = new TreeMap<>();
    properties.forEach(
        (k, v) ->
            shown.put(k, isSecret(k) ? "***" : k.equals(CatalogProperties.URI) ? redactUri(v) : v));
    return "catalog " + name + " (" + (impl != null ? impl : type.lowerCase()) + ") " + shown;
  }

  /**
   * Whether a catalog property holds a secret, by its key: tokens, credentials, passwords, S3 keys
   * ({@code s3.access-key-id}, {@code s3.secret-access-key}, {@code s3.session-token}), JDBC
   * passwords ({@code jdbc.password}).
   */
  public static boolean isSecret(String key) {
    String lower = key.toLowerCase(Locale.ROOT);
    for (String word : SECRET_WORDS) {
      if (lower.contains(word)) {
        return true;
      }
    }
    return false;
  }

  /** Catalog properties from a Java properties file, such as a file of secrets. */
  public static Map<String, String> readPropertiesFile(Path file) throws IOException {
    Properties read = new Properties();
    try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      read.load(reader);
    }
    Map<String, String> properties = new TreeMap<>();
    read.stringPropertyNames().forEach(k -> properties.put(k.trim(), read.getProperty(k).trim()));
    return properties;
  }

  /** A URI without the user information some JDBC and REST addresses carry. */
  private static String redactUri(String uri) {
    return uri.replaceAll("//[^/@]*@", "//***@").replaceAll("(?i)(password=)[^&;]*", "$1***");
  }

  private static boolean onClassPath(String className) {
    try {
      Class.forName(className, false, CatalogDefinition.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /**
   * Builds a definition and checks it: a known type, one of type and impl, the uri a rest, jdbc or
   * hive catalog needs, the warehouse a hadoop catalog needs.
   */
  public static final class Builder {
    private String name = CATALOG_NAME.defaultValue();
    private String type;
    private String impl;
    private final Map<String, String> properties = new LinkedHashMap<>();

    private Builder() {}

    public Builder name(String name) {
      this.name = name;
      return this;
    }

    /** hadoop, rest, jdbc or hive; hadoop when neither this nor {@link #impl} is given. */
    public Builder type(String type) {
      this.type = type;
      return this;
    }

    public Builder impl(String impl) {
      this.impl = impl;
      return this;
    }

    public Builder uri(String uri) {
      return property(CatalogProperties.URI, uri);
    }

    public Builder warehouse(String warehouse) {
      return property(CatalogProperties.WAREHOUSE_LOCATION, warehouse);
    }

    public Builder property(String key, String value) {
      if (value != null) {
        properties.put(key, value);
      }
      return this;
    }

    public Builder properties(Map<String, String> properties) {
      properties.forEach(this::property);
      return this;
    }

    /**
     * A path without a scheme that is relative or holds dot segments, on a default file system that
     * is this machine's (with {@code fs.defaultFS} on HDFS, a relative path is under the user's
     * home there, the same for every process).
     */
    private static boolean isLocalPath(String location) {
      return !location.isBlank()
          && schemeOf(location) == null
          && (!location.startsWith("/") || location.contains("/."))
          && localDefaultFileSystem();
    }

    /** The definition; an {@link IllegalArgumentException} names what is missing or wrong. */
    public CatalogDefinition build() {
      snapshotLoadingMode(properties.get(SNAPSHOT_LOADING_MODE));
      if (impl != null && type != null) {
        throw new IllegalArgumentException(
            "give catalog-type or catalog-impl, not both (catalog-type "
                + type
                + ", catalog-impl "
                + impl
                + ")");
      }
      Type parsed = impl != null ? null : Type.of(type == null ? "hadoop" : type);
      String what = impl != null ? "catalog " + impl : "catalog-type " + parsed.lowerCase();
      if (parsed != null
          && parsed != Type.HADOOP
          && properties.get(CatalogProperties.URI) == null) {
        throw new IllegalArgumentException(what + " needs the catalog's uri");
      }
      String warehouse = properties.get(CatalogProperties.WAREHOUSE_LOCATION);
      if (parsed == Type.HADOOP && warehouse == null) {
        throw new IllegalArgumentException(what + " needs a warehouse directory");
      }
      if (parsed == Type.HADOOP && warehouse.matches("(?i)(s3a?|gs|abfss?|oss)://.*")) {
        // Its commit renames a metadata file, which an object store does not do atomically.
        throw new IllegalArgumentException(
            "catalog-type hadoop is not safe on an object store ("
                + warehouse
                + "); use a rest, jdbc or hive catalog for tables there");
      }
      if (warehouse != null && parsed != null && parsed != Type.REST && isLocalPath(warehouse)) {
        // Where it was given: Iceberg keeps a relative warehouse as it is, so that tables created
        // in it record their files by paths relative to the working directory of whichever
        // process writes or reads them; and Hadoop names the files of a location with "." or
        // ".." segments without them, which a listing under the location does not.
        properties.put(
            CatalogProperties.WAREHOUSE_LOCATION,
            java.nio.file.Paths.get(warehouse).toAbsolutePath().normalize().toString());
      }
      if (name == null || name.isBlank()) {
        throw new IllegalArgumentException("the catalog name must not be empty");
      }
      return new CatalogDefinition(name, parsed, impl, properties);
    }
  }
}
