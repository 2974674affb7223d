package io.icebergcdc.locallake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * S3Proxy and the REST catalog as the other modules' tests will use them: a REST catalog in this
 * JVM, through {@code S3FileIO}, over a REST server that keeps its metadata in S3Proxy. Neither
 * this JVM nor the servers set any AWS SDK checksum option: S3Proxy 4.1.0 takes the SDK's default
 * checksums. The failsafe configuration keeps the servers' own jars off this JVM's class path, so
 * it has what a client module has: iceberg-core, iceberg-aws and the SDK's s3, kms, sts and
 * url-connection-client.
 */
class LocalLakeITCase {

  private static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "data", Types.StringType.get()));

  @Test
  void restCatalogOverS3ProxySurvivesARestart() throws Exception {
    try (LocalS3Store s3 = LocalS3Store.start()) {
      s3.createBucket("lake");
      try (LocalRestCatalog rest =
          LocalRestCatalog.start("s3://lake/warehouse", s3.icebergProperties())) {
        Catalog catalog = catalog("lake", rest, s3, Map.of());
        Namespace namespace = Namespace.of("db");
        TableIdentifier id = TableIdentifier.of(namespace, "events");
        ((SupportsNamespaces) catalog).createNamespace(namespace);
        Table table = catalog.createTable(id, SCHEMA, PartitionSpec.unpartitioned());
        assertThat(table.location()).startsWith("s3://lake/warehouse/");

        DataFile dataFile = writeDataFile(table, List.of(row(1L, "one"), row(2L, "two")));
        table.newAppend().appendFile(dataFile).commit();

        Table reloaded = catalog.loadTable(id);
        Snapshot snapshot = reloaded.currentSnapshot();
        assertThat(snapshot).isNotNull();
        assertThat(snapshot.summary()).containsEntry("added-data-files", "1");
        assertThat(snapshot.summary()).containsEntry("added-records", "2");
        assertThat(onDisk(s3, dataFile.location())).isRegularFile();
        assertThat(onDisk(s3, reloaded.io().newInputFile(metadataLocation(reloaded)).location()))
            .isRegularFile();
        assertThat(read(reloaded)).containsExactlyInAnyOrder("1:one", "2:two");

        rest.stop();
        assertThat(rest.isRunning()).isFalse();
        assertThatThrownBy(() -> ((SupportsNamespaces) catalog).listNamespaces())
            .isInstanceOf(RuntimeException.class);

        rest.start();
        assertThat(catalog.tableExists(id)).isTrue();
        Table afterRestart = catalog.loadTable(id);
        assertThat(afterRestart.currentSnapshot().snapshotId()).isEqualTo(snapshot.snapshotId());
        assertThat(read(afterRestart)).containsExactlyInAnyOrder("1:one", "2:two");

        // The fixture's /v1/oauth/tokens grants a token for any client credential, and no
        // endpoint checks the Authorization header.
        Catalog withCredential =
            catalog("oauth", rest, s3, Map.of("credential", "client:wrong-secret"));
        assertThat(withCredential.tableExists(id)).isTrue();
        Catalog withAnyToken = catalog("token", rest, s3, Map.of("token", "not-a-real-token"));
        assertThat(withAnyToken.tableExists(id)).isTrue();
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> token =
            http.send(
                HttpRequest.newBuilder(URI.create(rest.uri() + "/v1/oauth/tokens"))
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .POST(
                        HttpRequest.BodyPublishers.ofString(
                            "grant_type=client_credentials&client_id=alice&client_secret=x"
                                + "&scope=catalog"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(token.statusCode()).isEqualTo(200);
        assertThat(token.body())
            .contains("\"access_token\":\"client-credentials-token:sub=alice\"");
        HttpResponse<String> config =
            http.send(
                HttpRequest.newBuilder(URI.create(rest.uri() + "/v1/config"))
                    .header("Authorization", "Bearer garbage")
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(config.statusCode()).isEqualTo(200);
      }
    }
  }

  @Test
  void restCatalogOverALocalWarehouse(@TempDir Path warehouse) throws Exception {
    try (LocalRestCatalog rest = LocalRestCatalog.start(warehouse.toString(), Map.of())) {
      Map<String, String> properties = new HashMap<>();
      properties.put("type", "rest");
      properties.put("uri", rest.uri());
      Catalog catalog = CatalogUtil.buildIcebergCatalog("local", properties, null);
      Namespace namespace = Namespace.of("db");
      ((SupportsNamespaces) catalog).createNamespace(namespace);
      Table table =
          catalog.createTable(
              TableIdentifier.of(namespace, "t"), SCHEMA, PartitionSpec.unpartitioned());
      assertThat(Path.of(URI.create(metadataLocation(table)).getPath())).isRegularFile();
    }
  }

  private static Catalog catalog(
      String name, LocalRestCatalog rest, LocalS3Store s3, Map<String, String> extra) {
    Map<String, String> properties = new HashMap<>(s3.icebergProperties());
    properties.put("type", "rest");
    properties.put("uri", rest.uri());
    properties.putAll(extra);
    return CatalogUtil.buildIcebergCatalog(name, properties, null);
  }

  private static Record row(long id, String data) {
    Record record = GenericRecord.create(SCHEMA);
    record.setField("id", id);
    record.setField("data", data);
    return record;
  }

  private static DataFile writeDataFile(Table table, List<Record> rows) throws Exception {
    String location = table.locationProvider().newDataLocation("part-00000.parquet");
    DataWriter<Record> writer =
        Parquet.writeData(table.io().newOutputFile(location))
            .schema(table.schema())
            .createWriterFunc(GenericParquetWriter::create)
            .withSpec(table.spec())
            .overwrite()
            .build();
    try (writer) {
      rows.forEach(writer::write);
    }
    return writer.toDataFile();
  }

  private static List<String> read(Table table) throws Exception {
    List<String> rows = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record record : records) {
        rows.add(record.getField("id") + ":" + record.getField("data"));
      }
    }
    return rows;
  }

  private static String metadataLocation(Table table) {
    return ((org.apache.iceberg.HasTableOperations) table)
        .operations()
        .current()
        .metadataFileLocation();
  }

  /** Where S3Proxy keeps an s3:// object. */
  private static Path onDisk(LocalS3Store s3, String location) {
    URI uri = URI.create(location);
    assertThat(uri.getScheme()).isEqualTo("s3");
    return s3.bucketDirectory(uri.getHost()).resolve(uri.getPath().substring(1));
  }
}
