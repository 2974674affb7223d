#!/usr/bin/env bash
# Runs the apply benchmark on this machine; see the README's performance section.
#   bash bench/run.sh [--changes N] [--keys N] [--parallelism N] [--checkpoint-interval 2s] [--out FILE]
#   bash bench/run.sh ... --only ours-dv   (one writer after the warm-up, no reads: for profiling)
#     writers: ours-position, ours-dv, ours-equality, iceberg-upsert, iceberg-append, paimon, and
#     ours-dv-disordered (10% out of order, 2% twice; prints its table's read time)
exec bash "$(dirname "$0")/java.sh" ApplyBenchmark "$@"
