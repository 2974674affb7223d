package io.icebergcdc.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.hadoop.HadoopOutputFile;
import org.apache.iceberg.io.FileAppender;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;

/**
 * What opening one small Parquet file costs through Iceberg's writer, by the kind of file IO: a
 * {@code HadoopFileIO} file, whose Hadoop configuration the writer copies, against the same file
 * handed over as any other IO's (as {@code S3FileIO}'s are), for which the writer builds a
 * configuration afresh from Hadoop's default resources. Each file holds one row; rounds alternate.
 * Wall and CPU time of the writing thread per file; then the two ways of making the configuration
 * alone.
 *
 * <pre>bash bench/java.sh ParquetOpenCost [files per round, default 2000] [rounds, default 5]</pre>
 */
public final class ParquetOpenCost {

  private static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "v", Types.StringType.get()),
          Types.NestedField.optional(3, "n", Types.LongType.get()));

  private ParquetOpenCost() {}

  public static void main(String[] args) throws Exception {
    int files = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    Path dir = Files.createTempDirectory("parquet-open-cost");
    // A file IO's configuration, its default resources read once, as HadoopFileIO holds it.
    Configuration conf = new Configuration();
    conf.get("fs.defaultFS");
    Record row = GenericRecord.create(SCHEMA);
    row.setField("id", 1L);
    row.setField("v", "a");
    row.setField("n", 2L);
    java.lang.management.ThreadMXBean threads =
        java.lang.management.ManagementFactory.getThreadMXBean();
    System.out.println(
        "| round | Hadoop file IO, ms a file | other file IO, ms a file | ratio | Hadoop file IO, CPU"
            + " ms a file | other file IO, CPU ms a file | CPU ratio |");
    System.out.println("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    int written = 0;
    for (int round = 0; round <= rounds; round++) {
      long hadoop = 0;
      long other = 0;
      long hadoopCpu = 0;
      long otherCpu = 0;
      for (int i = 0; i < files; i++) {
        OutputFile file =
            HadoopOutputFile.fromPath(
                new org.apache.hadoop.fs.Path(dir.resolve("f" + written++ + ".parquet").toUri()),
                conf);
        boolean asHadoop = i % 2 == 0;
        long start = System.nanoTime();
        long startCpu = threads.getCurrentThreadCpuTime();
        try (FileAppender<Record> writer =
            Parquet.write(asHadoop ? file : new OtherIoFile(file))
                .schema(SCHEMA)
                .createWriterFunc(GenericParquetWriter::create)
                .overwrite()
                .build()) {
          writer.add(row);
        }
        long took = System.nanoTime() - start;
        long cpu = threads.getCurrentThreadCpuTime() - startCpu;
        if (asHadoop) {
          hadoop += took;
          hadoopCpu += cpu;
        } else {
          other += took;
          otherCpu += cpu;
        }
      }
      // Round 0 warms the JIT up and is not reported.
      if (round > 0) {
        double half = files / 2.0;
        System.out.printf(
            Locale.ROOT,
            "| %d | %.3f | %.3f | %.1fx | %.3f | %.3f | %.1fx |%n",
            round,
            hadoop / 1e6 / half,
            other / 1e6 / half,
            (double) other / hadoop,
            hadoopCpu / 1e6 / half,
            otherCpu / 1e6 / half,
            (double) otherCpu / hadoopCpu);
      }
      try (var listing = Files.list(dir)) {
        for (Path path : (Iterable<Path>) listing::iterator) {
          Files.delete(path);
        }
      }
    }
    // The configuration alone, as the writer makes it for each kind (and then sets a property).
    int calls = 2000;
    for (int round = 0; round <= 2; round++) {
      long startCpu = threads.getCurrentThreadCpuTime();
      for (int i = 0; i < calls; i++) {
        new Configuration(conf).set("parquet.bench", "1");
      }
      long copied = threads.getCurrentThreadCpuTime() - startCpu;
      startCpu = threads.getCurrentThreadCpuTime();
      for (int i = 0; i < calls / 10; i++) {
        new Configuration().set("parquet.bench", "1");
      }
      long fresh = threads.getCurrentThreadCpuTime() - startCpu;
      if (round > 0) {
        System.out.printf(
            Locale.ROOT,
            "configuration alone, round %d: copied %.3f CPU ms, afresh %.3f CPU ms%n",
            round,
            copied / 1e6 / calls,
            fresh / 1e6 / (calls / 10));
      }
    }
  }

  /** The same file, as an IO other than Hadoop's hands it over. */
  private record OtherIoFile(OutputFile file) implements OutputFile {
    @Override
    public PositionOutputStream create() {
      return file.create();
    }

    @Override
    public PositionOutputStream createOrOverwrite() {
      return file.createOrOverwrite();
    }

    @Override
    public String location() {
      return file.location();
    }

    @Override
    public org.apache.iceberg.io.InputFile toInputFile() {
      return file.toInputFile();
    }
  }
}
