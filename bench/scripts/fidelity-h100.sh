#!/usr/bin/env bash
# Out-of-sample accuracy of the physics step model on the BLIS H100 runs (read from ../shared, never copied): the fit
# across all models, each model's profile in sample, leave one model out, leave one run out (RooflineFitMain).
# Prints every held-out stage and the median APE per metric; the tables in docs/latency-models.md come from it.
# Usage: bench/scripts/fidelity-h100.sh [seconds per stage=60] [rounds=12] [data dir] [ablation pins, e.g. request=0]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-60}"; rounds="${2:-12}"
data="${3:-../shared/data/fidelity/blis-training-feb2026/default_args}"
pins="${4:-}"
[ -d "$data" ] || { echo "no BLIS training data at $data (../shared/data/fidelity)" >&2; exit 2; }
./mvnw -q -B -DskipTests -pl core/simulate -am install
./mvnw -q -B -pl core/simulate test-compile dependency:build-classpath -Dmdep.outputFile=target/cp.txt
cp="core/simulate/target/test-classes:core/simulate/target/classes:$(cat core/simulate/target/cp.txt)"
java --add-opens java.base/jdk.internal.misc=ALL-UNNAMED -cp "$cp" dev.tapedeck.simulate.fit.RooflineFitMain \
    "$data" "$seconds" "$rounds" "$pins"
