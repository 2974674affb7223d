package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.jobs.demo.ChangelogGenerator;
import io.icebergcdc.locallake.LocalRestCatalog;
import io.icebergcdc.locallake.LocalS3Store;
import io.icebergcdc.sink.CatalogDefinition;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The job jar's commands against real catalogs, as a user runs them: {@code apply} and {@code
 * inspect} on Iceberg's REST catalog server with tables on S3Proxy, the secrets in a properties
 * file; and the failures a user meets first (an unreachable catalog, refused storage credentials, a
 * missing bucket), each one line, with nothing left half-created.
 */
class CatalogCommandsITCase {

  static LakeServers lake;
  static LocalS3Store s3;
  static LocalRestCatalog rest;

  @TempDir Path dir;

  @BeforeAll
  static void startServers() throws Exception {
    JobJar.assertBuilt();
    lake = LakeServers.start("cli-lake");
    s3 = lake.s3;
    rest = lake.rest;
  }

  @AfterAll
  static void stopServers() throws Exception {
    if (lake != null) {
      lake.close();
    }
  }

  private JobJar.Result run(List<String> args) throws Exception {
    return JobJar.run(dir, args);
  }

  /** The catalog flags of the REST catalog, with the S3 keys in a properties file. */
  private List<String> restFlags(String secretKey) throws Exception {
    Path secrets =
        Files.writeString(
            dir.resolve("catalog-secrets.properties"),
            "s3.access-key-id=" + s3.accessKey() + "\ns3.secret-access-key=" + secretKey + "\n");
    return List.of(
        "--catalog-type",
        "rest",
        "--catalog-uri",
        rest.uri(),
        "--catalog-property",
        "io-impl=org.apache.iceberg.aws.s3.S3FileIO",
        "--catalog-property",
        "s3.endpoint=" + s3.endpoint(),
        "--catalog-property",
        "s3.path-style-access=true",
        "--catalog-property",
        "client.region=" + s3.region(),
        "--catalog-property",
        "http-client.type=urlconnection",
        "--catalog-properties-file",
        secrets.toString());
  }

  private Path changes() throws Exception {
    ChangelogGenerator.Changelog changelog =
        new ChangelogGenerator(3_000, 300, 0.1, 0.02, 7L).generate();
    Path file = dir.resolve("changes.jsonl");
    changelog.writeTo(file);
    return file;
  }

  private static List<String> concat(List<String> first, String... more) {
    List<String> all = new ArrayList<>(first);
    all.addAll(List.of(more));
    return all;
  }

  private static Catalog restCatalog() {
    return lake.restCatalog().connect();
  }

  @Test
  void appliesAndInspectsATableOfARestCatalogOnS3() throws Exception {
    Path changes = changes();
    List<String> apply =
        concat(
            List.of("apply", "--source", "file", "--path", changes.toString()),
            "--table",
            "cli_db.items",
            "--primary-key",
            "id",
            "--checkpoint-interval",
            "1s");
    JobJar.Result applied = run(concat(apply, restFlags(s3.secretKey()).toArray(new String[0])));
    assertThat(applied.status()).as(applied.err()).isZero();
    assertThat(applied.out()).contains("to rest " + rest.uri());

    JobJar.Result inspected =
        run(
            concat(
                List.of("inspect", "--table", "cli_db.items"),
                restFlags(s3.secretKey()).toArray(new String[0])));
    assertThat(inspected.status()).as(inspected.err()).isZero();
    assertThat(inspected.out())
        .contains("primary key [id]")
        .contains(lake.warehouse())
        .containsPattern("Rows \\(deletes applied\\): \\d+");
    for (JobJar.Result result : List.of(applied, inspected)) {
      assertThat(result.out() + result.err()).doesNotContain(s3.secretKey());
    }
  }

  @Test
  void anUnreachableCatalogIsOneLineNamingIt() throws Exception {
    int closed;
    try (ServerSocket socket = new ServerSocket(0)) {
      closed = socket.getLocalPort();
    }
    JobJar.Result result =
        run(
            List.of(
                "inspect",
                "--table",
                "a.b",
                "--catalog-type",
                "rest",
                "--catalog-uri",
                "http://127.0.0.1:" + closed));
    assertThat(result.status()).isEqualTo(1);
    assertThat(result.err().strip().lines().filter(l -> l.startsWith("error:")).count())
        .isEqualTo(1);
    assertThat(result.lastErrorLine())
        .startsWith("error: catalog rest http://127.0.0.1:" + closed + " cannot be used: ");
  }

  @Test
  void refusedStorageCredentialsFailBeforeTheJobAndLeaveNoTable() throws Exception {
    Path changes = changes();
    List<String> apply =
        concat(
            List.of("apply", "--source", "file", "--path", changes.toString()),
            "--table",
            "refused_db.items",
            "--primary-key",
            "id");
    JobJar.Result result = run(concat(apply, restFlags("not-the-secret").toArray(new String[0])));
    assertThat(result.status()).isEqualTo(1);
    assertThat(result.lastErrorLine())
        .startsWith("error: catalog rest " + rest.uri())
        .contains("cannot write to the location of table refused_db.items")
        .contains("403");
    Catalog catalog = restCatalog();
    assertThat(catalog.tableExists(TableIdentifier.of("refused_db", "items"))).isFalse();
    assertThat(((SupportsNamespaces) catalog).namespaceExists(Namespace.of("refused_db")))
        .isFalse();
    CatalogDefinition.close(catalog);
  }

  @Test
  void aMissingBucketFailsBeforeTheJobAndLeavesNoTableInAJdbcCatalog() throws Exception {
    CatalogDefinition jdbc = JdbcCatalogs.fresh("icebergcdc_cli_catalog", "s3://no-such-bucket/wh");
    Path secrets =
        Files.writeString(
            dir.resolve("secrets.properties"),
            "s3.access-key-id=" + s3.accessKey() + "\ns3.secret-access-key=" + s3.secretKey());
    List<String> args =
        List.of(
            "apply",
            "--source",
            "file",
            "--path",
            changes().toString(),
            "--table",
            "missing_db.items",
            "--primary-key",
            "id",
            "--catalog-type",
            "jdbc",
            "--catalog-uri",
            jdbc.uri(),
            "--warehouse",
            jdbc.warehouse(),
            "--catalog-property",
            "jdbc.user=postgres",
            "--catalog-property",
            "io-impl=org.apache.iceberg.aws.s3.S3FileIO",
            "--catalog-property",
            "s3.endpoint=" + s3.endpoint(),
            "--catalog-property",
            "s3.path-style-access=true",
            "--catalog-property",
            "client.region=" + s3.region(),
            "--catalog-property",
            "http-client.type=urlconnection",
            "--catalog-properties-file",
            secrets.toString());
    JobJar.Result result = run(args);
    assertThat(result.status()).isEqualTo(1);
    assertThat(result.lastErrorLine())
        .startsWith("error: catalog jdbc " + jdbc.uri())
        .contains("table missing_db.items")
        .contains("bucket does not exist");
    Catalog catalog =
        CatalogDefinition.builder()
            .type("jdbc")
            .uri(jdbc.uri())
            .warehouse(jdbc.warehouse())
            .properties(Map.of("jdbc.user", "postgres"))
            .build()
            .connect();
    assertThat(catalog.tableExists(TableIdentifier.of("missing_db", "items"))).isFalse();
    assertThat(((SupportsNamespaces) catalog).namespaceExists(Namespace.of("missing_db")))
        .isFalse();
    CatalogDefinition.close(catalog);
  }
}
