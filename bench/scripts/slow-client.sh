#!/usr/bin/env bash
# One heavy client against everyone else: the token rate and ITL of 64 ordinary streams, first alone, then while one
# client posts 0.34 MB chat requests back to back (parsing, templating and tokenizing them is the server's heaviest
# admission work; large bodies are prepared off the event loop that streams the tokens). Prints both runs and the
# ratio of their output token rates; the goal is >= 0.9. Reported, not gating.
# Usage: bench/scripts/slow-client.sh [seconds=20]
#   SERVE_JAR=other/tapedeck.jar bench/scripts/slow-client.sh: the same measurement against another build's server.
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/scripts/competitor.sh   # COMPETITOR=N: beside N busy threads on CPU 0
seconds="${1:-20}"
jar=core/cli/target/tapedeck.jar
[ -f "$jar" ] || ./mvnw -q -B -DskipTests -pl core/cli -am package
serve_jar="${SERVE_JAR:-$jar}"
out=bench/target/slow-client; mkdir -p "$out"
port="${PORT:-18710}"
jvm=(java --add-opens java.base/jdk.internal.misc=ALL-UNNAMED -jar)
# a steady 20 ms per token for every stream (knob model), room for every request
"${jvm[@]}" "$serve_jar" serve --port "$port" --latency-model knob --time-to-first-token 20ms \
    --inter-token-latency 20ms --max-request-body-size 4m --max-model-len 200000 --kv-cache-size 100000 \
    >"$out/serve.log" 2>&1 &
serve_pid=$!
heavy_pid=
trap 'kill $serve_pid $heavy_pid 2>/dev/null || true' EXIT
until curl -s -o /dev/null "http://127.0.0.1:$port/health"; do sleep 0.1; done
url="http://127.0.0.1:$port"
run_load() { "${jvm[@]}" "$jar" load --url "$url" --concurrency 64 --duration "${seconds}s" --prompt-tokens 128 \
    --output-tokens 200 --quiet --report "$out/$1.json" >/dev/null 2>&1 || true; }
summary() { python3 - "$out/$1.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["points"][0]
print("%.1f %.2f %.2f" % (p["throughput"]["output_tokens_per_s"], p["latency_ms"]["itl"]["p50"],
    p["latency_ms"]["itl"]["p99"]))
PY
}
# the body: one user message of about 340,000 characters of seeded random words (text a tokenizer cannot shortcut)
python3 -c 'import json, random; r = random.Random(7); words = " ".join("".join(r.choice("abcdefghijklmnopqrstuvwxyz")
    for _ in range(r.randint(2, 9))) for _ in range(57000)); print(json.dumps({"model": "Qwen/Qwen3-8B",
    "max_tokens": 1, "messages": [{"role": "user", "content": words[:340000]}]}))' > "$out/heavy-body.json"
run_load quiet
python3 - "$url" "$out/heavy-body.json" <<'PY' &
import signal, sys, urllib.request
url, body = sys.argv[1] + "/v1/chat/completions", open(sys.argv[2], "rb").read()
done = [0, 0]
def report(*_):
    print("heavy client: %d requests answered 200, %d failed" % tuple(done), flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, report)
while True:
    try:
        urllib.request.urlopen(urllib.request.Request(url, body, {"content-type": "application/json"})).read()
        done[0] += 1
    except Exception:
        done[1] += 1
PY
heavy_pid=$!
run_load heavy
kill "$heavy_pid"; wait "$heavy_pid" 2>/dev/null || true; heavy_pid=
read -r quiet_rate quiet_p50 quiet_p99 <<<"$(summary quiet)"
read -r heavy_rate heavy_p50 heavy_p99 <<<"$(summary heavy)"
echo "alone:          $quiet_rate output tok/s, ITL p50 $quiet_p50 ms, p99 $quiet_p99 ms"
echo "beside a heavy: $heavy_rate output tok/s, ITL p50 $heavy_p50 ms, p99 $heavy_p99 ms"
python3 -c "print('token rate ratio (beside / alone): %.3f (goal >= 0.9)' % ($heavy_rate / $quiet_rate))"
