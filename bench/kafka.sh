#!/usr/bin/env bash
# Runs the Kafka benchmark on this machine (it starts its own local broker); see the README.
#   bash bench/kafka.sh [--changes N] [--keys N] [--parallelism N] [--checkpoint-interval 2s] [--out FILE]
exec bash "$(dirname "$0")/java.sh" KafkaBenchmark "$@"
