#!/usr/bin/env bash
# Builds the bench module and runs one of its main classes with Flink's JVM flags:
#   bash bench/java.sh <ClassName> [arguments]
# BENCH_JAVA_OPTS adds JVM options (-Dbench.sink.<option>=<value> sets one of our sink's options
# in the jobs of ours, for experiments); BENCH_MAVEN_ARGS adds Maven options (for instance
# -Dmaven.repo.local=DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
main=$1
shift
# shellcheck disable=SC2086
mvn -q -B -ntp ${BENCH_MAVEN_ARGS:-} -DskipTests install -pl bench -am
# shellcheck disable=SC2086
mvn -q -B -ntp ${BENCH_MAVEN_ARGS:-} -pl bench dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
opens=$(sed -n 's:.*<flink.jvm.opens>\(.*\)</flink.jvm.opens>.*:\1:p' pom.xml)
# shellcheck disable=SC2086
exec java $opens -Xmx8g ${BENCH_JAVA_OPTS:-} -cp "bench/target/classes:$(cat bench/target/classpath.txt)" \
  "io.icebergcdc.bench.$main" "$@"
