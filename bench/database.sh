#!/usr/bin/env bash
# Runs the whole-database capture benchmark on this machine; see the README's performance section.
#   bash bench/database.sh [--tables 300] [--large 3] [--large-rows 100000] [--small-rows 100]
#                          [--rounds 5] [--batch 100] [--parallelism 2]
#                          [--checkpoint-interval 2s] [--only many|one] [--out FILE]
#                          [--catalog hadoop|rest|rest-s3] [--s3-latency 0ms]
#                          [--atomic-commits true|false]
#                          [--distribution primary_key|partition] [--partition-by 'bucket(4, id)']
#                          [--delete-mode position|equality] [--idle-seconds 0]
# One capture job over a PostgreSQL schema of --tables tables, then over one table holding the same
# rows and taking the same transactions. It configures the local PostgreSQL for logical decoding
# first, as the integration tests do. With --catalog rest the tables live in Iceberg's REST catalog
# server (a process of its own over a local warehouse), with --catalog rest-s3 over S3Proxy (another
# process) through S3FileIO, each of whose store operations --s3-latency delays, as a network would; and
# --atomic-commits true commits the tables of each checkpoint in one transaction of the catalog.
set -euo pipefail
here=$(dirname "$0")
bash "$here/../integration-tests/scripts/setup-databases.sh"
exec bash "$here/java.sh" DatabaseBenchmark "$@"
