package io.icebergcdc.bench;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.debezium.DebeziumJsonParser;
import io.icebergcdc.cdc.typeutils.ChangeEventTypeInfo;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.formats.common.TimestampFormat;
import org.apache.flink.formats.json.debezium.DebeziumJsonDeserializationSchema;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.utils.TypeConversions;
import org.apache.flink.util.Collector;
import org.apache.flink.util.SimpleUserCodeClassLoader;
import org.apache.flink.util.UserCodeClassLoader;
import org.apache.iceberg.flink.FlinkSchemaUtil;

/**
 * The upserts as Debezium JSON events of a PostgreSQL table, without the schema part, generated in
 * memory before the measured job, so that a job pays for parsing them and not for making them. The
 * first change of a key is a create ({@code "op":"c"}), the later ones updates ({@code "u"}) whose
 * {@code before} is the key's previous row, as with {@code REPLICA IDENTITY FULL}; the source
 * position {@code source.lsn} is the change's number.
 *
 * <p>This project's sink reads them with its own {@link DebeziumJsonParser}, as its Kafka job does;
 * the peers read them with Flink's {@code debezium-json} format ({@link
 * DebeziumJsonDeserializationSchema}), which turns an update into an update-before and an
 * update-after row.
 */
final class DebeziumInput {

  /** The events, by change number; static, since the benchmark's MiniCluster runs in this JVM. */
  private static volatile byte[][] events = new byte[0][];

  private DebeziumInput() {}

  /** Generates the events of the input's changes. */
  static void generate(Input input) {
    byte[][] generated = new byte[Math.toIntExact(input.changes())][];
    StringBuilder json = new StringBuilder(512);
    for (int i = 0; i < generated.length; i++) {
      json.setLength(0);
      boolean create = i < input.keys();
      json.append("{\"before\":");
      if (create) {
        json.append("null");
      } else {
        appendRow(json, input, i - input.keys());
      }
      json.append(",\"after\":");
      appendRow(json, input, i);
      json.append(
              ",\"source\":{\"version\":\"3.0.0.Final\",\"connector\":\"postgresql\","
                  + "\"name\":\"bench\",\"ts_ms\":")
          .append(1_767_225_600_000L + i / 1000)
          .append(",\"snapshot\":\"false\",\"db\":\"bench\",\"sequence\":null,")
          .append("\"schema\":\"public\",\"table\":\"changes\",\"txId\":")
          .append(1000 + i)
          .append(",\"lsn\":")
          .append(100_000_000L + i)
          .append(",\"xmin\":null},\"op\":\"")
          .append(create ? 'c' : 'u')
          .append("\",\"ts_ms\":")
          .append(1_767_225_600_000L + i / 1000)
          .append(",\"transaction\":null}");
      generated[i] = json.toString().getBytes(StandardCharsets.UTF_8);
    }
    events = generated;
  }

  private static void appendRow(StringBuilder json, Input input, long i) {
    RowData row = input.row(i);
    json.append("{\"id\":")
        .append(row.getLong(0))
        .append(",\"payload\":\"")
        .append(row.getString(1))
        .append("\",\"amount\":")
        .append(row.getLong(2))
        .append(",\"seq\":")
        .append(row.getLong(3))
        .append('}');
  }

  /** The events of changes {@code first} to {@code last}, from a source of parallelism 1. */
  private static DataStream<byte[]> bytes(StreamExecutionEnvironment env, long first, long last) {
    if (last >= events.length) {
      throw new IllegalStateException("generate the events first");
    }
    return GeneratedChanges.numbers(env, first, last)
        .map(i -> events[Math.toIntExact(i)])
        .returns(byte[].class)
        .setParallelism(1);
  }

  /** The input's events parsed by this project's parser, beside the source. */
  static DataStream<ChangeEvent> events(
      StreamExecutionEnvironment env, Input input, ChangeSchema schema) {
    return bytes(env, 0, input.changes() - 1)
        .flatMap(new OurParse(schema))
        .returns(ChangeEventTypeInfo.of(schema))
        .setParallelism(1)
        .name("parse Debezium JSON");
  }

  /** The input's events parsed by Flink's {@code debezium-json} format, beside the source. */
  static DataStream<RowData> rows(StreamExecutionEnvironment env, Input input) {
    RowType rowType = FlinkSchemaUtil.convert(input.workload().schema());
    return bytes(env, 0, input.changes() - 1)
        .flatMap(new FlinkParse(rowType))
        .returns(InternalTypeInfo.of(rowType))
        .setParallelism(1)
        .name("parse Debezium JSON (Flink's format)");
  }

  /** Parses each event's bytes as the Kafka job does. */
  static final class OurParse extends RichFlatMapFunction<byte[], ChangeEvent> {
    private static final long serialVersionUID = 1L;
    private final ChangeSchema schema;
    private transient DebeziumJsonParser parser;

    OurParse(ChangeSchema schema) {
      this.schema = schema;
    }

    @Override
    public void open(OpenContext openContext) {
      parser = new DebeziumJsonParser(schema, "bench", null);
    }

    @Override
    public void flatMap(byte[] event, Collector<ChangeEvent> out) {
      List<ChangeEvent> changes = parser.parse(event, "bench event");
      for (ChangeEvent change : changes) {
        out.collect(change);
      }
    }
  }

  /** Flink's {@code debezium-json} format, without metadata columns or the schema part. */
  static final class FlinkParse implements FlatMapFunction<byte[], RowData> {
    private static final long serialVersionUID = 1L;
    private final RowType rowType;
    private transient DebeziumJsonDeserializationSchema format;

    FlinkParse(RowType rowType) {
      this.rowType = rowType;
    }

    @Override
    public void flatMap(byte[] event, Collector<RowData> out) throws Exception {
      if (format == null) {
        format =
            new DebeziumJsonDeserializationSchema(
                TypeConversions.fromLogicalToDataType(rowType),
                List.of(),
                InternalTypeInfo.of(rowType),
                false,
                false,
                TimestampFormat.ISO_8601);
        format.open(new Context());
      }
      format.deserialize(event, out);
    }
  }

  private static final class Context implements DeserializationSchema.InitializationContext {
    @Override
    public MetricGroup getMetricGroup() {
      return new org.apache.flink.metrics.groups.UnregisteredMetricsGroup();
    }

    @Override
    public UserCodeClassLoader getUserCodeClassLoader() {
      return SimpleUserCodeClassLoader.create(DebeziumInput.class.getClassLoader());
    }
  }
}
