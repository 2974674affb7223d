package io.icebergcdc.jobs.cli;

import io.icebergcdc.sink.CatalogDefinition;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;

/** {@code inspect --table db.table [catalog flags]}: a table's snapshots and files. */
final class InspectCommand {

  private InspectCommand() {}

  static final List<Flag> TABLE = List.of(Flag.of("table", "<db.table>", "The table to show."));

  static List<Flag> flags() {
    List<Flag> flags = new ArrayList<>(TABLE);
    flags.addAll(CatalogFlags.FLAGS);
    flags.add(Flag.of("help", "", "Show this help."));
    return flags;
  }

  static String help() {
    StringBuilder out =
        new StringBuilder(
            "usage: inspect --table <db.table> [catalog flags]\n"
                + "Shows a table's snapshots, with what each commit did, and its files.\n");
    Flag.describe(out, "Table", TABLE);
    Flag.describe(out, "Catalog", CatalogFlags.FLAGS);
    return out.toString();
  }

  static int run(Arguments args, PrintStream out) {
    TableIdentifier identifier =
        TableIdentifier.parse(ApplyCommand.tableName(args.required("table")));
    CatalogDefinition definition = CatalogFlags.definition(args, null);
    args.rejectUnused("inspect");
    Catalog catalog = definition.connect();
    try {
      Table table;
      try {
        table = catalog.loadTable(identifier);
      } catch (NoSuchTableException e) {
        throw new Arguments.UsageException(
            "inspect: there is no table " + identifier + " in " + definition.describe());
      }
      new TableInspector(table).print(out);
      return 0;
    } finally {
      CatalogDefinition.close(catalog);
    }
  }
}
