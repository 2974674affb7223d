package io.icebergcdc.jobs.kafka;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/** Keeps each Kafka record's key and value bytes, with its topic, partition and offset. */
public final class KafkaRecordDeserializer
    implements KafkaRecordDeserializationSchema<KafkaRecord> {

  private static final long serialVersionUID = 1L;

  @Override
  public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<KafkaRecord> out) {
    out.collect(
        new KafkaRecord(
            record.topic(),
            record.partition(),
            record.offset(),
            record.timestamp(),
            record.key(),
            record.value()));
  }

  @Override
  public TypeInformation<KafkaRecord> getProducedType() {
    return TypeInformation.of(KafkaRecord.class);
  }
}
