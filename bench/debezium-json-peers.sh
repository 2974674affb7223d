#!/usr/bin/env bash
# Debezium JSON events with their schemas applied by `apply --source file` and by Flink SQL's
# filesystem source with the debezium-json format into Iceberg's upsert table and into Paimon, each
# a JVM of its own, in turn, ROUNDS times; every table is checked against the events; see the
# README's performance section.
#   bash bench/debezium-json-peers.sh [EVENTS] [KEYS] [ROUNDS]
# The events carry their row before each update (Flink's format refuses updates without it).
set -euo pipefail
cd "$(dirname "$0")/.."
events=${1:-1000000}
keys=${2:-100000}
rounds=${3:-3}
jar=${JOB_JAR:-jobs/target/iceberg-cdc-jobs.jar}
work=target/bench-debezium-json
mkdir -p "$work"
file="$work/events-$events-$keys-full.jsonl"
if [ ! -f "$file" ]; then
  python3 bench/scripts/debezium_json_events.py "$events" "$keys" "$file.tmp" full
  mv "$file.tmp" "$file"
fi
[ -f "$jar" ] || mvn -q -B -ntp -DskipTests install -pl jobs -am
mvn -q -B -ntp -DskipTests install -pl bench -am
mvn -q -B -ntp -pl bench dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
opens=$(sed -n 's:.*<flink.jvm.opens>\(.*\)</flink.jvm.opens>.*:\1:p' pom.xml)
peer() {
  # shellcheck disable=SC2086
  java $opens -Xmx6g -cp "bench/target/classes:$(cat bench/target/classpath.txt)" \
    io.icebergcdc.bench.DebeziumJsonSqlPeer "$@"
}
# What the events leave: every key once, with the qty of its last event.
expected=$(python3 -c "
n, k = $events, $keys
last = {i % k: i for i in range(n)}
print('rows=%d qty=%d' % (len(last), sum(i % 97 for i in last.values())))")
results="$work/peers.tsv"
: > "$results"
for round in $(seq 1 "$rounds"); do
  for contender in ours iceberg paimon; do
    warehouse=$(realpath -m "$work/warehouse-$contender")
    rm -rf "$warehouse" "$work/checkpoints"
    start=$(date +%s.%N)
    if [ "$contender" = ours ]; then
      java -Xmx6g -jar "$jar" apply --source file --path "$file" --warehouse "$warehouse" \
        --table bench.customers --primary-key id --parallelism 2 --format-version 3 \
        --checkpoint-interval 2s \
        --checkpoint-dir "$work/checkpoints" > "$work/$contender.log" 2>&1
    else
      peer --sink "$contender" --warehouse "$warehouse" --file "$file" > "$work/$contender.log" 2>&1
    fi
    end=$(date +%s.%N)
    sink=$([ "$contender" = paimon ] && echo paimon || echo iceberg)
    found=$(peer --sink "$sink" --warehouse "$warehouse" --check bench.customers 2>/dev/null \
      | grep '^rows=')
    if [ "$found" != "$expected" ]; then
      echo "$contender left $found, the events leave $expected" >&2
      exit 1
    fi
    seconds=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", e - s }')
    echo "round $round: $contender $seconds s ($found)"
    printf '%s\t%s\n' "$contender" "$seconds" >> "$results"
  done
done
python3 - "$results" "$events" <<'PY'
import statistics, sys
rows = [l.split('\t') for l in open(sys.argv[1]).read().split('\n') if l]
events = int(sys.argv[2])
by = {}
for name, seconds in rows:
    by.setdefault(name, []).append(float(seconds))
ours = statistics.median(by['ours'])
names = {'ours': '`apply --source file`', 'iceberg': "Flink SQL debezium-json into Iceberg's upsert table",
         'paimon': 'Flink SQL debezium-json into Paimon'}
print('| contender | seconds (each round) | changes/s (median) | ours against it |')
print('| --- | --- | ---: | ---: |')
for name in ['ours', 'iceberg', 'paimon']:
    median = statistics.median(by[name])
    print('| %s | %s | %s | %s |' % (names[name], ' / '.join('%.1f' % s for s in by[name]),
          format(round(events / median), ','), '' if name == 'ours' else '%.2fx' % (median / ours)))
PY
