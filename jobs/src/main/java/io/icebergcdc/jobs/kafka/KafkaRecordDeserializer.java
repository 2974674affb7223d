package io.icebergcdc.jobs.kafka;

import java.nio.charset.StandardCharsets;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/** Reads each Kafka record's key and value as UTF-8 text, with its topic, partition and offset. */
final class KafkaRecordDeserializer implements KafkaRecordDeserializationSchema<KafkaRecord> {

  private static final long serialVersionUID = 1L;

  @Override
  public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<KafkaRecord> out) {
    out.collect(
        new KafkaRecord(
            record.topic(),
            record.partition(),
            record.offset(),
            text(record.key()),
            text(record.value())));
  }

  private static String text(byte[] bytes) {
    return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
  }

  @Override
  public TypeInformation<KafkaRecord> getProducedType() {
    return TypeInformation.of(KafkaRecord.class);
  }
}
