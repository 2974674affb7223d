package io.icebergcdc.dedup.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.dedup.AppliedChange;

/**
 * Where the dedup keeps each key's {@link AppliedChange} (its live row or its tombstone) and finds
 * the key's place in {@link PendingChanges}: the in-memory {@link KeyIndex} ({@link
 * IndexEntryStore}) or Flink's keyed state ({@link KeyedStateEntryStore}). The operator decides
 * which, once per restore or snapshot; records go through this interface only.
 *
 * <p>A store works on the key in the operator's context, looked up by {@link #find}: the calls up
 * to the next {@code find} (or, in a flush, {@link #atPending}) concern that key.
 *
 * <p><b>Threading:</b> Flink's task thread only.
 */
interface EntryStore {

  /**
   * Looks up the key in context, of which {@code event} is a change, and returns the number of its
   * change pending since the last flush, or 0 if none.
   */
  int find(ChangeEvent event) throws Exception;

  /**
   * The entry of the key found, if it has no pending change: its live row or tombstone, or null.
   */
  AppliedChange entry() throws Exception;

  /**
   * The key, if any, that {@link PendingChanges#add} keeps for the key found (where the store finds
   * pending keys by number itself, none).
   */
  Object pendingKey() throws Exception;

  /**
   * What {@link PendingChanges#add} keeps as the key's prior, given what was known of it: only what
   * the store will not find again at the flush.
   */
  AppliedChange priorToKeep(AppliedChange prior);

  /** Records that the key found has the pending change {@code number}. */
  void markPending(int number, ChangeEvent event) throws Exception;

  /** The entry before the key's pending change {@code number}, as kept or as the store holds it. */
  AppliedChange priorOfPending(int number, PendingChanges pending);

  /**
   * In a flush: makes the key of the pending change {@code number} the one in context and returns
   * what was known of it before that change ({@code kept}, what {@link PendingChanges} kept, or the
   * store's own entry).
   */
  AppliedChange atPending(int number, Object key, AppliedChange kept) throws Exception;

  /** In a flush: the key at the pending change, which has no entry, leaves the store unchanged. */
  void releasePending() throws Exception;

  /** In a flush: the key at the pending change now has a live row, {@code applied}. */
  void putLive(AppliedChange applied, AppliedChange prior) throws Exception;

  /** In a flush: the key at the pending change is now deleted, {@code applied} its tombstone. */
  void putDeleted(AppliedChange applied, boolean existed) throws Exception;

  /** After a flush: no key has a pending change. */
  void pendingCleared();

  /** Records {@code value} as the entry of the key in the operator's context. */
  void put(AppliedChange value) throws Exception;

  /**
   * Records {@code tombstone} as the entry of the key in the operator's context, which had a live
   * row: deleted outside a flush (by a truncate).
   */
  void putTombstone(AppliedChange tombstone) throws Exception;

  /** The live entry of the key in the operator's context, or null if it has no live row. */
  AppliedChange live() throws Exception;
}
