package io.icebergcdc.jobs.cli;

import io.icebergcdc.jobs.definition.KafkaTopics;
import io.icebergcdc.sink.CatalogDefinition;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The flags of {@code apply --source kafka}: the cluster, the topics, their format, properties. */
final class KafkaFlags {

  private KafkaFlags() {}

  static final List<Flag> FLAGS =
      List.of(
          Flag.of("bootstrap-servers", "<host:port,...>", "The Kafka cluster."),
          Flag.of("topics", "<topic,...>", "The topics to read."),
          Flag.of(
              "topic-pattern",
              "<regex>",
              "Or: the topics matching this, and those created while the job runs."),
          Flag.of(
              "format",
              String.join("|", KafkaTopics.FORMATS),
              "How the records are written.",
              KafkaTopics.DEBEZIUM_JSON),
          Flag.of(
              "group-id", "<id>", "The consumer group offsets are committed to.", "iceberg-cdc"),
          Flag.of(
              "starting-offsets",
              "earliest|latest|committed|timestamp:<ms>",
              "Where a job without state starts.",
              "earliest"),
          Flag.of(
              "kafka-properties",
              "<key=value,...>",
              "Further consumer properties, such as security settings; a comma within a value"
                  + " is written \\, (a value that ends in a backslash goes in"
                  + " --kafka-properties-file); not for secrets."),
          Flag.of(
              "kafka-properties-file",
              "<file>",
              "A Java properties file of further consumer properties, for secrets such as"
                  + " sasl.jaas.config or ssl.truststore.password; read when the job starts, never"
                  + " printed."),
          Flag.of(
              "table-template",
              "<ns.name>",
              "The Iceberg table of each topic, with {topic} and {table}.",
              "cdc.{topic}"),
          Flag.of(
              "primary-key",
              "<col,...>",
              "The key of tables to create. Default: the fields of the records' keys."),
          Flag.of("sequence-column", "<col>", "A column that orders the changes of a key."),
          Flag.of(
              "dead-letter-topic",
              "<topic>",
              "A topic of the same cluster for records that cannot be applied."));

  /**
   * Whether a Kafka client property holds a secret: Kafka's password-type settings (passwords, the
   * JAAS configuration, client secrets, private keys).
   */
  static boolean isSecret(String key) {
    String lower = key.toLowerCase(Locale.ROOT);
    return lower.contains("password")
        || lower.contains("passphrase")
        || lower.contains("private")
        || lower.endsWith("jaas.config")
        || lower.contains("secret")
        || lower.endsWith("keystore.key");
  }

  /** The topics of {@code apply --source kafka}, their flags checked. */
  static KafkaTopics topics(Arguments args) {
    String format = args.choice("format", KafkaTopics.DEBEZIUM_JSON, KafkaTopics.FORMATS);
    String topics = args.optional("topics", null);
    String pattern = args.optional("topic-pattern", null);
    if ((topics == null) == (pattern == null)) {
      throw new Arguments.UsageException("apply: give --topics or --topic-pattern, one of them");
    }
    if (pattern != null) {
      try {
        java.util.regex.Pattern.compile(pattern);
      } catch (java.util.regex.PatternSyntaxException e) {
        throw new Arguments.UsageException(
            "apply: --topic-pattern is no regular expression: " + e.getDescription());
      }
    }
    if (topics != null) {
      List<String> listed = args.list("topics");
      if (new java.util.HashSet<>(listed).size() < listed.size()) {
        throw args.invalid("topics", topics, "topics named once each");
      }
    }
    String startingOffsets = args.optional("starting-offsets", "earliest");
    if (startingOffsets.startsWith("timestamp:") && startingOffsets.length() > 10) {
      try {
        Long.parseLong(startingOffsets.substring(10));
      } catch (NumberFormatException e) {
        throw new Arguments.UsageException(
            "apply: --starting-offsets: "
                + startingOffsets
                + " is no time in epoch milliseconds (a whole number up to "
                + Long.MAX_VALUE
                + ")");
      }
    }
    if (!startingOffsets.matches("earliest|latest|committed|timestamp:\\d+")) {
      throw new Arguments.UsageException(
          "apply: --starting-offsets: starting offsets must be earliest, latest, committed or"
              + " timestamp:<epoch millis>, not '"
              + startingOffsets
              + "'");
    }
    Map<String, String> kafkaProperties = new LinkedHashMap<>();
    for (String pair : args.optionalEscapedList("kafka-properties")) {
      int eq = pair.indexOf('=');
      if (eq <= 0) {
        throw new Arguments.UsageException(
            "apply: --kafka-properties takes comma-separated key=value pairs, not '"
                + pair
                + "' (a comma within a value is written \\,)");
      }
      String key = pair.substring(0, eq).trim();
      if (isSecret(key)) {
        // The command line shows in the process list, the shell's history and, in application
        // mode, Flink's configuration.
        throw new Arguments.UsageException(
            "apply: --kafka-properties "
                + key
                + " is a secret; put it in the file of --kafka-properties-file instead of on the"
                + " command line");
      }
      kafkaProperties.put(key, pair.substring(eq + 1).trim());
    }
    String propertiesFile = args.optional("kafka-properties-file", null);
    if (propertiesFile != null) {
      try {
        kafkaProperties.putAll(CatalogDefinition.readPropertiesFile(Paths.get(propertiesFile)));
      } catch (java.io.IOException e) {
        throw new Arguments.UsageException(
            "apply: cannot read --kafka-properties-file " + propertiesFile + ": " + e.getMessage());
      }
    }
    String bootstrapServers = args.required("bootstrap-servers");
    String groupId = args.optional("group-id", "iceberg-cdc");
    Map<String, String> flags = Map.of("bootstrap.servers", bootstrapServers, "group.id", groupId);
    for (String flagged : List.of("bootstrap.servers", "group.id")) {
      String given = kafkaProperties.get(flagged);
      if (given != null && !given.equals(flags.get(flagged))) {
        throw new Arguments.UsageException(
            "apply: Kafka property "
                + flagged
                + " has a flag of its own: give --"
                + flagged.replace('.', '-')
                + " instead");
      }
    }
    try {
      return new KafkaTopics(
          bootstrapServers,
          topics == null ? List.of() : args.list("topics"),
          pattern,
          groupId,
          startingOffsets,
          format,
          kafkaProperties,
          args.optional("sequence-column", null));
    } catch (IllegalArgumentException e) {
      throw new Arguments.UsageException("apply: " + e.getMessage());
    }
  }
}
