package io.icebergcdc.jobs.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.jobs.demo.ChangelogGenerator;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/** The search of a topic's records for the schema of a table to create. */
class KafkaSchemaSearchTest {

  private static final String LINE =
      new ChangelogGenerator(5, 5, 0, 0, 1).generate().lines().get(0);

  private static ConsumerRecord<byte[], byte[]> record(long offset, String key, String value) {
    return new ConsumerRecord<>(
        "shop.public.items",
        0,
        offset,
        key == null ? null : key.getBytes(StandardCharsets.UTF_8),
        value == null ? null : value.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * A record without a key (a truncate has none) cannot tell the table's key: the search goes on to
   * the next, instead of failing the job's start.
   */
  @Test
  void aRecordWithoutAKeyIsPassedBy() {
    KafkaSourceTranslator.SchemaSearch search = new KafkaSourceTranslator.SchemaSearch(List.of());
    assertThat(search.offer(record(0, null, null))).isNull();
    assertThat(search.offer(record(1, null, LINE))).isNull();
    assertThat(
            search
                .offer(record(2, ChangelogGenerator.kafkaKeyOf(LINE), LINE))
                .identifierFieldNames())
        .containsExactly("id");
  }

  /** Where no record tells the key, the failure says why the first could not. */
  @Test
  void withoutARecordThatTellsTheKeyTheFailureNamesTheFirst() {
    KafkaSourceTranslator.SchemaSearch search = new KafkaSourceTranslator.SchemaSearch(List.of());
    search.offer(record(4, null, LINE));
    assertThat(search.failure("shop.public.items", TableIdentifier.of("db", "items")))
        .hasMessageStartingWith("topic shop.public.items/0@4 has no key")
        .hasMessageContaining("--primary-key");
    assertThat(
            new KafkaSourceTranslator.SchemaSearch(List.of())
                .failure("shop.public.items", TableIdentifier.of("db", "items")))
        .hasMessageContaining("holds no event with a schema");
  }

  /** A --primary-key column the events' rows lack is an argument error naming the flag. */
  @Test
  void aPrimaryKeyColumnTheRowsLackIsNamedWithTheFlag() {
    KafkaSourceTranslator.SchemaSearch search =
        new KafkaSourceTranslator.SchemaSearch(List.of("nosuchcol"));
    assertThat(search.offer(record(7, ChangelogGenerator.kafkaKeyOf(LINE), LINE))).isNull();
    assertThat(search.failure("shop.public.items", TableIdentifier.of("db", "items")))
        .isInstanceOf(io.icebergcdc.jobs.definition.JobDefinitionException.class)
        .hasMessageStartingWith(
            "--primary-key nosuchcol: no column nosuchcol in the rows of the first event with a"
                + " schema, topic shop.public.items/0@7, which has [");
  }
}
