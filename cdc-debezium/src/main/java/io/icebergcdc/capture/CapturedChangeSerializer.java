package io.icebergcdc.capture;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.DeadLetter;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.typeutils.CompositeTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Serializes a {@link CapturedChange}: its route, then the event with the serializer of that
 * route's table, or the dead letter.
 */
final class CapturedChangeSerializer extends TypeSerializer<CapturedChange> {

  private static final long serialVersionUID = 1L;

  private final List<TypeSerializer<ChangeEvent>> events;
  private final TypeSerializer<DeadLetter> deadLetters;

  CapturedChangeSerializer(
      List<TypeSerializer<ChangeEvent>> events, TypeSerializer<DeadLetter> deadLetters) {
    this.events = List.copyOf(events);
    this.deadLetters = deadLetters;
  }

  @Override
  public boolean isImmutableType() {
    return false;
  }

  @Override
  public TypeSerializer<CapturedChange> duplicate() {
    List<TypeSerializer<ChangeEvent>> copies = new ArrayList<>();
    for (TypeSerializer<ChangeEvent> event : events) {
      copies.add(event.duplicate());
    }
    return new CapturedChangeSerializer(copies, deadLetters.duplicate());
  }

  @Override
  public CapturedChange createInstance() {
    throw new UnsupportedOperationException("captured changes are immutable");
  }

  @Override
  public CapturedChange copy(CapturedChange from) {
    if (from.route() == CapturedChange.DEAD_LETTER) {
      return from;
    }
    return from.route() == CapturedChange.APPEARED
        ? CapturedChange.appeared(eventsOf(from.route()).copy(from.event()))
        : CapturedChange.of(from.route(), eventsOf(from.route()).copy(from.event()));
  }

  /**
   * The serializer of a route's events; for a table that appeared, whose rows describe themselves,
   * any route's.
   */
  private TypeSerializer<ChangeEvent> eventsOf(int route) {
    return events.get(route == CapturedChange.APPEARED ? 0 : route);
  }

  @Override
  public CapturedChange copy(CapturedChange from, CapturedChange reuse) {
    return copy(from);
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(CapturedChange record, DataOutputView out) throws IOException {
    out.writeInt(record.route());
    if (record.route() == CapturedChange.DEAD_LETTER) {
      deadLetters.serialize(record.deadLetter(), out);
    } else {
      eventsOf(record.route()).serialize(record.event(), out);
    }
  }

  @Override
  public CapturedChange deserialize(DataInputView in) throws IOException {
    int route = in.readInt();
    if (route == CapturedChange.DEAD_LETTER) {
      return CapturedChange.deadLetter(deadLetters.deserialize(in));
    }
    ChangeEvent event = eventsOf(route).deserialize(in);
    return route == CapturedChange.APPEARED
        ? CapturedChange.appeared(event)
        : CapturedChange.of(route, event);
  }

  @Override
  public CapturedChange deserialize(CapturedChange reuse, DataInputView in) throws IOException {
    return deserialize(in);
  }

  @Override
  public void copy(DataInputView in, DataOutputView out) throws IOException {
    serialize(deserialize(in), out);
  }

  @Override
  public boolean equals(Object obj) {
    return obj instanceof CapturedChangeSerializer that
        && events.equals(that.events)
        && deadLetters.equals(that.deadLetters);
  }

  @Override
  public int hashCode() {
    return events.hashCode();
  }

  @Override
  public TypeSerializerSnapshot<CapturedChange> snapshotConfiguration() {
    return new Snapshot(this);
  }

  /** The snapshots of the dead-letter serializer and of each route's event serializer. */
  public static final class Snapshot
      extends CompositeTypeSerializerSnapshot<CapturedChange, CapturedChangeSerializer> {

    public Snapshot() {}

    Snapshot(CapturedChangeSerializer serializer) {
      super(serializer);
    }

    @Override
    protected int getCurrentOuterSnapshotVersion() {
      return 1;
    }

    @Override
    protected TypeSerializer<?>[] getNestedSerializers(CapturedChangeSerializer outer) {
      TypeSerializer<?>[] nested = new TypeSerializer<?>[outer.events.size() + 1];
      nested[0] = outer.deadLetters;
      for (int i = 0; i < outer.events.size(); i++) {
        nested[i + 1] = outer.events.get(i);
      }
      return nested;
    }

    @Override
    @SuppressWarnings("unchecked")
    protected CapturedChangeSerializer createOuterSerializerWithNestedSerializers(
        TypeSerializer<?>[] nested) {
      List<TypeSerializer<ChangeEvent>> events = new ArrayList<>();
      for (int i = 1; i < nested.length; i++) {
        events.add((TypeSerializer<ChangeEvent>) nested[i]);
      }
      return new CapturedChangeSerializer(events, (TypeSerializer<DeadLetter>) nested[0]);
    }
  }
}
