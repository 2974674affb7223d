#!/usr/bin/env bash
# The kafka-init service of docker/compose.yaml: creates the sample change topic and writes the
# sample Debezium events into it, once. Runs in the apache/kafka image (its tools are in
# /opt/kafka/bin) with this directory mounted at /samples.
#
# erp.public.suppliers.events holds one record per line as <key>|<value>: the key and the value as
# Debezium's JSON converter writes them with schemas enabled (the key is the row's primary key,
# from which the job takes the table's key), and NULL for the tombstone Debezium writes after a
# delete. The events are those of a PostgreSQL table public.suppliers of a database 'erp' captured
# by a Debezium connector named 'erp': an initial snapshot of three rows, then an insert, an update
# delivered twice, two updates of one row delivered in the wrong order, and a delete.
# `apply --source kafka` creates the Iceberg table from the first event's schema, drops the
# duplicate and the stale update by their source position (LSN), and ends with three rows:
#   1 Acme Corporation (rating 5), 2 Globex (country AT, credit limit 40000.00), 4 Umbrella Trading.
set -euo pipefail

bootstrap=${BOOTSTRAP_SERVERS:-kafka:9092}
topic=${TOPIC:-erp.public.suppliers}
events=${EVENTS_FILE:-/samples/erp.public.suppliers.events}
bin=${KAFKA_BIN:-/opt/kafka/bin}

# Three partitions: records of one key stay in one partition (the producer hashes the key), and the
# job orders each key's changes by their source position whatever the partitions.
"$bin/kafka-topics.sh" --bootstrap-server "$bootstrap" --create --if-not-exists \
  --topic "$topic" --partitions 3 --replication-factor 1

# Only into an empty topic, so that running this again does not deliver the sample twice.
records=$("$bin/kafka-get-offsets.sh" --bootstrap-server "$bootstrap" --topic "$topic" --time -1 |
  awk -F: '{ sum += $NF } END { print sum + 0 }')
if [ "$records" -gt 0 ]; then
  echo "$topic already holds $records records; not writing the sample again"
  exit 0
fi

"$bin/kafka-console-producer.sh" --bootstrap-server "$bootstrap" --topic "$topic" \
  --property parse.key=true --property 'key.separator=|' --property null.marker=NULL \
  < "$events"
echo "wrote $(wc -l < "$events") records of $events to $topic"
