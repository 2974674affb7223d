package io.icebergcdc.jobs.cli;

import io.icebergcdc.dedup.AmbiguousChangePolicy;
import io.icebergcdc.dedup.DedupOptions;
import io.icebergcdc.jobs.definition.ChangelogFile;
import io.icebergcdc.jobs.definition.DatabaseSource;
import io.icebergcdc.jobs.definition.DeadLetterOutput;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.JobDefinitionException;
import io.icebergcdc.jobs.definition.KafkaTopics;
import io.icebergcdc.jobs.definition.SourceDefinition;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.jobs.pipeline.JobRunner;
import io.icebergcdc.jobs.pipeline.ReadAgain;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.SinkOptions;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;

/**
 * {@code apply --source file|postgres|mysql|mariadb|kafka ...}: reads the flags into a {@link
 * JobDefinition}, checking every one before anything is created, and runs it.
 */
final class ApplyCommand {

  private ApplyCommand() {}

  static final List<String> SOURCES = List.of("file", "postgres", "mysql", "mariadb", "kafka");

  static final List<Flag> SOURCE =
      List.of(Flag.of("source", String.join("|", SOURCES), "Where the changes come from."));

  static final List<Flag> FILE =
      List.of(
          Flag.of("path", "<changes.jsonl>", "A file of Debezium JSON change events, one a line."),
          Flag.of(
              "table", "<db.table>", "The Iceberg table; created from the first event's schema."),
          Flag.of("primary-key", "<col,...>", "The key columns of the table."),
          Flag.of(
              "partition-by",
              "<spec>",
              "The partition spec of a table to create, such as 'bucket(16, id), days(ts)'; an"
                  + " existing table must have it."),
          Flag.of(
              "sequence-column",
              "<col>",
              "A column that orders the changes of a key, instead of the events' source"
                  + " positions."));

  static final List<Flag> TABLE =
      List.of(
          Flag.of(
              "format-version",
              "2|3",
              "The format version of tables to create; an existing table must have it. Default:"
                  + " 2."));

  /** Every flag of {@code apply}, each once. */
  static List<Flag> flags() {
    Map<String, Flag> all = new LinkedHashMap<>();
    for (List<Flag> group :
        List.of(
            SOURCE,
            FILE,
            DatabaseFlags.FLAGS,
            KafkaFlags.FLAGS,
            CatalogFlags.FLAGS,
            TABLE,
            JobFlags.SINK,
            JobFlags.MAINTENANCE,
            JobFlags.RUNTIME)) {
      group.forEach(f -> all.putIfAbsent(f.name(), f));
    }
    all.put("help", Flag.of("help", "", "Show this help."));
    return new ArrayList<>(all.values());
  }

  static String help() {
    StringBuilder out =
        new StringBuilder(
            "usage: apply --source file|postgres|mysql|mariadb|kafka [flags]\n"
                + "Applies a changelog to Iceberg tables, exactly once, one commit per"
                + " checkpoint.\n");
    Flag.describe(out, "Source", SOURCE);
    Flag.describe(out, "--source file (one table)", FILE);
    Flag.describe(
        out,
        "--source postgres|mysql|mariadb (Debezium, every captured table)",
        DatabaseFlags.FLAGS);
    Flag.describe(out, "--source kafka (a table per topic)", KafkaFlags.FLAGS);
    Flag.describe(out, "Catalog (every source)", CatalogFlags.FLAGS);
    Flag.describe(out, "Tables", TABLE);
    Flag.describe(out, "Sink and dedup", JobFlags.SINK);
    Flag.describe(out, "Maintenance (after the commits)", JobFlags.MAINTENANCE);
    Flag.describe(out, "Runtime", JobFlags.RUNTIME);
    return out.toString();
  }

  static int run(Arguments args, PrintStream out) throws Exception {
    Plan plan = plan(args);
    JobDefinition job = plan.job();
    out.println(
        "applying "
            + job.source().origin()
            + " to "
            + job.catalog().describe()
            + (job.source() instanceof ChangelogFile
                ? " table " + job.tables().nameTemplate()
                : ""));
    JobRunner.Outcome outcome;
    String savepoint = null;
    try {
      if (!plan.readAgain().isEmpty()) {
        savepoint = dropStateOf(plan.readAgain(), job, out);
        job = job.restoringFrom(savepoint);
      }
      outcome = new JobRunner(job).run();
    } catch (JobDefinitionException e) {
      if (savepoint != null) {
        // Not an argument error: the run without the tables has changed the job's state.
        throw new IllegalStateException(
            e.getMessage() + " (resume from the savepoint: --restore-from " + savepoint + ")", e);
      }
      throw new Arguments.UsageException("apply: " + e.getMessage());
    }
    if (outcome.detached()) {
      out.println(
          "submitted "
              + job.source().origin()
              + " as Flink job "
              + outcome.job()
              + ", detached: it runs on the cluster, which reports how it ends");
      return 0;
    }
    long deadLettered = outcome.deadLettered();
    out.println("applied " + job.source().origin());
    if (deadLettered > 0) {
      out.println(
          deadLettered
              + " record"
              + (deadLettered == 1 ? "" : "s")
              + " could not be applied and went to the dead-letter output "
              + job.deadLetters().describe());
    }
    return 0;
  }

  /**
   * What {@code apply} runs: the job, and the tables whose restored state it drops first and reads
   * again from the source ({@code --read-again}).
   */
  record Plan(JobDefinition job, List<String> readAgain) {}

  /**
   * Runs {@code job} without {@code tables} until it has stopped with a savepoint that holds no
   * state of them ({@link ReadAgain}), saying so.
   *
   * @return the savepoint
   */
  private static String dropStateOf(List<String> tables, JobDefinition job, PrintStream out)
      throws Exception {
    String them = tables.size() == 1 ? "it" : "them";
    out.println(
        "reading "
            + String.join(", ", tables)
            + " again: the job runs without "
            + them
            + " from "
            + job.runtime().restoreFrom()
            + " until it has stopped with a savepoint, which drops the job's state of "
            + them);
    String savepoint = ReadAgain.dropStateOf(job, tables);
    out.println(
        "stopped with savepoint "
            + savepoint
            + "; resuming from it with every table (should this run end before its first"
            + " checkpoint, resume with --restore-from "
            + savepoint
            + ", not latest)");
    return savepoint;
  }

  /** The job of the flags; every flag is checked before the job touches a table. */
  static JobDefinition definition(Arguments args) {
    return plan(args).job();
  }

  /** {@link #definition}, and the tables to read again. */
  static Plan plan(Arguments args) {
    String source = args.choice("source", null, SOURCES);
    if (source == null) {
      throw new Arguments.UsageException(
          "apply: --source is required: " + String.join(", ", SOURCES));
    }
    SourceDefinition definition;
    TableDefinition tables;
    String deadLetterTopic = null;
    switch (source) {
      case "file" -> {
        definition =
            new ChangelogFile(
                Paths.get(args.required("path")).toAbsolutePath().toString(),
                args.optional("sequence-column", null));
        tables =
            new TableDefinition(
                tableName(args.required("table")),
                args.list("primary-key"),
                args.optional("partition-by", null),
                formatVersion(args));
      }
      case "kafka" -> {
        definition = KafkaFlags.topics(args);
        tables =
            new TableDefinition(
                template(args, "cdc.{topic}", List.of("{topic}", "{table}")),
                args.optionalList("primary-key"),
                null,
                formatVersion(args));
        deadLetterTopic = args.optional("dead-letter-topic", null);
        KafkaTopics kafka = (KafkaTopics) definition;
        if (deadLetterTopic != null
            && kafka.topicPattern() != null
            && deadLetterTopic.matches(kafka.topicPattern())) {
          throw new Arguments.UsageException(
              "apply: --dead-letter-topic "
                  + deadLetterTopic
                  + " matches --topic-pattern "
                  + kafka.topicPattern()
                  + ": the job would read its own dead letters");
        }
        if (deadLetterTopic != null && kafka.topics().contains(deadLetterTopic)) {
          throw new Arguments.UsageException(
              "apply: --dead-letter-topic "
                  + deadLetterTopic
                  + " is one of --topics: the job would read its own dead letters");
        }
      }
      default -> {
        definition = DatabaseFlags.source(DatabaseSource.Kind.of(source), args);
        tables =
            new TableDefinition(
                template(args, "{schema}.{table}", List.of("{schema}", "{table}", "{database}")),
                List.of(),
                null,
                formatVersion(args));
      }
    }
    CatalogDefinition catalog = CatalogFlags.definition(args, null);
    Configuration sinkOptions = JobFlags.sinkOptions(args);
    if (sinkOptions.get(SinkOptions.COMMIT_ATOMIC_ACROSS_TABLES) && !isRest(catalog)) {
      throw new Arguments.UsageException(
          "apply: --commit-atomic-across-tables needs a REST catalog (--catalog-type rest), whose"
              + " multi-table commit it uses; the catalog is "
              + catalog.describe());
    }
    DeadLetterOutput deadLetters =
        new DeadLetterOutput(args.optional("dead-letter-path", null), deadLetterTopic);
    if (sinkOptions.get(DedupOptions.ON_AMBIGUOUS_CHANGE) == AmbiguousChangePolicy.DEAD_LETTER
        && deadLetters.path() == null
        && deadLetters.topic() == null) {
      // The changes it sets aside would go nowhere.
      throw new Arguments.UsageException(
          "apply: --on-ambiguous-change dead_letter needs a dead-letter output: give"
              + " --dead-letter-path"
              + ("kafka".equals(source) ? " or --dead-letter-topic" : ""));
    }
    var runtime = JobFlags.runtime(args);
    List<String> readAgain =
        definition instanceof DatabaseSource database
            ? DatabaseFlags.readAgain(args, database, runtime.restoreFrom())
            : List.of();
    args.rejectUnused("apply --source " + source);
    if (definition instanceof ChangelogFile file) {
      checkFile(args, file.path());
    }
    try {
      return new Plan(
          new JobDefinition(definition, catalog, tables, sinkOptions, deadLetters, runtime),
          readAgain);
    } catch (IllegalArgumentException e) {
      throw new Arguments.UsageException("apply: " + e.getMessage());
    }
  }

  private static boolean isRest(CatalogDefinition catalog) {
    return catalog.impl() == null
        ? catalog.type() == CatalogDefinition.Type.REST
        : catalog.impl().equals(org.apache.iceberg.rest.RESTCatalog.class.getName());
  }

  private static Integer formatVersion(Arguments args) {
    if (!args.has("format-version")) {
      args.optional("format-version", null);
      return null;
    }
    String value = args.choice("format-version", null, List.of("2", "3"));
    return Integer.valueOf(value);
  }

  private static void checkFile(Arguments args, String path) {
    java.nio.file.Path file = Paths.get(path);
    if (!Files.isRegularFile(file)) {
      throw new Arguments.UsageException(
          args.command()
              + ": --path "
              + path
              + (Files.isDirectory(file) ? " is a directory" : " is no file"));
    }
    try {
      if (Files.size(file) == 0) {
        throw new Arguments.UsageException(
            args.command() + ": --path " + path + " is empty: there are no changes to apply");
      }
    } catch (IOException e) {
      throw new Arguments.UsageException(
          args.command() + ": cannot read --path " + path + ": " + e.getMessage());
    }
  }

  /**
   * {@code --table-template}, checked: only the source's placeholders (a misspelt one would be a
   * table of that literal name), and a namespace before the last dot.
   */
  private static String template(Arguments args, String fallback, List<String> placeholders) {
    String template = args.optional("table-template", fallback);
    java.util.regex.Matcher placeholder =
        java.util.regex.Pattern.compile("\\{[^}]*}").matcher(template);
    boolean known = true;
    while (placeholder.find()) {
      known &= placeholders.contains(placeholder.group());
    }
    // A brace left over is a placeholder misspelt too: cdc.{table
    if (!known || placeholder.replaceAll("").matches(".*[{}].*")) {
      throw args.invalid(
          "table-template",
          template,
          "a table name whose placeholders are " + String.join(", ", placeholders));
    }
    int dot = template.lastIndexOf('.');
    if (dot <= 0 || dot == template.length() - 1) {
      throw args.invalid(
          "table-template",
          template,
          "a table name with a namespace, as namespace.table (the part before the last dot)");
    }
    return template;
  }

  static String tableName(String name) {
    if (!name.matches("[\\w$]+(\\.[\\w$]+)+")) {
      throw new Arguments.UsageException(
          "--table must name a table as <database>.<table>, not '" + name + "'");
    }
    return name;
  }
}
