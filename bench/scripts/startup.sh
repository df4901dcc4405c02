#!/usr/bin/env bash
# Time from launching `tapedeck serve` (JVM included) until GET /health answers 200, over N runs.
# Usage: bench/scripts/startup.sh [runs=5] [extra serve flags...]   (JAR=path: another build's tapedeck.jar)
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/scripts/competitor.sh   # COMPETITOR=N: beside N busy threads on CPU 0
runs="${1:-5}"; shift || true
jar="${JAR:-core/cli/target/tapedeck.jar}"
[ -f "$jar" ] || ./mvnw -q -B -DskipTests -pl core -am package
port=18600
times=()
for i in $(seq 1 "$runs"); do
    start=$(date +%s%N)
    java --add-opens java.base/jdk.internal.misc=ALL-UNNAMED -jar "$jar" serve --port "$port" "$@" >/dev/null 2>&1 &
    pid=$!
    until curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health" 2>/dev/null | grep -q 200; do
        sleep 0.01
    done
    end=$(date +%s%N)
    kill "$pid"; wait "$pid" 2>/dev/null || true
    times+=($(( (end - start) / 1000000 )))
done
sorted=($(printf '%s\n' "${times[@]}" | sort -n))
echo "startup to /health (ms) over $runs runs: ${times[*]}; median ${sorted[$(( runs / 2 ))]}"
