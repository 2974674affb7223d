#!/usr/bin/env bash
# Runs the PostgreSQL capture benchmark on this machine; see the README's performance section.
#   bash bench/capture.sh [--rows N] [--seconds 60s] [--rate ROWS_PER_S] [--batch N]
#                         [--parallelism N] [--checkpoint-interval 1s] [--out FILE]
# It configures the local PostgreSQL for logical decoding first, as the integration tests do.
set -euo pipefail
cd "$(dirname "$0")/.."
bash integration-tests/scripts/setup-databases.sh
mvn -q -B -ntp -DskipTests install -pl bench -am
mvn -q -B -ntp -pl bench dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
opens=$(sed -n 's:.*<flink.jvm.opens>\(.*\)</flink.jvm.opens>.*:\1:p' pom.xml)
# shellcheck disable=SC2086
exec java $opens -Xmx8g ${BENCH_JAVA_OPTS:-} -cp "bench/target/classes:$(cat bench/target/classpath.txt)" \
  io.icebergcdc.bench.CaptureBenchmark "$@"
