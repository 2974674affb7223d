package io.icebergcdc.it;

import io.icebergcdc.locallake.LocalRestCatalog;
import io.icebergcdc.locallake.LocalS3Store;
import io.icebergcdc.sink.CatalogDefinition;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Iceberg's REST catalog server with its warehouse in a bucket of S3Proxy, each a process of its
 * own, for the tests that write where users' tables live.
 */
final class LakeServers implements AutoCloseable {

  final LocalS3Store s3;
  final LocalRestCatalog rest;
  final String bucket;

  private LakeServers(LocalS3Store s3, LocalRestCatalog rest, String bucket) {
    this.s3 = s3;
    this.rest = rest;
    this.bucket = bucket;
  }

  /** Starts S3Proxy with the bucket, then the REST server with its warehouse there. */
  static LakeServers start(String bucket) throws Exception {
    LocalS3Store s3 = LocalS3Store.start();
    try {
      s3.createBucket(bucket);
      return new LakeServers(
          s3,
          LocalRestCatalog.start("s3://" + bucket + "/warehouse", s3.icebergProperties()),
          bucket);
    } catch (Exception e) {
      s3.close();
      throw e;
    }
  }

  /**
   * The catalog properties a client of the store needs: S3FileIO, the endpoint, path-style access,
   * the keys, the region, and the URL connection HTTP client (S3Proxy refuses the signatures of the
   * Apache client's uploads).
   */
  Map<String, String> s3Properties() {
    Map<String, String> properties = new LinkedHashMap<>(s3.icebergProperties());
    properties.put("http-client.type", "urlconnection");
    return properties;
  }

  /** The REST catalog, with the store's properties. */
  CatalogDefinition restCatalog() {
    return CatalogDefinition.builder()
        .type("rest")
        .uri(rest.uri())
        .properties(s3Properties())
        .build();
  }

  /** Where the warehouse's tables are. */
  String warehouse() {
    return "s3://" + bucket + "/warehouse/";
  }

  @Override
  public void close() throws Exception {
    try {
      rest.close();
    } finally {
      s3.close();
    }
  }
}
