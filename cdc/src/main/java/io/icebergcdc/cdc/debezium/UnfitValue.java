package io.icebergcdc.cdc.debezium;

import org.apache.iceberg.types.Types;

/**
 * The failure of a value that its column's type cannot hold, worded the same for the JSON parser
 * and the conversion of Debezium's Connect structs.
 */
public final class UnfitValue {

  private UnfitValue() {}

  /**
   * @param shown the value as a message shows it
   * @param cause why the conversion failed
   */
  public static IllegalArgumentException of(
      Types.NestedField column, String shown, RuntimeException cause) {
    return new IllegalArgumentException(
        "column '"
            + column.name()
            + "' of type "
            + column.type()
            + " cannot hold "
            + shown
            + ": "
            + cause.getMessage(),
        cause);
  }
}
