package io.icebergcdc.bench;

import io.icebergcdc.bench.chaos.ChaosFileIO;
import io.icebergcdc.bench.chaos.ChaosListener;
import io.icebergcdc.bench.chaos.Injection;
import io.icebergcdc.jobs.definition.DeadLetterOutput;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.KafkaTopics;
import io.icebergcdc.jobs.definition.RuntimeDefinition;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.jobs.pipeline.JobRunner;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.MaintenanceOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;

/**
 * The job of the chaos run ({@link ChaosBenchmark}), in a JVM of its own that the driver kills now
 * and then: the Kafka apply job of the job jar, on the REST catalog, through a file IO and a commit
 * listener that fail when the driver arms them ({@link Injection}), restored from the latest
 * retained checkpoint. With {@code --final}, it removes every orphan after each commit and stops
 * with a savepoint once the driver asks (a {@code stop} file in the control directory).
 */
public final class ChaosJob {

  private ChaosJob() {}

  public static void main(String[] args) throws Exception {
    BenchOptions options =
        BenchOptions.parse(
            args,
            Set.of(
                "control",
                "bootstrap",
                "topic",
                "catalog-uri",
                "checkpoint-dir",
                "restore",
                "parallelism",
                "checkpoint-interval",
                "final"));
    Path control = Paths.get(options.get("control"));
    System.setProperty(Injection.CONTROL_PROPERTY, control.toString());
    boolean last = options.has("final");

    Configuration sink = new Configuration();
    // Every snapshot stays: the check that each checkpoint was committed once reads them all.
    sink.set(MaintenanceOptions.SNAPSHOT_MAX_AGE, Duration.ofDays(7));
    sink.set(MaintenanceOptions.INTERVAL, Duration.ofSeconds(last ? 0 : 5));
    sink.set(MaintenanceOptions.ORPHAN_INTERVAL, Duration.ofSeconds(last ? 0 : 5));
    if (last) {
      // Nothing else writes the table now: whatever no snapshot references is an orphan.
      sink.set(MaintenanceOptions.ORPHAN_MIN_AGE, Duration.ZERO);
    }
    JobDefinition job =
        new JobDefinition(
            KafkaTopics.ofTopic(
                options.get("bootstrap"), options.get("topic"), "chaos", KafkaTopics.DEBEZIUM_JSON),
            CatalogDefinition.builder()
                .type("rest")
                .uri(options.get("catalog-uri"))
                .property("io-impl", ChaosFileIO.class.getName())
                .build(),
            new TableDefinition("chaos.{table}", List.of(), null, 3),
            sink,
            DeadLetterOutput.NONE,
            new RuntimeDefinition(
                (int) options.getLong("parallelism", 2),
                Duration.ofMillis(options.millis("checkpoint-interval", "1s")),
                options.get("checkpoint-dir"),
                "hashmap",
                options.get("restore"),
                Integer.MAX_VALUE));
    JobClient client = new JobRunner(job, new ChaosListener()).start();
    System.out.println(
        "chaos job " + client.getJobID() + " restored from " + options.get("restore"));
    if (!last) {
      client.getJobExecutionResult().get();
      throw new IllegalStateException("the chaos job ended");
    }
    Path stop = control.resolve("stop");
    while (!Files.exists(stop)) {
      if (client.getJobStatus().get().isGloballyTerminalState()) {
        throw new IllegalStateException(
            "the final chaos job ended: " + client.getJobStatus().get());
      }
      Thread.sleep(200);
    }
    String savepoint =
        client
            .stopWithSavepoint(
                false,
                Paths.get(options.get("checkpoint-dir"))
                    .resolveSibling("savepoints")
                    .toUri()
                    .toString(),
                SavepointFormatType.CANONICAL)
            .get();
    System.out.println("stopped with savepoint " + savepoint);
    System.exit(0);
  }
}
