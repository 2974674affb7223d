package io.icebergcdc.capture;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.icebergcdc.cdc.SourceSequence;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Collection;
import java.util.Map;

/**
 * Refuses to resume a PostgreSQL connector from offsets that its replication slot has already
 * released. The slot only moves forward when a checkpoint completes, so this happens when a job is
 * restored from an older checkpoint or savepoint than its last one, or when the slot was dropped:
 * the changes between the restored position and the slot's are gone from the server, and streaming
 * on would silently skip them.
 */
final class PostgresSlotCheck {

  static final String POSTGRES_CONNECTOR = "io.debezium.connector.postgresql.PostgresConnector";

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private PostgresSlotCheck() {}

  static void verifyRestorable(Map<String, String> properties, Collection<String> offsets) {
    if (!POSTGRES_CONNECTOR.equals(properties.get("connector.class"))) {
      return;
    }
    Long restored = null;
    for (String offset : offsets) {
      Long lsn = restoredLsn(offset);
      if (lsn != null) {
        restored = restored == null ? lsn : Math.max(restored, lsn);
      }
    }
    if (restored == null) {
      return;
    }
    String slot = properties.getOrDefault("slot.name", "debezium");
    SourceDatabase database = SourceDatabase.of(properties);
    String confirmed;
    try (Connection connection = database.connect();
        PreparedStatement query =
            connection.prepareStatement(
                "SELECT confirmed_flush_lsn::text FROM pg_replication_slots"
                    + " WHERE slot_name = ? AND database = current_database()")) {
      query.setString(1, slot);
      try (ResultSet result = query.executeQuery()) {
        if (!result.next()) {
          throw new LostSourcePositionException(
              "the job resumes PostgreSQL at "
                  + SourceSequence.formatLsn(restored)
                  + " but the replication slot '"
                  + slot
                  + "' does not exist: the changes since then cannot be read; start the job"
                  + " without its state (a new snapshot) or restore the slot");
        }
        confirmed = result.getString(1);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(
          "cannot check replication slot '" + slot + "' at " + database + ": " + e.getMessage(), e);
    }
    if (confirmed != null && SourceSequence.parseLsn(confirmed) > restored) {
      throw new LostSourcePositionException(
          "the job resumes PostgreSQL at "
              + SourceSequence.formatLsn(restored)
              + " but the replication slot '"
              + slot
              + "' has already released the log up to "
              + confirmed
              + ": the changes in between are gone. This happens when a job is restored from an"
              + " older checkpoint or savepoint than its latest; restore the latest one, or start"
              + " without state (a new snapshot)");
    }
  }

  /**
   * The LSN up to which the restored offset has processed the log, if it has one: the one Debezium
   * would confirm to the slot (the last commit's, else the last processed change's), else the
   * change's own.
   */
  static Long restoredLsn(String offsetJson) {
    try {
      JsonNode offset = MAPPER.readTree(offsetJson);
      JsonNode lsn = offset.get("lsn_commit");
      if (lsn == null || lsn.isNull()) {
        lsn = offset.get("lsn_proc");
      }
      if (lsn == null || lsn.isNull()) {
        lsn = offset.get("lsn");
      }
      return lsn == null || !lsn.canConvertToLong() ? null : lsn.longValue();
    } catch (IOException e) {
      throw new IllegalArgumentException("restored offset is not JSON: " + offsetJson, e);
    }
  }
}
