#!/usr/bin/env bash
# Soak: one serve process under mixed load for a long time, with hostile clients beside it, and Netty's paranoid leak
# detector on. Beside a steady load (streaming and not, chat and completions) three clients run for the whole soak:
# one sends bad requests (malformed JSON, JSON nested 2,000 deep, 1,100-digit numbers, bad percent-encoding, wrong
# methods, unknown routes, oversized bodies), one starts streams and hangs up after 50-300 ms, one opens idle
# connections and half-sent heads. Every 10 s the server's RSS, open fds and threads are sampled (samples.csv).
# At the end: the samples' first, last and peak values, the leak reports in the server's log, 5xx answers, and what
# the load report counted. Exit 1 on a leak report, a 5xx, or fds/threads that grew by more than 10% from the first
# sample after the warm-up minute to the last one. Reported, not gating.
# Usage: bench/scripts/soak.sh [minutes=30]
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/scripts/competitor.sh   # COMPETITOR=N: beside N busy threads on CPU 0
minutes="${1:-30}"
jar=core/cli/target/tapedeck.jar
[ -f "$jar" ] || ./mvnw -q -B -DskipTests -pl core/cli -am package
out=bench/target/soak; rm -rf "$out"; mkdir -p "$out"
cp "$jar" "$out/tapedeck.jar"; jar="$out/tapedeck.jar" # a rebuild during the soak does not touch the running jar
port="${PORT:-18730}"
url="http://127.0.0.1:$port"
java --add-opens java.base/jdk.internal.misc=ALL-UNNAMED -Dio.netty.leakDetection.level=paranoid \
    -Xmx512m -jar "$jar" serve --port "$port" --max-model-len 16384 --time-to-first-token 40ms \
    --inter-token-latency 15ms --latency-model knob --http-read-timeout 5s --max-request-body-size 1m \
    >"$out/serve.log" 2>&1 &
serve_pid=$!
pids=()
cleanup() {
    kill "${pids[@]}" ${competitor_pid:-} 2>/dev/null || true; kill "$serve_pid" 2>/dev/null || true
    wait "${pids[@]}" "$serve_pid" 2>/dev/null || true
}
trap cleanup EXIT
until curl -s -o /dev/null "$url/health"; do sleep 0.1; done
end=$(( $(date +%s) + minutes * 60 ))

sample() {
    echo "t_s,rss_kb,fds,threads" > "$out/samples.csv"
    local start; start=$(date +%s)
    while [ "$(date +%s)" -lt "$end" ] && kill -0 "$serve_pid" 2>/dev/null; do
        echo "$(( $(date +%s) - start )),$(awk '/VmRSS/{print $2}' /proc/$serve_pid/status),$(ls /proc/$serve_pid/fd | wc -l),$(awk '/Threads/{print $2}' /proc/$serve_pid/status)" >> "$out/samples.csv"
        sleep 10
    done
}
sample & pids+=($!)

# the steady load: 32 streams in a closed loop, half of them chat, for the whole soak
java --add-opens java.base/jdk.internal.misc=ALL-UNNAMED -jar "$jar" load --url "$url" --concurrency 24 \
    --duration "${minutes}m" --prompt-tokens 200 --output-tokens 64 --quiet --report "$out/load-completions.json" \
    --max-failure-rate 1 >"$out/load-completions.log" 2>&1 & pids+=($!)
java --add-opens java.base/jdk.internal.misc=ALL-UNNAMED -jar "$jar" load --url "$url" --concurrency 8 \
    --endpoint chat --duration "${minutes}m" --prompt-tokens 100 --output-tokens 32 --quiet \
    --report "$out/load-chat.json" --max-failure-rate 1 >"$out/load-chat.log" 2>&1 & pids+=($!)

# the hostile clients, in Python (standard library only); each counts the statuses it got
python3 - "$port" "$end" "$out" <<'PY' & pids+=($!)
import json, random, socket, sys, time
port, end, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rnd = random.Random(42)
statuses, hangups, idles = {}, 0, 0
def raw(data, read=True, timeout=10):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(data)
        if not read:
            return s
        head = s.recv(65536).split(b"\r\n", 1)[0].decode("latin-1")
        code = head.split(" ")[1] if head.startswith("HTTP/") else "none"
        statuses[code] = statuses.get(code, 0) + 1
    except OSError:
        statuses["error"] = statuses.get("error", 0) + 1
    finally:
        if read:
            s.close()
def post(path, body, extra=b""):
    raw(b"POST " + path + b" HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n" + extra +
        b"content-length: " + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body)
bad = [
    lambda: post(b"/v1/completions", b"{\"prompt\": "),
    lambda: post(b"/v1/completions", b"[" * 2000 + b"]" * 2000),
    lambda: post(b"/v1/completions", b"{\"prompt\":\"x\",\"max_tokens\":" + b"9" * 1100 + b"}"),
    lambda: post(b"/v1/chat/completions", b"{\"messages\":\"nope\"}"),
    lambda: post(b"/v1/completions", b"{\"prompt\":\"x\",\"max_tokens\":-1}"),
    lambda: post(b"/v1/completions", b"{\"prompt\":\"x\"}{\"prompt\":\"y\"}"),
    lambda: raw(b"GET /%zz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"),
    lambda: raw(b"DELETE /v1/completions HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"),
    lambda: raw(b"GET /no/such/route HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"),
    lambda: post(b"/v1/completions", b"{\"prompt\":\"" + b"a" * 1_200_000 + b"\"}"),
    lambda: raw(b"GARBAGE\r\n\r\n"),
]
streams = json.dumps({"model": "Qwen/Qwen3-8B", "prompt": "soak " * 50, "max_tokens": 400, "stream": True}).encode()
held = []
while time.time() < end:
    rnd.choice(bad)()
    try:  # a stream the client hangs up on
        s = raw(b"POST /v1/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: " +
                str(len(streams)).encode() + b"\r\n\r\n" + streams, read=False)
        time.sleep(rnd.uniform(0.05, 0.3))
        s.close()
        hangups += 1
    except OSError:
        statuses["error"] = statuses.get("error", 0) + 1
    if rnd.random() < 0.2:  # an idle connection, or half a head: the server's timeouts close them
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            if rnd.random() < 0.5:
                s.sendall(b"POST /v1/completions HTTP/1.1\r\nhost: x\r\n")
            held.append(s)
            idles += 1
        except OSError:
            statuses["error"] = statuses.get("error", 0) + 1
    while len(held) > 50:
        held.pop(0).close()
json.dump({"statuses": statuses, "hangups": hangups, "idle_or_half_sent": idles}, open(out + "/hostile.json", "w"))
PY

wait "${pids[@]:1}" || true
health=$(curl -s -o /dev/null -w '%{http_code}' "$url/health" || true)
kill "$serve_pid"; wait "$serve_pid" 2>/dev/null || true
python3 - "$out" "$health" <<'PY'
import csv, json, sys
out, health = sys.argv[1], sys.argv[2]
rows = [r for r in csv.DictReader(open(out + "/samples.csv"))]
after = [r for r in rows if int(r["t_s"]) >= 60] or rows
def figs(key):
    v = [int(r[key]) for r in after]
    return v[0], v[-1], max(v)
log = open(out + "/serve.log", errors="replace").read()
leaks = log.count("LEAK:")
hostile = json.load(open(out + "/hostile.json"))
five = sum(n for code, n in hostile["statuses"].items() if code.startswith("5") and code != "503")
print("soak: %d samples over %d s (first sample after 60 s compared with the last)" % (len(rows), int(rows[-1]["t_s"])))
for key, unit in (("rss_kb", "kB"), ("fds", ""), ("threads", "")):
    first, last, peak = figs(key)
    print("  %-8s first %s, last %s, peak %s %s" % (key, first, last, peak, unit))
for name in ("completions", "chat"):
    p = json.load(open("%s/load-%s.json" % (out, name)))["points"][0]
    print("  load %-11s completed %d, failed %d, errors %s, TTFT p99 %.1f ms" % (name, p["requests"]["completed"],
        p["requests"]["failed"], json.dumps(p["errors"]), p["latency_ms"]["ttft"]["p99"]))
print("  hostile: statuses %s, %d hang-ups, %d idle or half-sent connections" % (json.dumps(hostile["statuses"]),
    hostile["hangups"], hostile["idle_or_half_sent"]))
print("  leak reports: %d; 5xx other than 503: %d; /health at the end: %s" % (leaks, five, health))
fd0, fd1, _ = figs("fds"); th0, th1, _ = figs("threads")
bad = leaks > 0 or five > 0 or health != "200" or fd1 > fd0 * 1.1 + 5 or th1 > th0 * 1.1 + 2
sys.exit(1 if bad else 0)
PY
