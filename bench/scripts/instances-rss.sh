#!/usr/bin/env bash
# Memory of `tapedeck serve --instances N`: RSS after start-up and after REQUESTS short completions spread over the
# instances (8 at a time), the live heap after a full GC, and the cost of each extra instance against one instance
# measured in the same run.
# Usage: bench/scripts/instances-rss.sh [instances=100] [requests=300] [extra serve flags...]
# Environment: TAPEDECK_JAVA_OPTS (JVM flags for the server, as ./tapedeck takes them); JAR (another build's
# tapedeck.jar, e.g. an older commit's for a before/after).
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/scripts/competitor.sh   # COMPETITOR=N: beside N busy threads on CPU 0
instances="${1:-100}"; shift || true
requests="${1:-300}"; shift || true
jar="${JAR:-core/cli/target/tapedeck.jar}"
[ -f "$jar" ] || ./mvnw -q -B -DskipTests -pl core/cli -am package

rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }

measure() {
    local count="$1"; shift
    local port=18700
    local log
    log=$(mktemp)
    # shellcheck disable=SC2086
    java --add-opens java.base/jdk.internal.misc=ALL-UNNAMED ${TAPEDECK_JAVA_OPTS:-} -jar "$jar" serve \
        --port "$port" --instances "$count" "$@" >"$log" 2>&1 &
    local pid=$!
    local last=$((port + count - 1))
    until curl -s -o /dev/null "http://127.0.0.1:$last/health" 2>/dev/null; do
        kill -0 "$pid" 2>/dev/null || { cat "$log"; exit 1; }
        sleep 0.1
    done
    sleep 1
    local started
    started=$(rss_kb "$pid")
    python3 - "$port" "$count" "$requests" <<'EOF'
import json, sys, urllib.request
from concurrent.futures import ThreadPoolExecutor
port, count, requests = (int(a) for a in sys.argv[1:4])
body = json.dumps({"model": "Qwen/Qwen3-8B", "prompt": "hello there", "max_tokens": 16}).encode()
def one(i):
    req = urllib.request.Request(f"http://127.0.0.1:{port + i % count}/v1/completions", body,
                                 {"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return r.status
statuses = list(ThreadPoolExecutor(8).map(one, range(requests)))
failed = sum(1 for s in statuses if s != 200)
if failed:
    sys.exit(f"{failed} of {requests} requests failed")
EOF
    sleep 1
    local served
    served=$(rss_kb "$pid")
    local live
    live=$(jcmd "$pid" GC.class_histogram | awk '/^Total/ {printf "%d", $3 / 1024}')
    local threads
    threads=$(awk '/^Threads/ {print $2}' "/proc/$pid/status")
    kill "$pid"; wait "$pid" 2>/dev/null || true
    rm -f "$log"
    echo "$count $started $served $live $threads"
}

read -r one_n one_start one_served one_live one_threads < <(measure 1 "$@")
read -r many_n many_start many_served many_live many_threads < <(measure "$instances" "$@")
printf '| instances | RSS after start-up | RSS after %d requests | live heap | threads |\n' "$requests"
printf '|---:|---:|---:|---:|---:|\n'
for row in "$one_n $one_start $one_served $one_live $one_threads" \
           "$many_n $many_start $many_served $many_live $many_threads"; do
    read -r n s v l t <<<"$row"
    printf '| %d | %d MB | %d MB | %d MB | %d |\n' "$n" $((s / 1024)) $((v / 1024)) $((l / 1024)) "$t"
done
if [ "$instances" -gt 1 ]; then
    awk -v a="$one_served" -v b="$many_served" -v la="$one_live" -v lb="$many_live" -v n="$instances" 'BEGIN {
        printf "each extra instance: %.2f MB RSS, %.2f MB live heap\n", (b - a) / 1024 / (n - 1), (lb - la) / 1024 / (n - 1) }'
fi
