package io.icebergcdc.capture;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.cdc.debezium.DebeziumJsonParseFunction;
import io.icebergcdc.cdc.typeutils.ChangeEventTypeInfo;
import io.icebergcdc.cdc.typeutils.OpaqueTypeInfo;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeutils.TypeSerializer;

/** Type information for the records of a {@link DebeziumSource} that captures some tables. */
public final class CapturedChangeTypeInfo extends OpaqueTypeInfo<CapturedChange> {

  private static final long serialVersionUID = 1L;

  private final List<ChangeEventTypeInfo> events;

  /**
   * @param schemas the schema of each route's table, in the order of the routes
   */
  public CapturedChangeTypeInfo(List<ChangeSchema> schemas) {
    super(CapturedChange.class);
    List<ChangeEventTypeInfo> events = new ArrayList<>();
    for (ChangeSchema schema : schemas) {
      events.add(ChangeEventTypeInfo.of(schema));
    }
    this.events = List.copyOf(events);
  }

  @Override
  public TypeSerializer<CapturedChange> createSerializer(SerializerConfig config) {
    List<TypeSerializer<ChangeEvent>> serializers = new ArrayList<>();
    for (ChangeEventTypeInfo event : events) {
      serializers.add(event.createSerializer(config));
    }
    TypeSerializer<DeadLetter> deadLetters =
        DebeziumJsonParseFunction.DEAD_LETTERS.getTypeInfo().createSerializer(config);
    return new CapturedChangeSerializer(serializers, deadLetters);
  }

  @Override
  public String toString() {
    return "CapturedChange" + events;
  }

  @Override
  public boolean equals(Object obj) {
    return obj instanceof CapturedChangeTypeInfo that && events.equals(that.events);
  }

  @Override
  public int hashCode() {
    return events.hashCode();
  }
}
