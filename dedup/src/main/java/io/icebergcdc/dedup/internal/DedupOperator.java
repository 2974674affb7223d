package io.icebergcdc.dedup.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.dedup.AmbiguousChangePolicy;
import java.time.Duration;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * Orders and deduplicates the changes of each key (see {@link SequencedChangeOperator}) and emits,
 * once per checkpoint, the net change of every key that changed, for writers that keep no state.
 *
 * <p><b>Place in the topology:</b> directly after the source (or parser), on a stream keyed by
 * primary key; its output goes to the writers, its {@link #STATS} side output to the committer and
 * its {@link #DEAD_LETTERS} side output to the dead-letter sink, if any.
 */
public final class DedupOperator extends SequencedChangeOperator<ChangeEvent> {

  private static final long serialVersionUID = 1L;

  public DedupOperator(
      ChangeSchema schema, Duration tombstoneTtl, AmbiguousChangePolicy ambiguousChangePolicy) {
    super(schema, tombstoneTtl, ambiguousChangePolicy);
  }

  @Override
  protected Location apply(ChangeEvent net, AppliedChange prior) {
    if (!net.missingColumns().isEmpty()) {
      throw unfillable(
          net,
          "the key's current row is known only to the position-delete writer (the table is"
              + " written with equality deletes)");
    }
    output.collect(new StreamRecord<>(net));
    return null;
  }

  @Override
  protected void checkpointed(ChangeStats stats) {
    if (!stats.isEmpty()) {
      output.collect(STATS, new StreamRecord<>(stats));
    }
  }
}
