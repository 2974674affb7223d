#!/usr/bin/env bash
# Runs the Kafka benchmark on this machine (it starts its own local broker); see the README.
#   bash bench/kafka.sh [--changes N] [--keys N] [--parallelism N] [--checkpoint-interval 2s] [--out FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -q -B -ntp -DskipTests install -pl bench -am
mvn -q -B -ntp -pl bench dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
opens=$(sed -n 's:.*<flink.jvm.opens>\(.*\)</flink.jvm.opens>.*:\1:p' pom.xml)
# shellcheck disable=SC2086
exec java $opens -Xmx8g ${BENCH_JAVA_OPTS:-} -cp "bench/target/classes:$(cat bench/target/classpath.txt)" \
  io.icebergcdc.bench.KafkaBenchmark "$@"
