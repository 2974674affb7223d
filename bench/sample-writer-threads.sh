#!/usr/bin/env bash
# Where the writer subtasks' task threads of a benchmark spend their time, by thread dumps:
#   bash bench/sample-writer-threads.sh OUT FROM TO COMMAND...
# runs COMMAND (a benchmark whose JVM runs the job: it must exec java, as bench/database.sh does,
# or be java itself), writes its output to OUT.log, and from the first output line matching FROM
# to the first matching TO takes a jstack dump of it every half second (each dump takes a few
# tenths of a second more), writing one line per writer task thread per dump to OUT.samples and
# the counts to OUT.counts. A writer task thread is one whose name starts with "dedup by source
# sequence, write Parquet files and" (of several tables or of one); its sample counts as the first
# of these that its stack holds:
#   idle                       waiting in the task's mailbox (TaskMailboxImpl.take): no input, or
#                              no room for output (back-pressure), or a barrier's alignment
#   waiting for reads ahead    the tables of a checkpoint read on other threads (TableThreads,
#                              from finishReading)
#   waiting for files closed   the data and delete files of a checkpoint's tables, or of one
#                              table's partitions, closed (on object storage, uploaded) on other
#                              threads (TableThreads, from InFlight or DeltaFiles.closeOpenFiles)
#   compaction reading         compaction reading its table itself (WriterCompaction.compact,
#                              then TableRefresh.refresh or LiveFiles.of)
#   delete reading             a deleted row's file looked up in the table as read now
#                              (WriterCompaction.leftTheTable, then a refresh or LiveFiles.of)
#   other table reading        any other TableRefresh.refresh or LiveFiles.of
#   opening files              a data file opened (the file writer factory's newDataWriter)
#   closing files              a data file closed on the task thread (Iceberg's DataWriter.close;
#                              on object storage, its upload)
#   other work                 anything else
# For example, the changes of bench/database.sh:
#   bash bench/sample-writer-threads.sh target/writers 'changes written' 'changes held' \
#       bash bench/database.sh --only many --catalog rest-s3 --s3-latency 20ms
set -euo pipefail
if [ $# -lt 4 ]; then
  echo "usage: $0 OUT FROM TO COMMAND..." >&2
  exit 2
fi
out=$1 from=$2 to=$3
shift 3
mkdir -p "$(dirname "$out")"
: >"$out.samples"
"$@" >"$out.log" 2>&1 &
pid=$!
until grep -q -- "$from" "$out.log"; do
  kill -0 "$pid" 2>/dev/null || { echo "$* ended before '$from'" >&2; exit 1; }
  sleep 0.2
done
until grep -q -- "$to" "$out.log"; do
  kill -0 "$pid" 2>/dev/null || break
  { jstack "$pid" 2>/dev/null || true; } | awk '
    function report() { if (writer) print (category == "" ? "other work" : category); writer = 0 }
    /^"/ { report(); writer = index($0, "\"dedup by source sequence, write Parquet files and") == 1; category = ""; reads = 0; waits = 0; next }
    !writer || category != "" { next }
    /TaskMailboxImpl\.take/ { category = "idle"; next }
    waits && /TableThreads\$InFlight\.|DeltaFiles\.closeOpenFiles/ { category = "waiting for files closed"; next }
    waits && /finishReading/ { category = "waiting for reads ahead"; next }
    /TableThreads\.(await|forEach)\(/ { waits = 1; next }
    /TableRefresh\.refresh|LiveFiles\.of/ { reads = 1; next }
    !reads && /FileWriterFactory\.newDataWriter/ { category = "opening files"; next }
    !reads && /iceberg\.io\.DataWriter\.close/ { category = "closing files"; next }
    reads && /WriterCompaction\.compact\(/ { category = "compaction reading"; next }
    reads && /WriterCompaction\.leftTheTable/ { category = "delete reading"; next }
    /^$/ { if (reads) category = "other table reading"; report() }
    END { report() }
  ' >>"$out.samples"
  sleep 0.5
done
wait "$pid"
sort "$out.samples" | uniq -c | sort -rn | tee "$out.counts"
