#!/usr/bin/env bash
# Times `apply --source file` on a file of Debezium JSON events with their schemas; see the README.
#   bash bench/debezium-json-file.sh [EVENTS] [KEYS]
# Writes the events once to target/bench-debezium-json/events-EVENTS-KEYS.jsonl (about 3.3 KB an
# event), then applies them to a fresh Hadoop warehouse at parallelism 2 in a JVM of its own and
# prints the wall time and rate. JOB_JAR names the job jar (default: this checkout's, built if
# missing), so that two builds can be timed in turn.
set -euo pipefail
cd "$(dirname "$0")/.."
events=${1:-1000000}
keys=${2:-100000}
jar=${JOB_JAR:-jobs/target/iceberg-cdc-jobs.jar}
work=target/bench-debezium-json
mkdir -p "$work"
file="$work/events-$events-$keys.jsonl"
if [ ! -f "$file" ]; then
  python3 bench/scripts/debezium_json_events.py "$events" "$keys" "$file.tmp"
  mv "$file.tmp" "$file"
fi
[ -f "$jar" ] || mvn -q -B -ntp -DskipTests install -pl jobs -am
rm -rf "$work/warehouse" "$work/checkpoints"
start=$(date +%s.%N)
java -Xmx6g -jar "$jar" apply --source file --path "$file" --warehouse "$work/warehouse" \
  --table bench.customers --primary-key id --parallelism 2 --format-version 3 \
  --checkpoint-dir "$work/checkpoints" > "$work/apply.log" 2>&1
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" -v n="$events" \
  'BEGIN { printf "%d events in %.1f s (JVM start included): %.0f changes/s\n", n, e - s, n / (e - s) }'
