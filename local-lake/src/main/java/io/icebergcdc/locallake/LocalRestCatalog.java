package io.icebergcdc.locallake;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A real Iceberg REST catalog for tests and benchmarks: {@code
 * org.apache.iceberg.rest.RESTCatalogServer}, the server of the {@code apache/iceberg-rest-fixture}
 * image (from {@code org.apache.iceberg:iceberg-open-api:1.11.0}, classifier {@code
 * test-fixtures}), run as its own {@code java} process on a free port, over a {@code JdbcCatalog}
 * on a SQLite file in a temporary directory. {@link #stop()} kills it and {@link #start()} starts
 * it again on the same port over the same file, with the same namespaces and tables; {@link
 * #close()} stops it and deletes the directory (unless {@code locallake.keep=true}). Its output
 * goes to {@code rest-catalog.log} there, and the tail of it ends the exception's message when it
 * does not start. Readiness is {@code GET /v1/config} answering 200, within 90 s.
 *
 * <p>Class path: the fixture jar's POM declares no dependencies, so this module lists them (see its
 * POM) and the build writes the resolved list into {@code rest-catalog.classpath}: {@code
 * iceberg-core} and its {@code tests} jar (where {@code RESTCatalogAdapter} and {@code
 * RESTCatalogServlet} are), {@code iceberg-aws} with the AWS SDK's {@code s3}, {@code kms}, {@code
 * sts} and {@code url-connection-client}, Hadoop's {@code hadoop-client-api} and {@code
 * hadoop-client-runtime} ({@code RESTCatalogServer} builds its catalog with a Hadoop {@code
 * Configuration}), Jetty 12.1's {@code jetty-ee10-servlet}, {@code jetty-compression-server} and
 * {@code jetty-compression-gzip}, {@code sqlite-jdbc}, and {@code slf4j-simple}.
 *
 * <p>Configuration: the fixture reads its backend catalog's properties from the environment, every
 * {@code CATALOG_*} variable turned into a property by lower-casing the rest of its name and
 * reading {@code __} as {@code -} and {@code _} as {@code .} ({@code
 * CATALOG_S3_PATH__STYLE__ACCESS} is {@code s3.path-style-access}); {@code rest.port} (default
 * 8181) is one of them, and so is {@code catalog.name} (default {@code rest_backend}). Its defaults
 * are {@code catalog-impl=JdbcCatalog}, {@code uri=jdbc:sqlite::memory:} and {@code
 * jdbc.schema-version=V1}; this class sets {@code uri} to the SQLite file, {@code rest.port},
 * {@code warehouse}, and {@code clients=1} (one JDBC connection: SQLite has one writer at a time),
 * and strips the CATALOG_* and AWS_* variables the child would otherwise inherit. The server logs
 * all these properties, keys included, when it starts. With {@code include-credentials=true} it
 * also hands its {@code s3.access-key-id} and {@code s3.secret-access-key} to clients in each
 * table's config.
 *
 * <p>It listens on all interfaces ({@code 0.0.0.0}: the fixture builds a Jetty {@code Server(port)}
 * and offers no host setting); clients use {@link #uri()}, on 127.0.0.1.
 *
 * <p>OAuth2: the fixture serves {@code POST /v1/oauth/tokens} (and lists it in {@code /v1/config}'s
 * endpoints) but authenticates nothing. For {@code grant_type=client_credentials} it answers 200
 * with {@code access_token=client-credentials-token:sub=<client_id>} and {@code token_type=Bearer},
 * whatever the {@code client_secret} and {@code scope}, even with no {@code client_id} at all
 * ({@code sub=null}); for the token-exchange grant {@code
 * token-exchange-token:sub=<subject_token>,act=<actor_token>}; any other grant type is a 406
 * ({@code UnsupportedOperationException}), a missing one a 500. No endpoint reads the {@code
 * Authorization} header: a client with {@code credential=client:any-secret}, with {@code
 * token=anything} or with none at all gets the same answers. So it exercises a client's OAuth2 flow
 * (the token request, the Bearer header), never a refusal.
 */
public final class LocalRestCatalog implements AutoCloseable {

  private static final String MAIN_CLASS = "org.apache.iceberg.rest.RESTCatalogServer";
  private static final Pattern PROPERTY_KEY = Pattern.compile("[a-z0-9]+([.-][a-z0-9]+)*");

  private final Path directory;
  private final Path database;
  private final int port;
  private final Map<String, String> catalogProperties;
  private final ServerProcess server;

  private LocalRestCatalog(Path directory, int port, Map<String, String> catalogProperties) {
    this.directory = directory;
    this.database = directory.resolve("catalog.db");
    this.port = port;
    this.catalogProperties = catalogProperties;
    this.server = new ServerProcess("the REST catalog", directory.resolve("rest-catalog.log"));
  }

  /**
   * Starts a REST catalog over a new SQLite file, with the given warehouse: a local directory
   * (written through Hadoop's local file system) or {@code s3://bucket/prefix}; for the latter,
   * {@code io-impl} defaults to {@code S3FileIO} with the {@code url-connection-client}, and the
   * caller passes the store's endpoint, path-style access, keys and region in {@code
   * extraCatalogProperties} (for S3Proxy: {@link LocalS3Store#icebergProperties()}). Those
   * properties reach the server's backend catalog as its {@code CATALOG_*} environment.
   */
  public static LocalRestCatalog start(String warehouse, Map<String, String> extraCatalogProperties)
      throws Exception {
    Path directory = Files.createTempDirectory("local-rest-catalog");
    Map<String, String> properties = new LinkedHashMap<>();
    if (warehouse.startsWith("s3://") || warehouse.startsWith("s3a://")) {
      properties.put("io-impl", "org.apache.iceberg.aws.s3.S3FileIO");
      properties.put("http-client.type", "urlconnection");
    } else {
      Path local =
          warehouse.startsWith("file:") ? Paths.get(URI.create(warehouse)) : Paths.get(warehouse);
      Files.createDirectories(local);
      warehouse = local.toAbsolutePath().toString();
    }
    properties.putAll(extraCatalogProperties);
    properties.put("warehouse", warehouse);
    LocalRestCatalog catalog =
        new LocalRestCatalog(directory, ServerProcess.freePort(), properties);
    catalog.start();
    return catalog;
  }

  /**
   * Starts the server again after {@link #stop()}, on the same port and over the same SQLite file,
   * so that every namespace and table is there again; returns once it answers.
   */
  public void start() throws Exception {
    Map<String, String> properties = new LinkedHashMap<>(catalogProperties);
    properties.put("uri", "jdbc:sqlite:" + database);
    properties.put("jdbc.schema-version", "V1");
    // One JDBC connection: SQLite takes one writer at a time, and the server's Jetty threads
    // would otherwise meet SQLITE_BUSY on concurrent commits.
    properties.putIfAbsent("clients", "1");
    properties.put("rest.port", Integer.toString(port));
    Map<String, String> environment = new LinkedHashMap<>();
    properties.forEach((key, value) -> environment.put(environmentVariable(key), value));
    server.start(
        ServerProcess.javaCommand(
            ServerProcess.classPath("rest-catalog.classpath"),
            List.of("-Xmx512m"),
            MAIN_CLASS,
            List.of()),
        environment);
    server.awaitHttp(URI.create(uri() + "/v1/config"), false);
  }

  /**
   * Kills the server process (SIGTERM, SIGKILL after 30 s) and waits for it; its SQLite file stays,
   * for {@link #start()}.
   */
  public void stop() throws Exception {
    server.stop();
  }

  /** {@code http://127.0.0.1:PORT}, the catalog's {@code uri}. */
  public String uri() {
    return "http://127.0.0.1:" + port;
  }

  public int port() {
    return port;
  }

  /** The JdbcCatalog's SQLite file. */
  public Path databaseFile() {
    return database;
  }

  public boolean isRunning() {
    return server.isAlive();
  }

  /** The tail of the server's log (all its runs), for a failing test's message. */
  public String logTail() {
    return server.tail();
  }

  @Override
  public void close() throws Exception {
    server.stop();
    ServerProcess.deleteDirectory(directory);
  }

  /**
   * The {@code CATALOG_*} variable that the fixture's {@code RCKUtils.environmentCatalogConfig}
   * turns into the property: it lower-cases the name after {@code CATALOG_}, then reads {@code __}
   * as {@code -} and {@code _} as {@code .}; so a key can hold lower-case letters, digits, dots and
   * dashes only.
   */
  static String environmentVariable(String key) {
    if (!PROPERTY_KEY.matcher(key).matches()) {
      throw new IllegalArgumentException(
          "the REST fixture takes catalog properties from CATALOG_* environment variables, which"
              + " cannot spell this key: "
              + key);
    }
    return "CATALOG_" + key.replace("-", "__").replace(".", "_").toUpperCase(Locale.ROOT);
  }
}
