#!/usr/bin/env bash
# Submits one `apply` job of the cluster jar to the Flink session cluster, detached, or resumes it.
# The submit-* services of docker/compose.yaml run it through the Flink image's entry point, which
# first writes FLINK_PROPERTIES into conf/config.yaml: the job takes the cluster's state backend
# and restart strategy from the configuration of the client that submits it.
#
#   usage: submit-job.sh <name> apply --source <kind> ... (the arguments of the jar's apply command)
#
# <name> names the job's places on the shared volume: the arguments must include
# --checkpoint-dir (by convention /flink-data/checkpoints/<name>), and its savepoints are looked
# for under /flink-data/savepoints/<name> (SAVEPOINT_DIR), where docker/README.md stops it to.
#
# So that running it again (another `docker compose up`, or `docker compose run --rm submit-...`)
# does no harm, it
#   1. waits for the JobManager's REST endpoint (FLINK_REST, default jobmanager:8081);
#   2. does nothing if a job that writes to the checkpoint directory is still running or scheduled;
#   3. with SAVEPOINT=<path of a savepoint or checkpoint> in its environment, submits with
#      `flink run -s <path>`; otherwise resumes from the newest completed checkpoint or savepoint of
#      this job, if there is one (the apply command's --restore-from <path>); otherwise starts the
#      job afresh (a capture job then snapshots the tables first);
#   4. submits it detached (`flink run -d`) and exits with flink's status.
set -euo pipefail
shopt -s nullglob

if [ $# -lt 2 ]; then
  echo "usage: $0 <name> apply --source <kind> ..." >&2
  exit 2
fi
name=$1
shift

rest=${FLINK_REST:-jobmanager:8081}
jar=${ICEBERG_CDC_JAR:-/opt/flink/usrlib/iceberg-cdc-cluster.jar}
savepoints=${SAVEPOINT_DIR:-/flink-data/savepoints/$name}

# The checkpoint directory the arguments give (--checkpoint-dir <dir> or --checkpoint-dir=<dir>).
checkpoints=
has_restore=false
previous=
for arg in "$@"; do
  case $previous in
    --checkpoint-dir) checkpoints=$arg ;;
  esac
  case $arg in
    --checkpoint-dir=*) checkpoints=${arg#--checkpoint-dir=} ;;
    --restore-from | --restore-from=*) has_restore=true ;;
  esac
  previous=$arg
done
if [ -z "$checkpoints" ]; then
  # Without it the job checkpoints into the cluster's execution.checkpointing.dir, shared by all
  # jobs, where neither this script nor --restore-from latest can tell this job's checkpoints.
  echo "$name: give the job a --checkpoint-dir of its own (/flink-data/checkpoints/$name)" >&2
  exit 2
fi

echo "$name: waiting for the Flink REST endpoint at $rest"
for attempt in $(seq 1 90); do
  if wget -q -O /dev/null "http://$rest/overview"; then
    break
  fi
  if [ "$attempt" -eq 90 ]; then
    echo "$name: no Flink REST endpoint at $rest after 3 minutes" >&2
    exit 1
  fi
  sleep 2
done

# Each job writes its checkpoints to <checkpoint dir>/<job id>/; a listed job with one of those
# ids is this job, still running (or restarting, or waiting for slots).
if ! jobs=$(flink list -m "$rest" 2>&1); then
  # Not knowing what runs, submitting could start a second copy of a running job.
  echo "$name: cannot list the cluster's jobs; nothing submitted: $jobs" >&2
  exit 1
fi
for dir in "$checkpoints"/*/; do
  id=$(basename "$dir")
  if grep -q " : $id : " <<<"$jobs"; then
    echo "$name: job $id is already running; nothing to submit"
    exit 0
  fi
done

run_options=(-d -m "$rest")
restore=()
if [ -n "${SAVEPOINT:-}" ]; then
  if [ "$has_restore" = true ]; then
    echo "$name: give SAVEPOINT or --restore-from, not both" >&2
    exit 2
  fi
  run_options+=(-s "$SAVEPOINT")
  echo "$name: restoring from $SAVEPOINT"
elif [ "$has_restore" = false ]; then
  completed=("$checkpoints"/*/chk-*/_metadata "$savepoints"/savepoint-*/_metadata)
  if [ ${#completed[@]} -gt 0 ]; then
    # shellcheck disable=SC2012 # our own paths (job ids, chk-<n>, savepoint-<id>): ls -t is fine
    newest=$(ls -1t "${completed[@]}" | head -n 1)
    restore=(--restore-from "$(dirname "$newest")")
    echo "$name: resuming from $(dirname "$newest")"
  else
    echo "$name: no checkpoint or savepoint under $checkpoints or $savepoints; starting afresh"
  fi
fi

command=(flink run "${run_options[@]}" "$jar" "$@" "${restore[@]}")
printf '%s: ' "$name"
printf '%q ' "${command[@]}"
printf '\n'
exec "${command[@]}"
