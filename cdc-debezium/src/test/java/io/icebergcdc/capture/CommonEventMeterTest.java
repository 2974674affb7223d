package io.icebergcdc.capture;

import static org.assertj.core.api.Assertions.assertThat;

import io.debezium.data.Envelope.Operation;
import io.debezium.pipeline.meters.CommonEventMeter;
import io.debezium.pipeline.source.spi.EventMetadataProvider;
import io.debezium.pipeline.spi.OffsetContext;
import io.debezium.relational.TableId;
import io.debezium.spi.schema.DataCollectionId;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.junit.jupiter.api.Test;

/** This module's replacement of Debezium's {@code CommonEventMeter}. */
class CommonEventMeterTest {

  private static final Schema KEY = SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA).build();
  private static final Schema SOURCE =
      SchemaBuilder.struct().field("lsn", Schema.INT64_SCHEMA).build();
  private static final Schema VALUE = SchemaBuilder.struct().field("source", SOURCE).build();
  private static final TableId TABLE = new TableId(null, "inventory", "customers");

  @Test
  void theClassLoadedIsThisModulesNotDebeziums() throws Exception {
    Path loadedFrom =
        Paths.get(
            CommonEventMeter.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    Path debeziumsMetrics =
        Paths.get(
            io.debezium.pipeline.metrics.PipelineMetrics.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
    assertThat(loadedFrom).isNotEqualTo(debeziumsMetrics);
    assertThat(loadedFrom)
        .isEqualTo(
            Paths.get(
                StructChangeConverter.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI()));
  }

  /**
   * The replacement keeps the constructors, methods and fields Debezium's own class offers to the
   * rest of Debezium; a Debezium upgrade that changes them fails here, not at run time.
   */
  @Test
  void offersWhatDebeziumsClassOffers() throws Exception {
    URL debeziumJar =
        io.debezium.pipeline.metrics.PipelineMetrics.class
            .getProtectionDomain()
            .getCodeSource()
            .getLocation();
    try (URLClassLoader debeziumFirst =
        new URLClassLoader(new URL[] {debeziumJar}, getClass().getClassLoader()) {
          @Override
          protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
              if (name.startsWith(CommonEventMeter.class.getName())) {
                Class<?> loaded = findLoadedClass(name);
                return loaded != null ? loaded : findClass(name);
              }
              return super.loadClass(name, resolve);
            }
          }
        }) {
      Class<?> debeziums = debeziumFirst.loadClass(CommonEventMeter.class.getName());
      assertThat(debeziums).isNotSameAs(CommonEventMeter.class);
      assertThat(offered(CommonEventMeter.class)).isEqualTo(offered(debeziums));
    }
  }

  /** The class's interfaces and its public and protected constructors, methods and fields. */
  private static Set<String> offered(Class<?> type) {
    Set<String> offered = new TreeSet<>();
    for (Class<?> implemented : type.getInterfaces()) {
      offered.add("implements " + implemented.getName());
    }
    offered.add("extends " + type.getSuperclass().getName());
    List<Member> members = new ArrayList<>();
    members.addAll(List.of(type.getDeclaredConstructors()));
    members.addAll(List.of(type.getDeclaredMethods()));
    members.addAll(List.of(type.getDeclaredFields()));
    for (Member member : members) {
      int modifiers = member.getModifiers();
      if (member.isSynthetic()
          || !(Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers))) {
        continue;
      }
      String signature =
          member instanceof Executable executable
              ? Arrays.stream(executable.getParameterTypes())
                  .map(Class::getName)
                  .collect(Collectors.joining(",", "(", ")"))
              : ":" + ((Field) member).getType().getName();
      String returned =
          member instanceof Method method ? ":" + method.getReturnType().getName() : "";
      offered.add(Modifier.toString(modifiers) + " " + member.getName() + signature + returned);
    }
    return offered;
  }

  @Test
  void countsEachEventAndMakesTheSummaryOfTheLastOnlyWhenItIsRead() {
    Summaries provider = new Summaries();
    AtomicLong now = new AtomicLong(1_000);
    CommonEventMeter meter = new CommonEventMeter(now::get, provider);
    assertThat(meter.getLastEvent()).isNull();
    assertThat(meter.getMilliSecondsSinceLastEvent()).isEqualTo(-1);

    Operation[] operations = {
      Operation.CREATE, Operation.UPDATE, Operation.UPDATE, Operation.DELETE
    };
    for (int id = 0; id < 1_000; id++) {
      meter.onEvent(TABLE, null, key(id), value(100 + id), operations[id % operations.length]);
    }
    meter.onFilteredEvent(Operation.CREATE);
    meter.onFilteredEvent();
    meter.onErroneousEvent(Operation.DELETE);
    meter.onErroneousEvent();
    now.set(1_250);

    assertThat(provider.made).as("summaries made while events passed").hasValue(0);
    assertThat(meter.getLastEvent())
        .isEqualTo(provider.eagerly(TABLE, null, key(999), value(1099)))
        .isEqualTo("position: {lsn: 1099}, key: {\"id\" : \"999\"}");
    assertThat(meter.getTotalNumberOfEventsSeen()).isEqualTo(1_004);
    assertThat(meter.getTotalNumberOfCreateEventsSeen()).isEqualTo(251);
    assertThat(meter.getTotalNumberOfUpdateEventsSeen()).isEqualTo(500);
    assertThat(meter.getTotalNumberOfDeleteEventsSeen()).isEqualTo(251);
    assertThat(meter.getNumberOfEventsFiltered()).isEqualTo(2);
    assertThat(meter.getNumberOfErroneousEvents()).isEqualTo(2);
    assertThat(meter.getMilliSecondsSinceLastEvent()).isEqualTo(250);

    meter.reset();
    assertThat(meter.getLastEvent()).isNull();
    assertThat(meter.getTotalNumberOfEventsSeen()).isZero();
    assertThat(meter.getTotalNumberOfUpdateEventsSeen()).isZero();
    assertThat(meter.getNumberOfEventsFiltered()).isZero();
    assertThat(meter.getNumberOfErroneousEvents()).isZero();
    assertThat(meter.getMilliSecondsSinceLastEvent()).isEqualTo(-1);
  }

  private static Struct key(long id) {
    return new Struct(KEY).put("id", id);
  }

  private static Struct value(long lsn) {
    return new Struct(VALUE).put("source", new Struct(SOURCE).put("lsn", lsn));
  }

  /** Reads the position from the event, as PostgreSQL's and the binlog connectors' providers do. */
  private static final class Summaries implements EventMetadataProvider {
    final AtomicInteger made = new AtomicInteger();

    @Override
    public Instant getEventTimestamp(
        DataCollectionId source, OffsetContext offset, Object key, Struct value) {
      return null;
    }

    @Override
    public Map<String, String> getEventSourcePosition(
        DataCollectionId source, OffsetContext offset, Object key, Struct value) {
      return Map.of("lsn", String.valueOf(value.getStruct("source").getInt64("lsn")));
    }

    @Override
    public String getTransactionId(
        DataCollectionId source, OffsetContext offset, Object key, Struct value) {
      return null;
    }

    @Override
    public String toSummaryString(
        DataCollectionId source, OffsetContext offset, Object key, Struct value) {
      made.incrementAndGet();
      return eagerly(source, offset, key, value);
    }

    String eagerly(DataCollectionId source, OffsetContext offset, Object key, Struct value) {
      return EventMetadataProvider.super.toSummaryString(source, offset, key, value);
    }
  }
}
