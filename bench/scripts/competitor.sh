# Sourced by the benchmark scripts: with COMPETITOR=N (busy threads) set, start a CPU competitor beside the run, a
# separate process spinning N threads (dev.tapedeck.bench.CpuCompetitor) pinned with taskset to COMPETITOR_CPUS
# (default 0) where taskset exists, as a router under test on the same box would compete; it ends by itself within
# half a second of the script. Each script prints which it ran ("quiet" or "contended ..."); run a script twice,
# with and without COMPETITOR, for its ratios both ways.
competitor_label="quiet"
if [ -n "${COMPETITOR:-}" ] && [ "${COMPETITOR}" != "0" ]; then
    bench_jar=bench/target/benchmarks.jar
    [ -f "$bench_jar" ] || ./mvnw -q -B -DskipTests -pl bench -am package
    pin=()
    if command -v taskset >/dev/null 2>&1; then pin=(taskset -c "${COMPETITOR_CPUS:-0}"); fi
    ${pin[@]+"${pin[@]}"} java -cp "$bench_jar" dev.tapedeck.bench.CpuCompetitor "$COMPETITOR" $$ >/dev/null 2>&1 &
    competitor_pid=$!   # scripts whose exit trap waits for every child kill it first
    competitor_label="contended ($COMPETITOR busy thread(s)${pin:+ on CPU ${COMPETITOR_CPUS:-0}})"
fi
echo "competitor: $competitor_label"
