#!/bin/sh
# Starts the worker (worker/main.ts) with its memory settings, as `npm run worker`, `npm start`, compose and the
# benchmark do. They must be in place when the process starts, which the worker itself cannot do:
# - MALLOC_ARENA_MAX: glibc's malloc arenas (worker/tuning.ts, workerMallocArenas); a value already set wins.
# - V8's heap flags of the main thread (worker/tuning.ts, workerV8Flags): the young generation, and the old-space
#   limit SKILLFLOW_WORKER_HEAP_MB (lib/config.ts, defaultWorkerHeapMb; 0: V8's own). The worker gives its workflow
#   thread the same flags itself, and warns at start-up when its main thread's heap does not match the setting (a
#   value set in .env only, which this script does not read).
# exec: the worker is this process (same PID, signals reach it). NODE (set by npm, npm start and the benchmark): the
# node binary; else node on PATH. Arguments to this script are node's, before the entry point (e.g. --cpu-prof).
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
heap_mb="${SKILLFLOW_WORKER_HEAP_MB:-512}"
# Not a whole number: the default here, and the worker's configuration check refuses the value with its fix.
case "$heap_mb" in '' | *[!0-9]*) heap_mb=512 ;; esac
exec "${NODE:-node}" --max-semi-space-size=4 --max-old-space-size="$heap_mb" "$@" --import tsx "$(dirname "$0")/../worker/main.ts"
