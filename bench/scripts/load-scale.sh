#!/usr/bin/env bash
# The load generator at scale against `tapedeck serve` on this machine (loopback), its open loop next to a bare
# Netty client's, and its non-streaming request rate next to wrk's against the same server: tapedeck serve, then a
# bare Netty server that does far less per request than either client (the clients compared, not the server). Prints
# one line per measurement and leaves the JSON reports in bench/target/load-scale/.
# Usage: bench/scripts/load-scale.sh [streams=10000] [rate=5000] [seconds=30]
#   COMPARE_JAR=other/tapedeck.jar bench/scripts/load-scale.sh ...: an A/B on one server: every load measurement runs
#   with COMPARE_JAR's client first, then with this build's, back to back (the server is always this build's).
#   PORT=18700: the server's port. COMPETITOR=1 [COMPETITOR_CPUS=0]: beside a busy process (bench/scripts/competitor.sh).
# Needs: wrk (apt-get install -y wrk) for the last measurement; skipped when missing. Open files: the server and the
# client each hold one socket per connection (10,000 streams, and more when an open loop backs up): ulimit -n 20000.
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/scripts/competitor.sh   # COMPETITOR=N: beside N busy threads on CPU 0
streams="${1:-10000}"; rate="${2:-5000}"; seconds="${3:-30}"
jar=core/cli/target/tapedeck.jar
[ -f "$jar" ] || ./mvnw -q -B -DskipTests -pl core -am package
out=bench/target/load-scale; mkdir -p "$out"
load_jars=("$jar")
# COMPARE_JAR: a build from after --warmup took a unit (20s); an older one reads "20s" as a bad number
[ -n "${COMPARE_JAR:-}" ] && load_jars=("$COMPARE_JAR" "$jar")
jvm=(java --add-opens java.base/jdk.internal.misc=ALL-UNNAMED -Xms1g -Xmx3g -jar)
java_run() { "${jvm[@]}" "$jar" "$@"; }
# load_run JAR ARGS...: the load client of JAR (backgrounded with &, $! is the JVM's own pid: exec in the subshell)
load_run() { local client="$1"; shift; exec "${jvm[@]}" "$client" "$@"; }
# the report and label of one measurement with one client (the label names the jar in an A/B)
tag() { if [ ${#load_jars[@]} -gt 1 ]; then echo "$1 [$2]"; else echo "$1"; fi; }
# started directly (not through the function) so that $! is the server's own pid
start_serve() { "${jvm[@]}" "$jar" serve "$@" & serve_pid=$!; }
port="${PORT:-18700}"
# a server with room for every stream: fixed 200 ms inter-token latency (knob model: one step every 200 ms), no
# batching limit in the way
# and KV blocks for every stream's whole context (10k x 132 tokens), so nothing is preempted
start_serve --port "$port" --latency-model knob --time-to-first-token 20ms --inter-token-latency 200ms \
    --max-num-seqs 20000 --max-num-batched-tokens 1000000 --max-waiting-queue-length 100000 \
    --kv-cache-size 200000 --socket-send-buffer 16k >"$out/serve.log" 2>&1
trap 'kill $serve_pid 2>/dev/null || true' EXIT
until curl -s -o /dev/null "http://127.0.0.1:$port/health"; do sleep 0.1; done
url="http://127.0.0.1:$port"
summary() { python3 - "$1" "$2" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["points"][0]
l = p["latency_ms"]
d = l["dispatch_lateness"]
print(f'{sys.argv[2]}: completed {p["requests"]["completed"]:,} failed {p["requests"]["failed"]:,} '
      f'peak in flight {p["requests"]["peak_in_flight"]:,} | {p["throughput"]["requests_per_s"]:,.0f} req/s '
      f'{p["throughput"]["output_tokens_per_s"]:,.0f} out tok/s | dispatch lateness p50/p90/p99/p99.9 '
      f'{d["p50"]} / {d["p90"]} / {d["p99"]} / {d["p999"]} ms | '
      f'ITL p50 {l["itl"].get("p50", "-")} p99 {l["itl"].get("p99", "-")} ms | '
      f'E2E p50 {l["e2e"]["p50"]} ms | errors {p["errors"]}')
PY
}
# cpu_waits CLIENT_PID SERVER_PID SECONDS: how long, per second, each event loop ran and waited runnable for a CPU
# (the kernel's per-thread schedstat), sampled over SECONDS: the scheduler's share of the client's lateness
cpu_waits() {
    local pids=("$1" "$2") seconds="$3" tid name run wait
    local -A ran=() waited=()
    # snap: "tid name run_ns wait_ns" for each event loop of the two processes
    snap() { for p in "${pids[@]}"; do for t in /proc/"$p"/task/*; do
        case "$(cat "$t/comm" 2>/dev/null)" in
            tapedeck-http*|tapedeck-load*) echo "${t##*/} $(cat "$t/comm") $(cut -d' ' -f1,2 "$t/schedstat")";;
        esac
    done; done; }
    while read -r tid name run wait; do ran[$tid]=$run; waited[$tid]=$wait; done < <(snap)
    sleep "$seconds"
    # a thread that ended meanwhile is left out; one that started meanwhile has no earlier sample either
    while read -r tid name run wait; do
        [ -n "${ran[$tid]:-}" ] || continue
        echo "  $name: ran $(( (run - ran[$tid]) / 1000000 / seconds )) ms/s, waited for a CPU" \
            "$(( (wait - waited[$tid]) / 1000000 / seconds )) ms/s"
    done < <(snap)
}
# 0. warm the server's JIT (not reported)
java_run load --url "$url" --model Qwen/Qwen3-8B --rate 1000 --duration 10s --prompt-tokens 32 --output-tokens 4 \
    --ignore-eos --quiet >/dev/null
for i in "${!load_jars[@]}"; do
    # 1. sustained streams: closed loop, each stream 100 tokens at 200 ms (20 s long), started over 20 s; the ramp is
    #    warm-up, then $seconds s measured
    (load_run "${load_jars[$i]}" load --url "$url" --model Qwen/Qwen3-8B --concurrency "$streams" --ramp-up 20s \
        --duration "$(( seconds + 20 ))s" --warmup 20s --prompt-tokens 32 --output-tokens 100 --ignore-eos \
        --drain-timeout 60s --quiet --report "$out/streams-$i.json" >/dev/null)
    summary "$out/streams-$i.json" "$(tag "closed loop $streams streams" "${load_jars[$i]}")"
    # 2. open-loop rate: short streams (4 tokens, 0.8 s) at $rate requests/s
    load_run "${load_jars[$i]}" load --url "$url" --model Qwen/Qwen3-8B --rate "$rate" --arrivals constant \
        --duration "${seconds}s" --warmup 5s --prompt-tokens 32 --output-tokens 4 --ignore-eos --quiet \
        --report "$out/rate-$i.json" >/dev/null &
    load_pid=$!
    sleep 10; cpu_waits "$load_pid" "$serve_pid" 10 || true
    wait "$load_pid"
    summary "$out/rate-$i.json" "$(tag "open loop $rate req/s" "${load_jars[$i]}")"
done
# 2b. the ceiling for the open loop: the same rate, the same streams, sent by the least a Netty client does
#     (dev.tapedeck.bench.BareRateClient: no plan, no records, no histograms) against the same server
bench_jar=bench/target/benchmarks.jar
[ -f "$bench_jar" ] || ./mvnw -q -B -DskipTests -pl bench -am package
java -Xms1g -Xmx3g -cp "$bench_jar" dev.tapedeck.bench.BareRateClient --url "$url" --rate "$rate" \
    --duration "$seconds" --warmup 5 --output-tokens 4 || true
# 3. non-streaming request rate, load vs wrk, 64 connections each, against a server answering at once. The server's
#    event loop is the bottleneck here, so both clients send the same request: a prompt of two token ids (no
#    tokenizing on the server). With text prompts the comparison is of requests, not clients: load's prompts are
#    distinct words (no two alike, as a benchmark's must be), which the server's tokenizer takes about 2 us longer
#    to encode than wrk's one fixed "hello there". PAIRS=3 alternated pairs (ABBA order: a client that runs later
#    meets a warmer server), then one text pair for that difference.
kill $serve_pid 2>/dev/null || true; wait $serve_pid 2>/dev/null || true
curl -s -o /dev/null "http://127.0.0.1:$port/health" && { echo "the first server is still up" >&2; exit 1; }
start_serve --port "$port" --latency-model knob --time-to-first-token 0 --inter-token-latency 0 \
    --max-num-seqs 20000 >"$out/serve-fast.log" 2>&1
until curl -s -o /dev/null "http://127.0.0.1:$port/health"; do sleep 0.1; done
ids_body='{"model":"Qwen/Qwen3-8B","prompt":[56294,30078],"max_tokens":4,"ignore_eos":true}'
text_body='{"model":"Qwen/Qwen3-8B","prompt":"hello there","max_tokens":4,"ignore_eos":true}'
wrk_script() { printf 'wrk.method = "POST"\nwrk.body = %s\nwrk.headers["Content-Type"] = "application/json"\n' \
    "'$2'" >"$out/$1.lua"; }
wrk_script post-ids "$ids_body"; wrk_script post-text "$text_body"
curl -s -o /dev/null -H 'content-type: application/json' -d "$ids_body" "$url/v1/completions"
# warm this server's JIT too (not reported): a cold server made whichever client ran first look slower
java_run load --url "$url" --model Qwen/Qwen3-8B --concurrency 64 --duration 10s --no-stream --prompt-tokens 2 \
    --output-tokens 4 --ignore-eos --prompt-format tokens --quiet >/dev/null
# load_rate JAR FORMAT: requests/s of one 15 s run (3 s warm-up) of JAR's load with prompts as FORMAT
load_rate() {
    (load_run "$1" load --url "$url" --model Qwen/Qwen3-8B --concurrency 64 --duration 15s --warmup 3s \
        --no-stream --prompt-tokens 2 --output-tokens 4 --ignore-eos --prompt-format "$2" --quiet \
        --report "$out/nostream.json" >/dev/null)
    python3 -c 'import json, sys; p = json.load(open(sys.argv[1]))["points"][0]
print(0 if p["requests"]["failed"] else round(p["throughput"]["requests_per_s"]))' "$out/nostream.json"
}
# ratio A B: A / B to three places (B of 0 counts as 1)
ratio() { python3 -c "print(f'{$1 / max($2, 1):.3f}')"; }
# wrk_rate SCRIPT: requests/s of one 15 s wrk run (0 when wrk saw errors)
wrk_rate() {
    wrk -t 1 -c 64 -d 15s -s "$out/$1.lua" "$url/v1/completions" |
        awk '/Non-2xx|Socket errors/ {bad = 1} /Requests\/sec/ {rate = $2} END {printf "%d\n", bad ? 0 : rate}'
}
# wrk_pairs TARGET: PAIRS alternated load/wrk pairs against $url, with their ratios and median
wrk_pairs() {
    for i in "${!load_jars[@]}"; do
        ratios=()
        for pair in $(seq 1 "${PAIRS:-3}"); do
            if (( pair % 2 )); then l=$(load_rate "${load_jars[$i]}" tokens); w=$(wrk_rate post-ids)
            else w=$(wrk_rate post-ids); l=$(load_rate "${load_jars[$i]}" tokens); fi
            ratios+=("$(ratio "$l" "$w")")
            echo "$(tag "load --no-stream vs wrk against $1, 64 connections, same request (token ids), pair $pair" \
                "${load_jars[$i]}"): load $l req/s, wrk $w req/s: ${ratios[-1]}x"
        done
        echo "$(tag "load --no-stream vs wrk against $1, same request" "${load_jars[$i]}"): median" \
            "$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')x"
    done
}
if command -v wrk >/dev/null; then
    wrk_pairs "tapedeck serve"
    l=$(load_rate "$jar" text); w=$(wrk_rate post-text)
    echo "different requests (load: distinct words, wrk: one fixed text): load $l req/s, wrk $w req/s:" \
        "$(ratio "$l" "$w")x"
    # 3b. the same pairs against a server that does far less per request than either client
    #     (dev.tapedeck.bench.BareJsonServer: tapedeck's answer bytes, no parsing beyond HTTP): here the client is
    #     the side that runs out of CPU first, so the ratio compares the clients, not tapedeck's event loop
    kill $serve_pid 2>/dev/null || true; wait $serve_pid 2>/dev/null || true
    java -cp "$bench_jar" dev.tapedeck.bench.BareJsonServer "$port" >"$out/bare-json.log" 2>&1 & serve_pid=$!
    until curl -s -o /dev/null -d '{}' "$url/v1/completions"; do sleep 0.1; done
    java_run load --url "$url" --model Qwen/Qwen3-8B --concurrency 64 --duration 5s --no-stream --prompt-tokens 2 \
        --output-tokens 4 --ignore-eos --prompt-format tokens --quiet >/dev/null
    wrk_pairs "a bare Netty server"
else
    for i in "${!load_jars[@]}"; do
        echo "$(tag "load --no-stream, 64 connections, token ids" "${load_jars[$i]}"):" \
            "$(load_rate "${load_jars[$i]}" tokens) req/s (wrk not installed: no comparison)"
    done
fi
