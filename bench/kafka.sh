#!/usr/bin/env bash
# Runs the Kafka benchmark on this machine (it starts its own local broker); see the README.
#   bash bench/kafka.sh [--changes N] [--keys N] [--parallelism N] [--checkpoint-interval 2s] [--out FILE]
#                       [--debezium-file FILE (events with schemas, see bench/scripts/debezium_json_events.py)]
#                       [--peers true] [--kafka-properties key=value,... (consumer properties of our job)]
#                       [--consumer-only true (also time a plain consumer reading the topic: the broker's limit)]
exec bash "$(dirname "$0")/java.sh" KafkaBenchmark "$@"
