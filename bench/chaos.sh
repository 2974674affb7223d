#!/usr/bin/env bash
# Runs the chaos run: one Kafka apply job on a REST catalog through injected failures of mixed
# kinds (it starts its own broker and catalog server); see the README.
#   bash bench/chaos.sh [--failures 100] [--changes-per-failure 2000] [--keys 5000] [--seed 7]
#       [--checkpoint-interval 1s] [--out FILE]
exec bash "$(dirname "$0")/java.sh" ChaosBenchmark "$@"
