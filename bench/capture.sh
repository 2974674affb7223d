#!/usr/bin/env bash
# Runs the PostgreSQL capture benchmark on this machine; see the README's performance section.
#   bash bench/capture.sh [--rows N] [--seconds 60s] [--rate ROWS_PER_S] [--batch N]
#                         [--parallelism N] [--checkpoint-interval 1s] [--out FILE]
#                         [--snapshot-chunk-rows N (0: Debezium's own snapshot)] [--engine-only true]
# It configures the local PostgreSQL for logical decoding first, as the integration tests do.
set -euo pipefail
bash "$(dirname "$0")/../integration-tests/scripts/setup-databases.sh"
exec bash "$(dirname "$0")/java.sh" CaptureBenchmark "$@"
