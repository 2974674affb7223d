package io.icebergcdc.bench;

/** The writers the benchmarks measure, by the names the command lines take. */
enum Writer {
  OURS_DV("ours-dv", "iceberg-cdc, deletion vectors (v3)"),
  OURS_POSITION("ours-position", "iceberg-cdc, position deletes (v2)"),
  OURS_EQUALITY("ours-equality", "iceberg-cdc, equality deletes (v2)"),
  ICEBERG_UPSERT("iceberg-upsert", "Iceberg FlinkSink, upsert"),
  ICEBERG_APPEND("iceberg-append", "Iceberg FlinkSink, append (ceiling)"),
  PAIMON("paimon", "Paimon 1.3, primary-key table"),
  /** The final rows appended once: what a perfectly compacted table holds; read as reference. */
  PLAIN("plain", "plain table of the final rows");

  private final String id;
  private final String label;

  Writer(String id, String label) {
    this.id = id;
    this.label = label;
  }

  String id() {
    return id;
  }

  String label() {
    return label;
  }

  boolean ours() {
    return this == OURS_DV || this == OURS_POSITION || this == OURS_EQUALITY;
  }

  static Writer of(String id) {
    for (Writer writer : values()) {
      if (writer.id.equals(id)) {
        return writer;
      }
    }
    throw new IllegalArgumentException("unknown writer " + id);
  }
}
