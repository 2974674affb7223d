package io.icebergcdc.dedup.internal;

/**
 * The operator's key context as an {@link EntryStore} needs it: the key in context, the bytes by
 * which the in-memory index keeps a key, its key group, and the processing time tombstones' time to
 * live counts.
 */
interface KeyContext {

  Object currentKey();

  void setCurrentKey(Object key);

  byte[] keyBytes(Object key) throws java.io.IOException;

  Object keyOf(byte[] bytes) throws java.io.IOException;

  int currentKeyGroup();

  long now();
}
