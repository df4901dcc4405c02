#!/usr/bin/env bash
# How fast `tapedeck simulate` runs the bundled Mooncake conversation trace (12,031 requests, an hour of arrivals)
# through one engine in virtual time: simulated seconds per wall second, best of N runs, on one core
# (taskset -c 0 when available). Reported, not gating; the goal is >= 1,000 (the hour in under 3.6 s).
# Usage: bench/scripts/simulate-speed.sh [runs=3] [extra simulate flags...]
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/scripts/competitor.sh   # COMPETITOR=N: beside N busy threads on CPU 0
runs="${1:-3}"; shift || true
jar=core/cli/target/tapedeck.jar
[ -f "$jar" ] || ./mvnw -q -B -DskipTests -pl core/cli -am package
trace=traces/data/workloads/mooncake_fast25/conversation_trace.jsonl
pin=(); command -v taskset >/dev/null 2>&1 && pin=(taskset -c 0)
for i in $(seq 1 "$runs"); do
    "${pin[@]}" java --add-opens java.base/jdk.internal.misc=ALL-UNNAMED -jar "$jar" simulate --workload "$trace" \
        --max-model-len 131072 "$@" | grep -E '^simulated'
done
