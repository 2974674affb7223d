package io.icebergcdc.dedup.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.RowKey;
import io.icebergcdc.dedup.AppliedChange;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.api.common.state.ValueState;

/**
 * The entries in Flink's keyed state, a live entry and a tombstone (with its time to live) per key;
 * the pending changes found by key in a map of their own. Read once per key and interval, written
 * once at the flush.
 */
final class KeyedStateEntryStore implements EntryStore {

  private final ValueState<AppliedChange> live;
  private final ValueState<AppliedChange> tombstone;
  private final KeyContext context;
  private final Map<RowKey, Integer> pendingByKey = new HashMap<>();

  KeyedStateEntryStore(
      ValueState<AppliedChange> live, ValueState<AppliedChange> tombstone, KeyContext context) {
    this.live = live;
    this.tombstone = tombstone;
    this.context = context;
  }

  @Override
  public int find(ChangeEvent event) {
    Integer found = pendingByKey.get(event.key());
    return found == null ? 0 : found;
  }

  @Override
  public AppliedChange entry() throws Exception {
    AppliedChange entry = live.value();
    return entry != null ? entry : tombstone.value();
  }

  @Override
  public Object pendingKey() {
    return context.currentKey();
  }

  @Override
  public AppliedChange priorToKeep(AppliedChange prior) {
    return prior;
  }

  @Override
  public void markPending(int number, ChangeEvent event) {
    pendingByKey.put(event.key(), number);
  }

  @Override
  public AppliedChange priorOfPending(int number, PendingChanges pending) {
    return pending.prior(number);
  }

  @Override
  public AppliedChange atPending(int number, Object key, AppliedChange kept) {
    context.setCurrentKey(key);
    return kept;
  }

  @Override
  public void releasePending() {}

  @Override
  public void putLive(AppliedChange applied, AppliedChange prior) throws Exception {
    live.update(applied);
    if (prior != null && prior.deleted()) {
      tombstone.clear();
    }
  }

  @Override
  public void putDeleted(AppliedChange applied, boolean existed) throws Exception {
    if (existed) {
      live.clear();
    }
    tombstone.update(applied);
  }

  @Override
  public void pendingCleared() {
    pendingByKey.clear();
  }

  @Override
  public void put(AppliedChange value) throws Exception {
    live.update(value);
  }

  @Override
  public void putTombstone(AppliedChange value) throws Exception {
    live.clear();
    tombstone.update(value);
  }

  @Override
  public AppliedChange live() throws Exception {
    return live.value();
  }
}
