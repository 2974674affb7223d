#!/usr/bin/env bash
# Runs the PostgreSQL capture benchmark on this machine; see the README's performance section.
#   bash bench/capture.sh [--rows N] [--seconds 60s] [--rate ROWS_PER_S] [--batch N]
#                         [--parallelism N] [--checkpoint-interval 1s] [--out FILE]
#                         [--snapshot-chunk-rows N (0: Debezium's own snapshot)] [--engine-only true]
#                         [--truncate true (at the end: TRUNCATE the table, time until applied)]
#                         [--fail-halfway true (end the chunk readers' connections mid-snapshot)]
#                         [--count-reads true (rows PostgreSQL read for the snapshot; the default
#                          with --fail-halfway)]
#                         [--flink-cdc true (the peer: Flink CDC's postgres-cdc into Iceberg)]
# It configures the local PostgreSQL for logical decoding first, as the integration tests do.
# The peer is a Maven project of its own on Flink 1.20 (bench/peers/flink-cdc-postgres), built here
# when it is asked for.
set -euo pipefail
here=$(dirname "$0")
bash "$here/../integration-tests/scripts/setup-databases.sh"
shopt -s nocasematch
if [[ " $* " == *" --flink-cdc true "* ]]; then
  # shellcheck disable=SC2086
  mvn -q -B -ntp ${BENCH_MAVEN_ARGS:-} -f "$here/peers/flink-cdc-postgres/pom.xml" \
    package dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
fi
exec bash "$here/java.sh" CaptureBenchmark "$@"
