package io.icebergcdc.sink;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.flink.CatalogLoader;

/**
 * A loader of a Hadoop, REST or JDBC catalog whose Hadoop configuration is one object for every
 * operator of the JVM that loads a catalog with the same configuration, where Iceberg's loaders
 * give each deserialized operator a copy of its own.
 *
 * <p>A Hadoop {@code Configuration} holds Hadoop's defaults, about 1,800 properties and 350 KB of
 * heap once read. Every writer subtask and committer opens its table through a loader deserialized
 * with it: a job of 300 tables held 900 copies. These catalogs and their file IO only read the
 * configuration they are given, so one copy, read once, serves them all (a catalog given by its
 * class, which may change it, keeps Iceberg's loader). The copies are kept by a digest of their
 * serialized form, for as long as this class is loaded, and load classes through this class's
 * loader, not through the class loader of whichever task read them first.
 *
 * <p>Loads the catalog as Iceberg's loaders do ({@link CatalogUtil#loadCatalog}).
 */
final class SharedConfigurationCatalogLoader implements CatalogLoader {

  private static final long serialVersionUID = 1L;

  /** The configurations of this JVM, by the digest of their serialized form. */
  private static final Map<String, org.apache.hadoop.conf.Configuration> SHARED =
      new ConcurrentHashMap<>();

  private final String name;
  private final String impl;
  private final HashMap<String, String> properties;

  /** Written and read by hand: its properties by name, resolved to a shared configuration. */
  private transient org.apache.hadoop.conf.Configuration hadoop;

  SharedConfigurationCatalogLoader(
      String name,
      String impl,
      Map<String, String> properties,
      org.apache.hadoop.conf.Configuration hadoop) {
    this.name = name;
    this.impl = impl;
    this.properties = new HashMap<>(properties);
    this.hadoop = hadoop;
  }

  private SharedConfigurationCatalogLoader(SharedConfigurationCatalogLoader other) {
    this.name = other.name;
    this.impl = other.impl;
    this.properties = new HashMap<>(other.properties);
    this.hadoop = other.hadoop;
  }

  @Override
  public Catalog loadCatalog() {
    return CatalogUtil.loadCatalog(impl, name, properties, hadoop);
  }

  /** The Hadoop configuration the catalog is loaded with. */
  org.apache.hadoop.conf.Configuration hadoopConfiguration() {
    return hadoop;
  }

  @Override
  @SuppressWarnings({"checkstyle:NoClone", "checkstyle:SuperClone"})
  public CatalogLoader clone() {
    return new SharedConfigurationCatalogLoader(this);
  }

  private void writeObject(ObjectOutputStream out) throws IOException {
    out.defaultWriteObject();
    // Its properties sorted by name, so that equal configurations have equal bytes.
    java.util.TreeMap<String, String> sorted = new java.util.TreeMap<>();
    for (Map.Entry<String, String> property : hadoop) {
      sorted.put(property.getKey(), property.getValue());
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream data = new DataOutputStream(bytes)) {
      data.writeInt(sorted.size());
      for (Map.Entry<String, String> property : sorted.entrySet()) {
        org.apache.hadoop.io.Text.writeString(data, property.getKey());
        org.apache.hadoop.io.Text.writeString(data, property.getValue());
      }
    }
    out.writeObject(bytes.toByteArray());
  }

  private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
    in.defaultReadObject();
    byte[] bytes = (byte[]) in.readObject();
    hadoop = SHARED.computeIfAbsent(digest(bytes), key -> read(bytes));
  }

  private static String digest(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static org.apache.hadoop.conf.Configuration read(byte[] bytes) {
    org.apache.hadoop.conf.Configuration hadoop = new org.apache.hadoop.conf.Configuration(false);
    hadoop.setClassLoader(SharedConfigurationCatalogLoader.class.getClassLoader());
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
      int count = in.readInt();
      for (int i = 0; i < count; i++) {
        hadoop.set(
            org.apache.hadoop.io.Text.readString(in), org.apache.hadoop.io.Text.readString(in));
      }
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
