package io.icebergcdc.jobs.cli;

import io.icebergcdc.sink.AddFiles;
import io.icebergcdc.sink.CatalogDefinition;
import java.io.PrintStream;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;

/**
 * {@code add-files --table db.table --path <dir|prefix|file> [catalog flags]}: adopts existing
 * Parquet files into a table without copying them, in one snapshot ({@link AddFiles}).
 */
final class AddFilesCommand {

  private AddFilesCommand() {}

  static final List<Flag> FILES =
      List.of(
          Flag.of("table", "<db.table>", "The table to add the files to; it must exist."),
          Flag.of(
              "path",
              "<dir|uri>",
              "A directory, an S3 prefix (s3://bucket/prefix) or one .parquet file; the Parquet"
                  + " files under a directory are found in its subdirectories too, leaving out"
                  + " hidden ones (_temporary, .name). A path without a scheme is one of this"
                  + " machine, made absolute."));

  static List<Flag> flags() {
    List<Flag> flags = new ArrayList<>(FILES);
    flags.addAll(CatalogFlags.FLAGS);
    flags.add(Flag.of("help", "", "Show this help."));
    return flags;
  }

  static String help() {
    StringBuilder out =
        new StringBuilder(
            "usage: add-files --table <db.table> --path <dir|uri> [catalog flags]\n"
                + "Adds existing Parquet files to a table in one snapshot, without copying them:"
                + " the table\nreads them where they are. Each file's columns must fit the"
                + " table's, and a file's partition\ncomes from col=value directories or from its"
                + " statistics; one file that does not fit adds none.\n");
    Flag.describe(out, "Files", FILES);
    Flag.describe(out, "Catalog", CatalogFlags.FLAGS);
    return out.toString();
  }

  static int run(Arguments args, PrintStream out) {
    TableIdentifier identifier =
        TableIdentifier.parse(ApplyCommand.tableName(args.required("table")));
    String location = location(args.required("path"));
    CatalogDefinition definition = CatalogFlags.definition(args, null);
    args.rejectUnused("add-files");
    Catalog catalog = definition.connect();
    try {
      Table table;
      try {
        table = catalog.loadTable(identifier);
      } catch (NoSuchTableException e) {
        throw new Arguments.UsageException(
            "add-files: there is no table " + identifier + " in " + definition.describe());
      }
      AddFiles.Result result = AddFiles.adopt(table, location);
      out.println(
          "Added "
              + result.files()
              + " files ("
              + result.rows()
              + " rows) from "
              + location
              + " to "
              + identifier
              + " in snapshot "
              + result.snapshotId());
      return 0;
    } finally {
      CatalogDefinition.close(catalog);
    }
  }

  /** A URI as given; a local path made absolute, as the table records it. */
  private static String location(String path) {
    return path.contains(":") ? path : Paths.get(path).toAbsolutePath().normalize().toString();
  }
}
