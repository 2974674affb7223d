package io.icebergcdc.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;

class SinkOptionsTest {

  @Test
  void everyOptionHasADescriptionAndItsOwnKey() {
    Set<String> keys = new HashSet<>();
    for (ConfigOption<?> option : SinkOptions.all()) {
      assertThat(option.description().toString()).as(option.key()).isNotBlank();
      assertThat(keys.add(option.key())).as("duplicate key " + option.key()).isTrue();
    }
  }

  @Test
  void anUnknownKeyInOurNamespacesFailsNamingIt() {
    Configuration config = new Configuration();
    config.setString("sink.distrbution", "PARTITION");
    assertThatThrownBy(() -> SinkOptions.validate(config))
        .hasMessageContaining("'sink.distrbution'");

    Configuration other = new Configuration();
    other.setString("pipeline.name", "x");
    other.setString("dedup.tombstone-ttl", "1 h");
    other.setString("dedup.index.max-keys", "0");
    SinkOptions.validate(other);
  }

  @Test
  void aNegativeKeyLimitOfTheIndexFailsNamingTheOption() {
    Configuration config = new Configuration();
    config.setString("dedup.index.max-keys", "-1");
    assertThatThrownBy(() -> SinkOptions.validate(config))
        .hasMessageContaining("'dedup.index.max-keys' is -1");
  }
}
