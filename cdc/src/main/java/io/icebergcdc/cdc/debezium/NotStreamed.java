package io.icebergcdc.cdc.debezium;

/**
 * Thrown where an event read as it streams by has a shape its tree would read otherwise (a name
 * given twice, a value of another kind): the event is then read as a tree, which decides.
 */
final class NotStreamed extends RuntimeException {

  private static final long serialVersionUID = 1L;

  static final NotStreamed INSTANCE = new NotStreamed();

  private NotStreamed() {
    super("read as a tree", null, false, false);
  }
}
