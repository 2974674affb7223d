package io.icebergcdc.dedup.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.dedup.AppliedChange;

/**
 * The entries in a {@link KeyIndex} on the heap: one look-up finds a key's slot, which holds both
 * its entry and the number of its pending change. A key new to the index gets a reserved slot with
 * nothing applied when its first change becomes pending.
 */
final class IndexEntryStore implements EntryStore {

  private final KeyIndex index;
  private final KeyContext context;

  private byte[] key;
  private long hash;
  private int slot;
  private boolean entryInIndex;

  IndexEntryStore(KeyIndex index, KeyContext context) {
    this.index = index;
    this.context = context;
  }

  @Override
  public int find(ChangeEvent event) throws Exception {
    Object current = context.currentKey();
    key = context.keyBytes(current);
    hash = KeyIndex.hash(current, key);
    slot = index.slotOf(key, hash, context.now());
    entryInIndex = false;
    return slot < 0 ? 0 : index.pendingAt(slot);
  }

  @Override
  public AppliedChange entry() {
    AppliedChange entry = slot < 0 ? null : index.at(slot);
    entryInIndex = entry != null;
    return entry;
  }

  @Override
  public Object pendingKey() {
    return null;
  }

  @Override
  public AppliedChange priorToKeep(AppliedChange prior) {
    // What the index holds stays there until the flush, which reads it again.
    return entryInIndex ? null : prior;
  }

  @Override
  public void markPending(int number, ChangeEvent event) {
    if (slot < 0) {
      // Nothing has changed the index since find looked the key up.
      slot = index.reserve(key, hash, context.currentKeyGroup(), slot);
    }
    index.markPendingAt(slot, number);
  }

  @Override
  public AppliedChange priorOfPending(int number, PendingChanges pending) {
    return index.at(slot);
  }

  @Override
  public AppliedChange atPending(int number, Object key, AppliedChange kept) {
    // Its slot holds what was applied before (or nothing, reserved).
    slot = index.slotOfPending(number);
    return kept != null ? kept : index.at(slot);
  }

  @Override
  public void releasePending() throws Exception {
    context.setCurrentKey(context.keyOf(index.keyAt(slot)));
    index.removeReservedAt(slot);
  }

  @Override
  public void putLive(AppliedChange applied, AppliedChange prior) {
    index.putAt(slot, applied, context.now());
  }

  @Override
  public void putDeleted(AppliedChange applied, boolean existed) {
    index.putAt(slot, applied, context.now());
  }

  @Override
  public void pendingCleared() {
    index.pendingCleared();
  }

  @Override
  public void put(AppliedChange value) throws Exception {
    Object current = context.currentKey();
    byte[] bytes = context.keyBytes(current);
    index.put(
        bytes, KeyIndex.hash(current, bytes), context.currentKeyGroup(), value, context.now());
  }

  @Override
  public void putTombstone(AppliedChange value) throws Exception {
    put(value);
  }

  @Override
  public AppliedChange live() throws Exception {
    Object current = context.currentKey();
    byte[] bytes = context.keyBytes(current);
    AppliedChange entry = index.get(bytes, KeyIndex.hash(current, bytes), context.now());
    return entry == null || entry.deleted() ? null : entry;
  }
}
