package io.icebergcdc.capture;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.cdc.BadRecordPolicy;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.SchemaEvolution;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class CaptureRoutesTest {

  private static final ChangeSchema SCHEMA =
      new ChangeSchema(
          new Schema(
              List.of(
                  Types.NestedField.required(1, "id", Types.LongType.get()),
                  Types.NestedField.optional(2, "name", Types.StringType.get())),
              Set.of(1)));

  private static final SchemaEvolution EVOLUTION =
      new SchemaEvolution() {
        @Override
        public ChangeSchema evolve(String table, Schema sourceSchema, List<String> changes) {
          throw new UnsupportedOperationException();
        }

        @Override
        public ChangeSchema current(String table) {
          throw new UnsupportedOperationException();
        }
      };

  /**
   * The schema changes of a table are followed where its topic is among those given, on the main
   * output (the one writer of the tables) or on a side output of its own (a key-indexed writer
   * distributed by partition, or a writer of equality deletes); its truncates are applied only
   * where its writer is key-indexed. The others' schema changes end the job, and their truncates
   * are bad records.
   */
  @Test
  void followsTheSchemaChangesOfTheTopicsItIsGiven() {
    Map<String, ChangeSchema> schemas = new java.util.TreeMap<>();
    schemas.put("db.public.own", SCHEMA);
    schemas.put("db.public.shared", SCHEMA);
    schemas.put("db.public.equality", SCHEMA);
    schemas.put("db.public.plain", SCHEMA);
    CaptureRoutes routes =
        new CaptureRoutes(
            schemas,
            Map.of(
                "db.public.own", "public.own",
                "db.public.shared", "public.shared",
                "db.public.equality", "public.equality",
                "db.public.plain", "public.plain"),
            Map.of("db.public.shared", "lake.shared"),
            "db",
            BadRecordPolicy.FAIL,
            EVOLUTION,
            Set.of("db.public.own", "db.public.shared", "db.public.equality"),
            Set.of("db.public.own", "db.public.shared"));

    assertThat(routes.outputOf("db.public.own")).isNotNull();
    assertThat(routes.evolutionOf(routes.indexOf("db.public.own"))).isSameAs(EVOLUTION);
    assertThat(routes.evolutionOf(routes.indexOf("db.public.shared"))).isSameAs(EVOLUTION);
    assertThat(routes.evolutionOf(routes.indexOf("db.public.equality"))).isSameAs(EVOLUTION);
    assertThat(routes.evolutionOf(routes.indexOf("db.public.plain"))).isNull();
    // Those of key-indexed writers apply their truncates; the writer of equality deletes does not.
    assertThat(routes.appliesTruncates(routes.indexOf("db.public.own"))).isTrue();
    assertThat(routes.appliesTruncates(routes.indexOf("db.public.shared"))).isTrue();
    assertThat(routes.appliesTruncates(routes.indexOf("db.public.equality"))).isFalse();
    assertThat(routes.appliesTruncates(routes.indexOf("db.public.plain"))).isFalse();

    CaptureRoutes withoutEvolution =
        new CaptureRoutes(
            schemas,
            Map.of(
                "db.public.own", "public.own",
                "db.public.shared", "public.shared",
                "db.public.equality", "public.equality",
                "db.public.plain", "public.plain"),
            Map.of("db.public.shared", "lake.shared"),
            "db",
            BadRecordPolicy.FAIL);
    assertThat(withoutEvolution.evolutionOf(withoutEvolution.indexOf("db.public.shared"))).isNull();
  }
}
