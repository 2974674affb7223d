package io.icebergcdc.sink;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.flink.CatalogLoader;

/**
 * A loader of a catalog whose Hadoop configuration is one object for every operator of the JVM that
 * loads the same catalog, where Iceberg's loaders give each deserialized operator a copy of its
 * own.
 *
 * <p>A Hadoop {@code Configuration} holds Hadoop's defaults, about 1,800 properties and 350 KB of
 * heap once read. Every writer subtask and committer opens its table through a loader deserialized
 * with it: a job of 300 tables held 900 copies, about 300 MB, a third of its heap. Nothing this
 * project runs changes the configuration it is given (catalogs and file IO read it), so one copy,
 * read once, serves them all. The copies are kept per configuration, by its serialized form, for as
 * long as this class is loaded: the job's class loader on a cluster.
 *
 * <p>Loads the catalog as Iceberg's loaders of Hadoop, REST and custom catalogs do ({@link
 * CatalogUtil#loadCatalog}).
 */
final class SharedConfigurationCatalogLoader implements CatalogLoader {

  private static final long serialVersionUID = 1L;

  /** The configurations of this JVM, by their serialized form. */
  private static final Map<String, org.apache.hadoop.conf.Configuration> SHARED =
      new ConcurrentHashMap<>();

  private final String name;
  private final String impl;
  private final HashMap<String, String> properties;

  /** The configuration as Hadoop writes it ({@code Configuration.write}), Base64. */
  private final String configuration;

  private transient org.apache.hadoop.conf.Configuration shared;

  SharedConfigurationCatalogLoader(
      String name,
      String impl,
      Map<String, String> properties,
      org.apache.hadoop.conf.Configuration hadoop) {
    this.name = name;
    this.impl = impl;
    this.properties = new HashMap<>(properties);
    this.configuration = serialized(hadoop);
  }

  private SharedConfigurationCatalogLoader(SharedConfigurationCatalogLoader other) {
    this.name = other.name;
    this.impl = other.impl;
    this.properties = new HashMap<>(other.properties);
    this.configuration = other.configuration;
    this.shared = other.shared;
  }

  @Override
  public Catalog loadCatalog() {
    return CatalogUtil.loadCatalog(impl, name, properties, hadoopConfiguration());
  }

  /** The configuration shared by every loader of this JVM with the same one. */
  org.apache.hadoop.conf.Configuration hadoopConfiguration() {
    if (shared == null) {
      shared = SHARED.computeIfAbsent(configuration, SharedConfigurationCatalogLoader::read);
    }
    return shared;
  }

  @Override
  @SuppressWarnings({"checkstyle:NoClone", "checkstyle:SuperClone"})
  public CatalogLoader clone() {
    return new SharedConfigurationCatalogLoader(this);
  }

  private static String serialized(org.apache.hadoop.conf.Configuration hadoop) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      hadoop.write(out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return Base64.getEncoder().encodeToString(bytes.toByteArray());
  }

  private static org.apache.hadoop.conf.Configuration read(String serialized) {
    org.apache.hadoop.conf.Configuration hadoop = new org.apache.hadoop.conf.Configuration(false);
    try (DataInputStream in =
        new DataInputStream(new ByteArrayInputStream(Base64.getDecoder().decode(serialized)))) {
      hadoop.readFields(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return hadoop;
  }

  /** The catalog's name and implementation; never its properties, which may hold secrets. */
  @Override
  public String toString() {
    return "catalog " + name + " (" + impl + ")";
  }
}
