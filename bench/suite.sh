#!/usr/bin/env bash
# Runs the benchmark suite on this machine; see the README's performance section. Each measured
# writer runs in a JVM of its own, with the JVM options of bench/java.sh (BENCH_JAVA_OPTS too).
#   bash bench/suite.sh            (5M upserts over 500k keys; 15 to 35 minutes on 2 cores)
#   bash bench/suite.sh --quick    (200k over 20k, for a smoke run of a few minutes)
#   bash bench/suite.sh [--changes N --keys N] [--workloads upserts,disordered,inserts,
#                       partitioned,debezium-json] [--scaling false] [--parallelism 2]
#                       [--checkpoint-interval 2s] [--out bench/results/suite-5m-500k.md]
#   bash bench/suite.sh --catalogs [--quick]   (the suite, then bench/catalogs.sh: the apply job
#                       on a local warehouse and on a REST catalog with S3, side by side)
# Writes the markdown file and, beside it, a PNG chart of the same name.
set -euo pipefail
here=$(dirname "$0")
args=()
catalogs=()
run_catalogs=false
for arg in "$@"; do
  case $arg in
    --catalogs) run_catalogs=true ;;
    --quick) args+=("$arg"); catalogs+=("$arg") ;;
    *) args+=("$arg") ;;
  esac
done
BENCH_JAVA_OPTS="-Djava.awt.headless=true ${BENCH_JAVA_OPTS:-}" \
  bash "$here/java.sh" BenchSuite "${args[@]}"
if $run_catalogs; then
  bash "$here/catalogs.sh" "${catalogs[@]}"
fi
