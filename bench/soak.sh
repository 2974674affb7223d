#!/usr/bin/env bash
# Runs the soak of the Kafka path (it starts its own local broker); see the README.
#   bash bench/soak.sh [--commits 3000] [--changes-per-commit 20] [--keys 5000]
#       [--checkpoint-interval 1s] [--snapshot-max-age 5m] [--small-file-size 32mb] [--out FILE]
exec bash "$(dirname "$0")/java.sh" SoakBenchmark "$@"
