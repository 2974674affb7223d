package io.icebergcdc.it;

import io.icebergcdc.localkafka.LocalKafkaBroker;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/** A {@link LocalKafkaBroker} for a test class: started before it, stopped after it. */
final class KafkaBroker implements BeforeAllCallback, AfterAllCallback {

  private LocalKafkaBroker broker;

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    broker = LocalKafkaBroker.start();
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    if (broker != null) {
      broker.close();
    }
  }

  String bootstrapServers() {
    return broker.bootstrapServers();
  }

  void createTopic(String name, int partitions) throws Exception {
    broker.createTopic(name, partitions);
  }

  org.apache.kafka.clients.admin.Admin admin() {
    return broker.admin();
  }

  List<RecordMetadata> produce(String topic, List<Map.Entry<String, String>> records)
      throws Exception {
    return broker.produce(topic, records);
  }
}
