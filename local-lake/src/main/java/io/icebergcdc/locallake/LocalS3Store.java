package io.icebergcdc.locallake;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A real S3-compatible store for tests and benchmarks: S3Proxy ({@code org.gaul:s3proxy} 4.1.0, its
 * self-contained {@code jar-with-dependencies}) run as its own {@code java} process on 127.0.0.1
 * and a free port, serving a local directory through its {@code filesystem} provider (which S3Proxy
 * 4 maps to its {@code filesystem-nio2} store), with S3 authentication ({@code aws-v2-or-v4}) under
 * one access key and secret key, path-style access ({@code http://127.0.0.1:PORT/bucket/key}) and
 * {@code s3proxy.ignore-unknown-headers=true}. {@link #close()} stops it and deletes its directory
 * (unless the system property {@code locallake.keep=true} is set); its log, {@code s3proxy.log} in
 * that directory, ends the exception's message if it does not start.
 *
 * <p>A bucket is a directory under {@link #dataDirectory()} and an object a file under it ({@code
 * s3://bucket/a/b.parquet} is {@code dataDirectory()/bucket/a/b.parquet}), so a test can check what
 * was written on disk. Bucket names need three characters at least: S3Proxy answers {@code
 * NoSuchBucket} for a shorter one even when its directory exists.
 *
 * <p>Clients: Iceberg's {@code S3FileIO} takes {@link #icebergProperties()} as catalog properties:
 * {@code s3.endpoint}, {@code s3.path-style-access=true}, {@code s3.access-key-id}, {@code
 * s3.secret-access-key}, {@code client.region} (else the AWS SDK looks for a region in the
 * environment, profiles and instance metadata) and {@code http-client.type=urlconnection}
 * (Iceberg's default, {@code apache}, needs the SDK's {@code apache-client} module). On the class
 * path, besides {@code iceberg-aws}: the SDK's {@code s3}, {@code kms} and {@code sts} modules
 * (Iceberg's {@code AwsProperties}, which {@code S3FileIO} builds, loads a KMS enum and STS tags
 * whatever the configuration) and {@code url-connection-client}.
 *
 * <p>Checksums: since AWS SDK 2.30 the S3 client computes request checksums and validates response
 * ones by default ({@code WHEN_SUPPORTED}), which S3Proxy 2.6.0 rejects (gaul/s3proxy#795: a PUT
 * fails with "The provided 'x-amz-content-sha256' header does not match what was computed", and
 * without {@code ignore-unknown-headers} a bulk delete fails too). S3Proxy 4.1.0, the one here,
 * accepts them: with SDK 2.57.8 at its defaults, S3FileIO's PUT, multipart upload, GET, ranged GET,
 * HEAD, DELETE and bulk delete all work (the simple ones even without {@code
 * ignore-unknown-headers}), so clients need no setting at all. Against an older S3Proxy, each of
 * these worked (tested against 2.6.0, in-process S3FileIO): the environment variables {@code
 * AWS_REQUEST_CHECKSUM_CALCULATION=when_required} and {@code
 * AWS_RESPONSE_CHECKSUM_VALIDATION=when_required}; the system properties {@code
 * aws.requestChecksumCalculation=when_required} and {@code
 * aws.responseChecksumValidation=when_required}, given with {@code -D} or set with {@code
 * System.setProperty} at any time before the S3 client is built (the SDK reads them when it builds
 * each client: an S3FileIO built earlier keeps the defaults, one built afterwards gets them); or
 * the catalog property {@code s3.chunked-encoding-enabled=false}. Iceberg has no catalog property
 * for the SDK's checksum modes themselves.
 */
public final class LocalS3Store implements AutoCloseable {

  private static final String ACCESS_KEY = "local-lake-access-key";
  private static final String SECRET_KEY = "local-lake-secret-key";
  private static final String REGION = "us-east-1";
  private static final Pattern BUCKET_NAME = Pattern.compile("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]");

  private final Path directory;
  private final Path data;
  private final int port;
  private final ServerProcess server;

  /** Added to each operation of S3Proxy's store (about one a request); zero for none. */
  private final Duration latency;

  private LocalS3Store(Path directory, int port, Duration latency) {
    this.directory = directory;
    this.data = directory.resolve("data");
    this.port = port;
    this.latency = latency;
    this.server = new ServerProcess("S3Proxy", directory.resolve("s3proxy.log"));
  }

  /** Starts S3Proxy over a new temporary directory and returns once it answers HTTP. */
  public static LocalS3Store start() throws Exception {
    return start(Duration.ZERO);
  }

  /**
   * Starts S3Proxy as {@link #start()} does, each operation of its store (about one a request)
   * delayed by {@code latency} (S3Proxy's latency middleware, {@code
   * s3proxy.latency-blobstore.*.latency}, in whole milliseconds), as an object store across a
   * network would be: for benchmarks of what waits on each request.
   */
  public static LocalS3Store start(Duration latency) throws Exception {
    if (latency.isNegative() || latency.toNanos() % 1_000_000 != 0) {
      throw new IllegalArgumentException(
          "S3Proxy's latency is whole milliseconds, not negative: " + latency);
    }
    LocalS3Store store =
        new LocalS3Store(Files.createTempDirectory("local-s3"), ServerProcess.freePort(), latency);
    store.startProcess();
    return store;
  }

  private void startProcess() throws Exception {
    Files.createDirectories(data);
    Path properties = directory.resolve("s3proxy.properties");
    Files.writeString(
        properties,
        String.join(
            "\n",
            "s3proxy.endpoint=" + endpoint(),
            "s3proxy.authorization=aws-v2-or-v4",
            "s3proxy.identity=" + ACCESS_KEY,
            "s3proxy.credential=" + SECRET_KEY,
            "s3proxy.ignore-unknown-headers=true",
            "jclouds.provider=filesystem",
            "jclouds.identity=" + ACCESS_KEY,
            "jclouds.credential=" + SECRET_KEY,
            "jclouds.filesystem.basedir=" + data,
            latency.isZero()
                ? ""
                : "s3proxy.latency-blobstore.*.latency=" + latency.toMillis() + "\n"),
        StandardCharsets.UTF_8);
    server.start(
        ServerProcess.javaCommand(
            ServerProcess.classPath("s3proxy.classpath"),
            List.of("-Xmx256m"),
            "org.gaul.s3proxy.Main",
            List.of("--properties", properties.toString())),
        Map.of());
    // Any HTTP answer will do: without a signature S3Proxy answers 403.
    server.awaitHttp(URI.create(endpoint() + "/"), true);
  }

  /** {@code http://127.0.0.1:PORT}, for {@code s3.endpoint}. */
  public String endpoint() {
    return "http://127.0.0.1:" + port;
  }

  public String accessKey() {
    return ACCESS_KEY;
  }

  public String secretKey() {
    return SECRET_KEY;
  }

  /** The region clients sign for; S3Proxy accepts any. */
  public String region() {
    return REGION;
  }

  /** The directory S3Proxy serves: one subdirectory per bucket. */
  public Path dataDirectory() {
    return data;
  }

  /** Where a bucket's objects are on disk. */
  public Path bucketDirectory(String bucket) {
    return data.resolve(bucket);
  }

  /**
   * Creates a bucket: S3Proxy's filesystem provider lists every directory under its base directory
   * as a bucket, so this makes one (no request, no signature).
   */
  public void createBucket(String name) throws IOException {
    if (!BUCKET_NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("not a valid S3 bucket name: " + name);
    }
    Files.createDirectories(data.resolve(name));
  }

  /**
   * The catalog properties with which Iceberg's {@code S3FileIO} uses this store: {@code io-impl},
   * {@code s3.endpoint}, {@code s3.path-style-access}, the keys, {@code client.region} and {@code
   * http-client.type=urlconnection} (the AWS SDK's {@code url-connection-client}).
   */
  public Map<String, String> icebergProperties() {
    Map<String, String> properties = new LinkedHashMap<>();
    properties.put("io-impl", "org.apache.iceberg.aws.s3.S3FileIO");
    properties.put("s3.endpoint", endpoint());
    properties.put("s3.path-style-access", "true");
    properties.put("s3.access-key-id", ACCESS_KEY);
    properties.put("s3.secret-access-key", SECRET_KEY);
    properties.put("client.region", REGION);
    properties.put("http-client.type", "urlconnection");
    return properties;
  }

  /** The tail of S3Proxy's log, for a failing test's message. */
  public String logTail() {
    return server.tail();
  }

  @Override
  public void close() throws Exception {
    server.stop();
    ServerProcess.deleteDirectory(directory);
  }
}
