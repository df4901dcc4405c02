#!/usr/bin/env bash
# JMH regression bench: the microbenchmarks of a base build (BASE_JAR, a benchmarks.jar built from an older commit)
# against this build's (bench/target/benchmarks.jar, built first when missing or older than a main source, a
# *Benchmark*.java or a pom), on this machine, back to back. Prints one row per benchmark and param combination present
# in both jars: base score, this build's score, new/base with the direction that is better (avgt: lower, thrpt:
# higher), the noise of the measurement, a verdict, and the allocation per op (gc.alloc.rate.norm of -prof gc) of both.
# Benchmarks (or param combinations) in only one of the jars are listed below the table, not run. The JMH logs and
# JSON results (-rf json, read with python3) are left in bench/target/regress/.
# Usage: bench/scripts/regress.sh BASE_JAR [JMH args...]
#   JMH args: benchmark regexes and options passed to both jars (e.g. 'BlockPool' -wi 1 -i 2 -f 1, -p maxTokens=16,
#   -e Router). Defaults for the options not given: -f 1 -wi 3 -w 1s -i 5 -r 1s -foe true -prof gc (the same for both
#   jars whatever their annotations say). Not allowed: -rf/-rff (the script's own), -l/-lp/-h.
#   ROUNDS=3: each benchmark runs ROUNDS times per jar (one JMH fork each with -f 1), base and new back to back, base
#     first in odd rounds and new first in even ones, so that a drift of the machine does not favour one side; the
#     spread of the per-round ratios is the noise between JVMs and between moments. ROUNDS=1 is a third of the time,
#     with the spread of the iterations as the only measure of noise.
#   NOISE_FLOOR=0.08: a change smaller than 8% is never flagged, whatever the measured noise: on the development
#     machine the same two jars gave ratios 6% apart from one run of this script to the next, with rounds that agreed.
#   FAIL_ON_REGRESSION=1: exit 3 when a row is flagged REGRESSION (slower beyond noise, or allocating more).
#   MARKDOWN=1: print the table as markdown (for docs/performance.md).
#   NO_BUILD=1: use bench/target/benchmarks.jar as it is. OUT=dir: where the logs and JSON go.
# Time: the default suite (7 benchmarks in both jars, ROUNDS=3) runs 42 JMH forks of about 9 s each: 6 to 7 minutes
# on the 2-core development machine; 'EngineStep|SseChunk' -wi 1 -i 2 with ROUNDS=2 about 30 s.
# Exit: 0 when the comparison ran (regressions included, unless FAIL_ON_REGRESSION=1), 1 when a jar is missing or does
# not list, the build or a JMH run fails, or no benchmark is in both jars; 2 on a usage error; 3 as above.
# An A/A run (BASE_JAR=bench/target/benchmarks.jar) measures the noise of the machine with nothing changed.
set -euo pipefail
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
case "$1" in -h|--help) usage;; esac
base_jar="$(realpath -m "$1")"; shift
cd "$(dirname "$0")/../.."
new_jar=bench/target/benchmarks.jar
rounds="${ROUNDS:-3}"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "regress: ROUNDS must be a positive integer" >&2; exit 2; }
[ -f "$base_jar" ] || { echo "regress: base jar $base_jar not found" >&2; exit 1; }

# split the JMH args into benchmark regexes and options (every JMH option but the listing ones takes a value)
regexes=(); opts=(); given=" "
while [ $# -gt 0 ]; do
    case "$1" in
        -h|-l|-lp|-lprof|-lrf) echo "regress: $1 is not for this script (use java -jar JAR $1)" >&2; exit 2;;
        -rf|-rff) echo "regress: $1 is set by the script (JSON results in bench/target/regress/)" >&2; exit 2;;
        -?*) [ $# -ge 2 ] || { echo "regress: $1 needs a value" >&2; exit 2; }
             given+="$1 "; [ "$1" = -prof ] && given+="prof:${2%%:*} "
             opts+=("$1" "$2"); shift 2;;
        *) regexes+=("$1"); shift;;
    esac
done
has() { case "$given" in *" $1 "*) return 0;; esac; return 1; }
has -f || opts+=(-f 1); has -wi || opts+=(-wi 3); has -w || opts+=(-w 1s); has -i || opts+=(-i 5)
has -r || opts+=(-r 1s); has -foe || opts+=(-foe true); has prof:gc || opts+=(-prof gc)

# this build's jar: built when missing, or older than a main source, a benchmark source or a pom of the reactor
if [ -z "${NO_BUILD:-}" ]; then
    stale=""
    [ -f "$new_jar" ] && stale="$(find . \( -name target -o -name .git -o -name node_modules \) -prune -o -type f \
        \( -path '*/src/main/*' -o -name '*Benchmark*.java' -o -name pom.xml \) -newer "$new_jar" -print -quit)"
    if [ ! -f "$new_jar" ] || [ -n "$stale" ]; then
        echo "regress: building $new_jar${stale:+ (${stale#./} is newer)}" >&2
        ./mvnw -q -B -o -DskipTests package -pl bench -am ||
            { echo "regress: the build failed (NO_BUILD=1 compares the jar as it is)" >&2; exit 1; }
    fi
fi
[ -f "$new_jar" ] || { echo "regress: $new_jar not found" >&2; exit 1; }

jvm=(java --add-opens java.base/jdk.internal.misc=ALL-UNNAMED -jar)
# the benchmarks of a jar that the regexes and options select, one a line
list() {
    local outp
    outp="$("${jvm[@]}" "$1" -l ${regexes[@]+"${regexes[@]}"} "${opts[@]}" 2>&1)" ||
        { echo "regress: $1 does not list its benchmarks:" >&2; echo "$outp" | tail -5 >&2; exit 1; }
    echo "$outp" | sed -n '/^Benchmarks:/,$p' | sed 1d | sed '/^[[:space:]]*$/d'
}
base_list="$(list "$base_jar")"; new_list="$(list "$new_jar")"
common=($(comm -12 <(sort <<<"$base_list") <(sort <<<"$new_list")))
only_base="$(comm -23 <(sort <<<"$base_list") <(sort <<<"$new_list") | tr '\n' ' ' | xargs)"
only_new="$(comm -13 <(sort <<<"$base_list") <(sort <<<"$new_list") | tr '\n' ' ' | xargs)"
if [ ${#common[@]} -eq 0 ]; then
    echo "regress: no benchmark selected by '${regexes[*]:-}' is in both jars" >&2
    [ -n "$only_base" ] && echo "  only in base: $only_base" >&2
    [ -n "$only_new" ] && echo "  only in new: $only_new" >&2
    exit 1
fi

out="${OUT:-bench/target/regress}"
mkdir -p "$out"; rm -f "$out"/r*-base-*.json "$out"/r*-new-*.json "$out"/r*-base-*.log "$out"/r*-new-*.log
# run copies, so that a build (or a rebuild of the base) during the run does not change or remove a jar under it
cp -p "$base_jar" "$out/base.jar"; cp -p "$new_jar" "$out/new.jar"
echo "regress: ${#common[@]} benchmark(s) x $rounds rounds x 2 jars, JMH ${opts[*]}; logs in $out" >&2
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"; started=$SECONDS
for round in $(seq 1 "$rounds"); do
    if (( round % 2 )); then sides=(base new); else sides=(new base); fi
    for b in "${common[@]}"; do
        for side in "${sides[@]}"; do
            jar="$out/$side.jar"; src="$new_jar"; [ "$side" = base ] && src="$base_jar"
            file="$out/r$round-$side-$b"; t0=$SECONDS
            printf 'regress: round %d/%d %-4s %s ... ' "$round" "$rounds" "$side" "${b#dev.tapedeck.}" >&2
            if ! "${jvm[@]}" "$jar" "^$(sed 's/[.$]/\\&/g' <<<"$b")\$" "${opts[@]}" -rf json -rff "$file.json" \
                    >"$file.log" 2>&1; then
                echo "FAILED" >&2; tail -20 "$file.log" >&2
                echo "regress: JMH failed for $b on $side ($src; log: $file.log)" >&2; exit 1
            fi
            grep -q '"primaryMetric"' "$file.json" 2>/dev/null ||
                { echo "no result" >&2; echo "regress: JMH gave no result for $b on $side ($file.log)" >&2; exit 1; }
            echo "$(( SECONDS - t0 )) s" >&2
        done
    done
done

echo "# base: $base_jar (built $(date -r "$out/base.jar" '+%F %R'))"
echo "# new:  $new_jar (built $(date -r "$out/new.jar" '+%F %R'); the tree is now at" \
     "$(git describe --always --dirty 2>/dev/null || echo '?'))"
echo "# JMH ${opts[*]}, $rounds round(s), base and new back to back per benchmark; $(nproc) cores," \
     "load average $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after; $(( SECONDS - started )) s"
python3 - "$out" "$rounds" "$only_base" "$only_new" <<'PY'
import glob, json, math, os, re, statistics, sys

out, rounds = sys.argv[1], int(sys.argv[2])
only_base, only_new = sys.argv[3].split(), sys.argv[4].split()
floor = float(os.environ.get("NOISE_FLOOR", "0.08"))
fail = os.environ.get("FAIL_ON_REGRESSION") == "1"
md = os.environ.get("MARKDOWN") == "1"

SCALE = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}
def canonical(unit):
    """(kind, factor to seconds per op or to ops per second), or None"""
    m = re.fullmatch(r"(ns|us|ms|s|min)/op", unit)
    if m: return "time", SCALE[m[1]]
    m = re.fullmatch(r"ops/(ns|us|ms|s|min)", unit)
    if m: return "rate", 1 / SCALE[m[1]]
    return None

# runs[side][key][round] = dict(unit, iters (every measurement iteration of every fork), jmh_err (relative), alloc)
runs = {"base": {}, "new": {}}
for path in sorted(glob.glob(os.path.join(out, "r*-*.json"))):
    m = re.match(r"r(\d+)-(base|new)-", os.path.basename(path))
    if not m: continue
    for rec in json.load(open(path)):
        key = (rec["benchmark"], rec["mode"], tuple(sorted((rec.get("params") or {}).items())))
        pm, e = rec["primaryMetric"], rec["primaryMetric"].get("scoreError")
        alloc = rec.get("secondaryMetrics", {}).get("gc.alloc.rate.norm")
        runs[m[2]].setdefault(key, {})[int(m[1])] = dict(
            unit=pm["scoreUnit"], iters=[x for fork in pm["rawData"] for x in fork],
            jmh_err=abs(e / pm["score"]) if isinstance(e, (int, float)) and not math.isnan(e) and pm["score"] else None,
            alloc=alloc["score"] if alloc else None)

def half_iqr(xs):
    """half the interquartile range over the median: the spread of the iterations, robust to a burst of load"""
    if len(xs) < 2: return 0.0
    q1, _, q3 = statistics.quantiles(xs, n=4, method="inclusive")
    return (q3 - q1) / 2 / statistics.median(xs)

def short(name, names):
    s = ".".join(name.split(".")[-2:])
    return s if sum(".".join(n.split(".")[-2:]) == s for n in names) == 1 else name

def num(x):
    if x is None: return "-"
    a = abs(x)
    if a >= 10000: return f"{x:,.0f}"
    if a >= 100: return f"{x:.1f}"
    if a >= 10: return f"{x:.2f}"
    return f"{x:.3f}"

names = {k[0] for side in runs.values() for k in side}
header = ["benchmark", "params", "mode", "unit", "base", "new", "new/base", "better", "rounds", "noise", "verdict",
          "B/op base", "B/op new"]
rows, regressions, noises, spreads, iqrs, jmh_errs = [], [], [], [], [], []
for key in sorted(set(runs["base"]) & set(runs["new"])):
    bench, mode, params = key
    b, n = runs["base"][key], runs["new"][key]
    unit = next(iter(b.values()))["unit"]
    def conv(r):  # a run's iterations in the base's unit, or None when the units do not convert
        if r["unit"] == unit: return r["iters"]
        cb, cu = canonical(unit), canonical(r["unit"])
        if not cb or not cu or cb[0] != cu[0]: return None
        return [x * cu[1] / cb[1] for x in r["iters"]]
    bi, ni = {r: conv(v) for r, v in b.items()}, {r: conv(v) for r, v in n.items()}
    label = [short(bench, names), ",".join(f"{p}={v}" for p, v in params) or "-", mode, unit]
    lower_better = mode != "thrpt"
    better = "lower" if lower_better else "higher"
    ba = [v["alloc"] for v in b.values() if v["alloc"] is not None]
    na = [v["alloc"] for v in n.values() if v["alloc"] is not None]
    mba, mna = (statistics.mean(ba) if ba else None), (statistics.mean(na) if na else None)
    jmh_errs += [v["jmh_err"] for v in list(b.values()) + list(n.values()) if v["jmh_err"] is not None]
    base_all = [x for r in sorted(bi) for x in bi[r]]
    if any(v is None for v in ni.values()) or not base_all:
        rows.append(label + ["-", "-", "-", better, "-", "-", f"units differ ({next(iter(n.values()))['unit']})",
                             num(mba), num(mna)])
        continue
    new_all = [x for r in sorted(ni) for x in ni[r]]
    # a side's score: the mean over the rounds of each round's median iteration (so the ratio of the scores lies
    # within the rounds' ratios)
    bm, nm = {r: statistics.median(v) for r, v in bi.items()}, {r: statistics.median(v) for r, v in ni.items()}
    sb, sn = statistics.mean(bm.values()), statistics.mean(nm.values())
    ratio = sn / sb if sb else float("nan")
    per_round = [nm[r] / bm[r] for r in sorted(set(bm) & set(nm))]
    spread = (max(per_round) - min(per_round)) / ratio if len(per_round) >= 2 else 0.0
    iqr = math.hypot(half_iqr(base_all), half_iqr(new_all))
    noise = max(iqr, spread, floor)
    noises.append((noise, label[0])); iqrs.append(iqr)
    if len(per_round) >= 2: spreads.append((spread, label[0]))
    worse = ratio > 1 + noise if lower_better else ratio < 1 - noise
    improved = ratio < 1 - noise if lower_better else ratio > 1 + noise
    verdict = ["REGRESSION" if worse else "improved" if improved else "~ noise"]
    if mba is not None and mna is not None:
        tol = max(1.0, 0.05 * mba, max(ba) - min(ba), max(na) - min(na))
        if mna > mba + tol: verdict.append(f"ALLOC +{num(mna - mba)} B")
        elif mna < mba - tol: verdict.append(f"alloc {num(mna - mba)} B")
    if worse or any(v.startswith("ALLOC") for v in verdict): regressions.append(label[0])
    rows.append(label + [num(sb), num(sn), f"{ratio:.3f}", better,
                         f"{min(per_round):.3f}-{max(per_round):.3f}" if len(per_round) >= 2 else "-",
                         f"±{noise * 100:.1f}%", ", ".join(verdict), num(mba), num(mna)])

if md:
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---:" if i >= 4 and h not in ("better", "verdict") else "---"
                         for i, h in enumerate(header)) + "|")
    for r in rows: print("| " + " | ".join(r) + " |")
else:
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    left = {"benchmark", "params", "mode", "unit", "better", "verdict"}
    for r in [header] + rows:
        print("  ".join(c.ljust(w) if h in left else c.rjust(w) for c, w, h in zip(r, widths, header)).rstrip())
print()
print("base, new: the mean over the rounds of each round's median iteration (a burst of load from other work moves"
      " it less than\nJMH's mean). new/base: their ratio; better: which way is better, lower for avgt/sample/ss (time"
      " per op), higher for thrpt.\nrounds: the lowest and highest per-round ratio. noise: the largest of the"
      " iterations' spread (half the interquartile range\nover the median, all rounds, base and new combined in"
      f" quadrature), the rounds' spread and NOISE_FLOOR {floor * 100:g}%.\n"
      "REGRESSION / improved: the ratio is beyond the noise, the worse / the better way. ALLOC +/-: allocation per op"
      " (mean of the\nrounds) changed by more than 1 B, 5% and the rounds' spread.")
if noises:
    line = (f"noise observed: iterations' spread median ±{statistics.median(iqrs) * 100:.1f}%"
            f" (max ±{max(iqrs) * 100:.1f}%)")
    if spreads:
        s = max(spreads)
        line += (f"; per-round ratios spread median {statistics.median(x for x, _ in spreads) * 100:.1f}%"
                 f" (max {s[0] * 100:.1f}%, {s[1]})")
    if jmh_errs:
        line += (f"; JMH's own 99.9% error of its mean score median ±{statistics.median(jmh_errs) * 100:.1f}%"
                 f" (max ±{max(jmh_errs) * 100:.0f}%)")
    print(line)
one_sided = [(s, k) for s in ("base", "new") for k in runs[s]
             if k not in runs["new" if s == "base" else "base"] and k[0] not in only_base + only_new]
if only_base: print("only in base (not run): " + " ".join(only_base))
if only_new: print("only in new (not run): " + " ".join(only_new))
for s, (bench, mode, params) in one_sided:
    print(f"only in {s}: {bench} {mode} " + (",".join(f"{p}={v}" for p, v in params) or ""))
if regressions:
    print(f"regressions: {', '.join(regressions)}")
    if fail: sys.exit(3)
PY
