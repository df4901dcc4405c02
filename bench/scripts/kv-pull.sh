#!/usr/bin/env bash
# KV pulls through the data planes: GB/s (1e9 B/s) of 256 reads of 128 KiB blocks, prefill in a child JVM, next to a
# Java copy of the same bytes measured in the same run (the baseline; the ratio is the figure that travels between
# machines). Three measurements: ucx over shared memory (UCX_TLS=sm,self), ucx over loopback TCP (UCX_TLS=tcp), and
# the pure-Java tcp plane. Reported, not gating; the goal is ucx shm >= 0.5x the copy.
# Usage: bench/scripts/kv-pull.sh [pool blocks=256]   (a multiple of 256; 2048 = 256 MiB pools, read from DRAM)
# Needs: libucx-dev (apt-get install -y libucx-dev) for the ucx lines; they print the reason and are skipped without.
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/scripts/competitor.sh   # COMPETITOR=N: beside N busy threads on CPU 0
pool="${1:-256}"
./mvnw -q -B -o -DskipTests -Dcheckstyle.skip -pl nixl-bridge -am install >/dev/null 2>&1 || \
    ./mvnw -q -B -DskipTests -Dcheckstyle.skip -pl nixl-bridge -am install >/dev/null
cp_file="$PWD/nixl-bridge/target/bench.classpath"
./mvnw -q -B -o -pl nixl-bridge dependency:build-classpath -Dmdep.outputFile="$cp_file" >/dev/null 2>&1 || \
    ./mvnw -q -B -pl nixl-bridge dependency:build-classpath -Dmdep.outputFile="$cp_file" >/dev/null
cp="nixl-bridge/target/test-classes:nixl-bridge/target/classes:$(cat "$cp_file")"
run() {
    echo "== $*"
    UCX_NET_DEVICES=lo UCX_WARN_UNUSED_ENV_VARS=n java --add-opens java.base/jdk.internal.misc=ALL-UNNAMED \
        --enable-native-access=ALL-UNNAMED -Dkvbench.poolBlocks="$pool" -cp "$cp" dev.tapedeck.nixl.KvPullBench "$@"
}
run two sm,self
run two tcp
run tcp
