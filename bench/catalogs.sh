#!/usr/bin/env bash
# Runs the catalog benchmark: the apply job on a local Hadoop warehouse and on a REST catalog with
# its tables on S3 (both servers started by the benchmark, on this machine); see the README.
#   bash bench/catalogs.sh [--quick] [--changes N] [--keys N] [--pairs N] [--parallelism N]
#                          [--checkpoint-interval 2s] [--out FILE]
exec bash "$(dirname "$0")/java.sh" CatalogBenchmark "$@"
