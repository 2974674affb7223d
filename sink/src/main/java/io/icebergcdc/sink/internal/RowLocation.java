package io.icebergcdc.sink.internal;

import java.util.Objects;

/** Where the live row of a key is: a data file and the row's position in it. */
final class RowLocation {

  private final String file;
  private final long position;

  RowLocation(String file, long position) {
    this.file = Objects.requireNonNull(file, "file");
    this.position = position;
  }

  String file() {
    return file;
  }

  long position() {
    return position;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RowLocation
        && position == ((RowLocation) o).position
        && file.equals(((RowLocation) o).file);
  }

  @Override
  public int hashCode() {
    return 31 * file.hashCode() + Long.hashCode(position);
  }

  @Override
  public String toString() {
    return file + "@" + position;
  }
}
