package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.commit.ChangeCommittable;
import org.apache.flink.api.common.functions.MapFunction;

/** Wraps the dedup's statistics as a committable, so they reach the committer with the files. */
public final class CommittableOfStats implements MapFunction<ChangeStats, ChangeCommittable> {

  private static final long serialVersionUID = 1L;

  @Override
  public ChangeCommittable map(ChangeStats stats) {
    return ChangeCommittable.ofStats(stats);
  }
}
