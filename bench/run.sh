#!/usr/bin/env bash
# Runs the apply benchmark on this machine; see the README's performance section.
#   bash bench/run.sh [--changes N] [--keys N] [--parallelism N] [--checkpoint-interval 2s] [--out FILE]
#   bash bench/run.sh ... --only ours-dv   (one writer after the warm-up, no reads: for profiling)
exec bash "$(dirname "$0")/java.sh" ApplyBenchmark "$@"
