#!/usr/bin/env bash
# Who takes an event loop's CPU while the loop is still runnable, and what the other CPUs do meanwhile: records the
# kernel's scheduler switches on every CPU for SECONDS (perf sched), then pairs each time one of the process's
# threads named THREAD... was switched out while runnable (preempted) with the moment it ran again. Prints, per
# preempting thread, how often and for how long (median, p90, longest, in all); then, for the stalls over 1 ms, what
# the other CPUs ran during them (swapper = idle). Run it in the middle of a benchmark's measured window, e.g. beside
# ScaleBench: tapedeck's loop is `tapedeck-http`, the bare server's `multiThreadIoEv` (pick the server's PID: the
# client's Netty loop has the same name).
# Usage: bench/scripts/loop-stalls.sh PID THREAD [seconds=5]
# Needs: perf (with the sched tracepoints readable: root, or kernel.perf_event_paranoid <= 1) and python3.
set -euo pipefail
pid="${1:?PID of the server}"
thread="${2:?thread name prefix, e.g. tapedeck-http}"
seconds="${3:-5}"
[ -d "/proc/$pid" ] || { echo "loop-stalls: no process $pid" >&2; exit 2; }
command -v perf >/dev/null || { echo "loop-stalls: perf is not installed" >&2; exit 2; }
tids=""
for task in /proc/"$pid"/task/*; do
    case "$(cat "$task/comm" 2>/dev/null)" in
        "$thread"*) tids="$tids $(basename "$task")" ;;
    esac
done
[ -n "$tids" ] || { echo "loop-stalls: process $pid has no thread named $thread*" >&2; exit 2; }
data=$(mktemp)
trap 'rm -f "$data"' EXIT
perf sched record -a -o "$data" -- sleep "$seconds" >/dev/null 2>&1 \
    || { echo "loop-stalls: perf sched record failed (are the sched tracepoints readable?)" >&2; exit 1; }
perf script -i "$data" -F cpu,time,trace 2>/dev/null | python3 -c '
import collections, re, sys
loops = set(sys.argv[1].split())
seconds = float(sys.argv[2])
switch = re.compile(r"\s*\[(\d+)\]\s+([\d.]+):\s+prev_comm=(.*?) prev_pid=(\d+) .*?prev_state=(\S+) ==> "
                    r"next_comm=(.*?) next_pid=(\d+)")
events = []
for line in sys.stdin:
    m = switch.match(line)
    if m:
        cpu, t, prev, prev_tid, state, nxt, next_tid = m.groups()
        events.append((float(t), int(cpu), prev, prev_tid, state, nxt, next_tid))
events.sort()
running = {}
timeline = collections.defaultdict(list)   # cpu -> [(start, end, task)]
for t, cpu, prev, prev_tid, state, nxt, next_tid in events:
    if cpu in running:
        timeline[cpu].append((running[cpu][0], t, running[cpu][1]))
    running[cpu] = (t, nxt)
preempted = {}
stalls = collections.defaultdict(list)       # preempting task -> [ms]
long_stalls = []                              # (start, end, cpu)
for t, cpu, prev, prev_tid, state, nxt, next_tid in events:
    if prev_tid in loops and state.startswith("R"):
        preempted[prev_tid] = (t, nxt, cpu)
    if next_tid in loops and next_tid in preempted:
        start, by, on = preempted.pop(next_tid)
        stalls[by].append((t - start) * 1e3)
        if t - start > 1e-3:
            long_stalls.append((start, t, on))
print(f"loop thread(s) {sys.argv[1].strip()}, {seconds:g} s of scheduler switches")
print("{:24s} {:>6s} {:>10s} {:>10s} {:>8s} {:>8s}".format("preempted by", "times", "in all ms", "median ms", "p90 ms",
                                                      "longest"))
for by, ms in sorted(stalls.items(), key=lambda item: -sum(item[1])):
    ms.sort()
    print(f"{by:24s} {len(ms):6d} {sum(ms):10.1f} {ms[len(ms) // 2]:10.3f} {ms[int(len(ms) * 0.9)]:8.3f} {ms[-1]:8.3f}")
other = collections.Counter()
total = 0.0
for start, end, on in long_stalls:
    total += end - start
    for cpu, spans in timeline.items():
        if cpu == on:
            continue
        for a, b, task in spans:
            overlap = min(b, end) - max(a, start)
            if overlap > 0:
                other[task] += overlap
print(f"stalls over 1 ms: {len(long_stalls)}, {total * 1e3:.1f} ms in all; meanwhile the other CPU(s) ran:")
for task, s in other.most_common(6):
    print(f"  {task:22s} {s * 1e3:8.1f} ms")
' "$tids" "$seconds"
