#!/usr/bin/env bash
# What P/D disaggregation adds to TTFT: the same requests (a 2,000-token prompt, 16 output tokens, one at a time)
# against one `tapedeck serve`, then through a prefill/decode pair (`tapedeck load --prefill-url --decode-url`) on
# each data plane. Prints TTFT p50 and the decode's mean KV transfer time per setup; the single server, measured in the
# same run, is the baseline. JSON reports in bench/target/pd-ttft/.
# Usage: bench/scripts/pd-ttft.sh [requests=50] [planes="noop tcp ucx"]
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/scripts/competitor.sh   # COMPETITOR=N: beside N busy threads on CPU 0
requests="${1:-50}"; planes="${2:-noop tcp ucx}"
jar=core/cli/target/tapedeck.jar
[ -f "$jar" ] || ./mvnw -q -B -DskipTests -pl core/cli -am package
out=bench/target/pd-ttft; mkdir -p "$out"
export UCX_NET_DEVICES=lo UCX_WARN_UNUSED_ENV_VARS=n
jvm=(java --add-opens java.base/jdk.internal.misc=ALL-UNNAMED --enable-native-access=ALL-UNNAMED -jar "$jar")
pids=()
# waits for its own processes only: a bare wait would also wait for the CPU competitor (COMPETITOR=N)
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    [ ${#pids[@]} -eq 0 ] || wait "${pids[@]}" 2>/dev/null || true
}
trap 'kill ${competitor_pid:-} 2>/dev/null || true; cleanup' EXIT
await() { for _ in $(seq 1 150); do curl -sf "http://127.0.0.1:$1/health" >/dev/null && return 0; sleep 0.2; done; echo "port $1 not up" >&2; exit 1; }
shape=(--prompt-tokens 2000 --output-tokens 16 --ignore-eos --concurrency 1 --max-requests "$requests" --quiet)
summary() { python3 - "$1" "$2" <<'PY'
import json, sys
point = json.load(open(sys.argv[2]))["points"][0]
pd = point.get("prefill_decode", {})
kv = pd.get("kv_transfer", {})
line = f'{sys.argv[1]:<12} completed {point["requests"]["completed"]:>4}  TTFT p50 {point["latency_ms"]["ttft"]["p50"]:8.2f} ms'
if pd:
    line += f'  (prefill hop p50 {pd["ttft_split_ms"]["prefill"]["p50"]:.2f}, decode first token p50 {pd["ttft_split_ms"]["decode_first_token"]["p50"]:.2f}'
    line += f', KV transfer mean {kv["mean_ms"]:.2f} ms)' if "mean_ms" in kv else f', KV transfer {kv.get("note", "?")})'
print(line)
PY
}
"${jvm[@]}" serve --port 18801 --max-model-len 4096 >"$out/single.log" 2>&1 & pids+=($!)
await 18801
"${jvm[@]}" load --url http://127.0.0.1:18801 "${shape[@]}" --report "$out/single.json" >/dev/null
summary single "$out/single.json"
cleanup; pids=()
for plane in $planes; do
    cfg='{"kv_connector":"NixlConnector","kv_role":"kv_both"}'
    "${jvm[@]}" serve --port 18811 --max-model-len 4096 --kv-transfer-config "$cfg" --kv-data-plane "$plane" \
        --side-channel-port 18821 --kv-cache-size 4096 >"$out/prefill-$plane.log" 2>&1 & pids+=($!)
    "${jvm[@]}" serve --port 18812 --max-model-len 4096 --kv-transfer-config "$cfg" --kv-data-plane "$plane" \
        --side-channel-port 18822 --kv-cache-size 4096 >"$out/decode-$plane.log" 2>&1 & pids+=($!)
    await 18811; await 18812
    "${jvm[@]}" load --prefill-url http://127.0.0.1:18811 --decode-url http://127.0.0.1:18812 "${shape[@]}" \
        --scrape-metrics http://127.0.0.1:18812/metrics --report "$out/pd-$plane.json" >/dev/null
    summary "pd-$plane" "$out/pd-$plane.json"
    grep -h "KV transfer:" "$out/prefill-$plane.log" | sed 's/^/    /' | head -1
    cleanup; pids=()
done
