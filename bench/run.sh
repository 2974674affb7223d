#!/usr/bin/env bash
# Runs the apply benchmark on this machine; see the README's performance section.
#   bash bench/run.sh [--changes N] [--keys N] [--parallelism N] [--checkpoint-interval 2s] [--out FILE]
#   bash bench/run.sh ... --only ours-dv   (one writer after the warm-up, no reads: for profiling)
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -q -B -ntp -DskipTests install -pl bench -am
mvn -q -B -ntp -pl bench dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
opens=$(sed -n 's:.*<flink.jvm.opens>\(.*\)</flink.jvm.opens>.*:\1:p' pom.xml)
# shellcheck disable=SC2086
exec java $opens -Xmx8g ${BENCH_JAVA_OPTS:-} -cp "bench/target/classes:$(cat bench/target/classpath.txt)" \
  io.icebergcdc.bench.ApplyBenchmark "$@"
