#!/bin/sh
# Measures issue 5's performance targets: runs the sweeps of bench/targets/
# with attn-bench, attn-memory, then check_targets.py on the results.
# Builds nothing. See bench/targets/README.md.
set -eu

usage() {
  cat <<'EOF'
Usage: bench/targets/run_targets.sh [OPTIONS] [-- CHECK_TARGETS_OPTIONS...]

Runs the target sweeps (bench/targets/*.sweep) with attn-bench, ROUNDS times
over, and the memory measurement (attn-memory), then
bench/targets/check_targets.py on what they wrote: every target's ratio is
taken within one run, and the median over the rounds is reported. Builds
nothing: build first (cmake --preset release && cmake --build --preset release).

  --bench PATH     attn-bench (default: $ATTN_BENCH, else build/release/bench/attn-bench)
  --memory PATH    attn-memory (default: beside attn-bench, targets/attn-memory)
  --out DIR        where the CSVs, JSONs, logs and results go (default: attn-targets):
                   DIR/round-K/NAME.{csv,json,txt}, DIR/memory.csv, DIR/results.{md,json}
  --rounds N       run every sweep N times, round after round (default 3)
  --extra-rounds N then, up to N times (default 2), run again in a round of
                   their own the sweeps of the targets that only noisy runs
                   measured (see --slow)
  --only LIST      run only these (comma-separated: course, head, long-head,
                   gpt2, gpt2-b8, head4096, oneshot, paths, small-1, small-2,
                   memory), in every round; the other results already in DIR
                   are kept and checked with them
  --load-max X     before each sweep, wait until other processes keep fewer
                   than X CPUs busy (over 3 s) ... (default 0.05)
  --wait S         ... for at most S seconds (default 300) ...
  --retries N      ... and run a sweep again, up to N more times, keeping the
                   quietest run (default 2), when it was noisy: other
                   processes kept more than X CPUs busy during it, or the
                   2-thread sgemm at its start (its ceiling) or right after
                   it (a probe) ran below F times the best seen
  --slow F         (default 0.8)
  --check-only     run nothing: check what DIR holds
  --dry-run        print the commands, run nothing
  -h, --help       this text

Everything after -- goes to check_targets.py (e.g. --strict, --markdown FILE,
--write-baseline). Without --markdown, DIR/results.md is written. A full run
(no --only) first deletes DIR/round-*, DIR/memory.csv and DIR/.sgemm-best.
EOF
}

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bench=${ATTN_BENCH:-}
memory=
out=attn-targets
rounds=3
extra_rounds=2
only=
load_max=0.05
slow=0.8
wait_max=300
retries=2
check_only=0
dry_run=0
sweeps="course head long-head gpt2 gpt2-b8 head4096 oneshot paths small-1 small-2"
memory_args="--T 1024,4096,16384 --dtype f32,f64 --path auto,materialized --threads 2"

while [ $# -gt 0 ]; do
  case $1 in
    --bench|--memory|--out|--rounds|--extra-rounds|--only|--load-max|--slow|--wait|--retries)
      [ $# -ge 2 ] || { echo "run_targets.sh: $1 needs a value" >&2; exit 2; } ;;
  esac
  case $1 in
    --bench) bench=$2; shift 2 ;;
    --memory) memory=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --extra-rounds) extra_rounds=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --load-max) load_max=$2; shift 2 ;;
    --retries) retries=$2; shift 2 ;;
    --wait) wait_max=$2; shift 2 ;;
    --slow) slow=$2; shift 2 ;;
    --check-only) check_only=1; shift ;;
    --dry-run) dry_run=1; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    *) echo "run_targets.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

[ -n "$bench" ] || bench=$root/build/release/bench/attn-bench
[ -n "$memory" ] || memory=$(dirname "$bench")/targets/attn-memory
for count in "$rounds" "$extra_rounds" "$retries" "$wait_max"; do
  case $count in ''|*[!0-9]*) echo "run_targets.sh: --rounds, --extra-rounds, --retries and --wait want counts" >&2; exit 2 ;; esac
done
[ "$rounds" -ge 1 ] || { echo "run_targets.sh: --rounds must be at least 1" >&2; exit 2; }
python3 -c 'import sys; [float(x) for x in sys.argv[1:]]' "$load_max" "$slow" 2>/dev/null \
  || { echo "run_targets.sh: --load-max and --slow want numbers" >&2; exit 2; }
if [ -n "$only" ]; then
  for name in $(echo "$only" | tr ',' ' '); do
    case " $sweeps memory " in
      *" $name "*) ;;
      *) echo "run_targets.sh: no sweep '$name' (see --help)" >&2; exit 2 ;;
    esac
  done
fi
if [ "$check_only" -eq 0 ] && [ "$dry_run" -eq 0 ]; then
  for program in "$bench" "$memory"; do
    [ -x "$program" ] || { echo "run_targets.sh: $program is not built (cmake --build ...)" >&2; exit 2; }
  done
fi

wanted() { # is $1 to be run?
  [ -z "$only" ] && return 0
  case ",$only," in *",$1,"*) return 0 ;; esac
  return 1
}

wait_quiet() { # until other processes keep fewer than $load_max CPUs busy over 3 s
  python3 - "$load_max" "$wait_max" <<'PY' >&2
import sys, time
limit, longest = float(sys.argv[1]), float(sys.argv[2])
def busy_and_total():
    with open("/proc/stat") as stat:
        ticks = [int(x) for x in stat.readline().split()[1:9]]
    return sum(ticks) - ticks[3] - ticks[4], sum(ticks)
cpus = sum(1 for line in open("/proc/stat") if line.startswith("cpu") and line[3].isdigit())
start, said = time.monotonic(), False
while True:
    b0, t0 = busy_and_total()
    time.sleep(3)
    b1, t1 = busy_and_total()
    busy = cpus * (b1 - b0) / max(t1 - t0, 1)
    if busy < limit:
        break
    if time.monotonic() - start > longest:
        print(f"run_targets.sh: still {busy:.2f} CPUs busy after {longest:.0f} s: running anyway")
        break
    if not said:
        print(f"run_targets.sh: other processes keep {busy:.2f} CPUs busy: waiting (at most {longest:.0f} s)")
        said = True
PY
}

is_above() { python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) > float(sys.argv[2]) else 1)' "$1" "$2"; }

judge() { # base: prints "QUALITY NOISY MESSAGE" for the run at BASE.{json,probe.json}
  python3 - "$1" "$out/.sgemm-best" "$load_max" "$slow" <<'PY'
import json, sys
base, state, load_max, slow = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
def read(path):
    try:
        with open(path) as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return {}
run, probe = read(base + ".json"), read(base + ".probe.json")
load = run.get("other_load_cpus")
load = 9.0 if load is None else float(load)
rates = [float(c["gflops"]) for doc in (run, probe) for c in doc.get("ceiling", []) or []
         if c.get("dtype") == "f32" and c.get("threads") == 2 and c.get("n") == 2048
         and isinstance(c.get("gflops"), (int, float))]
try:
    best = float(open(state).read())
except (OSError, ValueError):
    best = 0.0
best = max([best] + rates)
with open(state, "w") as handle:
    handle.write(f"{best}\n")
ratio = min(rates) / best if rates and best > 0 else 1.0
noisy = load > load_max or ratio < slow
message = f"other processes kept {load:.2f} CPUs busy; 2-thread sgemm around it at " \
          f"{min(rates) if rates else float('nan'):.1f} GFLOP/s, {100 * ratio:.0f}% of the best seen"
print(f"{min(ratio, max(0.0, 1.0 - load)):.4f} {int(noisy)} {message}")
PY
}

run_sweep() { # name dir: runs bench/targets/NAME.sweep into DIR/NAME.{csv,json,txt,probe.json}
  name=$1
  dir=$2
  attempt=0
  best=
  best_quality=
  while :; do
    base=$dir/$name.try$attempt
    rm -f "$base.csv" "$base.json" "$base.txt" "$base.probe.json"
    wait_quiet
    echo "run_targets.sh: $dir: $name (attempt $((attempt + 1)))" >&2
    status=0
    "$bench" --sweep "$here/$name.sweep" --csv "$base.csv" --json "$base.json" \
      --progress none >"$base.txt" 2>&1 || status=$?
    if [ "$status" -ne 0 ]; then
      echo "run_targets.sh: attn-bench failed (exit $status) on $name.sweep; see $base.txt" >&2
      tail -n 5 "$base.txt" >&2
    fi
    # The probe: the 2-thread sgemm of the ceiling again, right after the run
    # (a run's own ceiling is measured at its start).
    "$bench" --T 8 --C 8 --hs 8 --B 1 --dtype f32 --op forward --causal 0 --api plan \
      --path auto --engine auto --threads 2 --peers none --ceiling 2048,64 --warmup 0 --repeats 1 \
      --min-time 0 --csv "$base.probe.tmp" --json "$base.probe.json" --progress none \
      >/dev/null 2>&1 || echo "run_targets.sh: the sgemm probe failed" >&2
    rm -f "$base.probe.tmp"
    verdict=$(judge "$base")
    quality=${verdict%% *}
    rest=${verdict#* }
    noisy=${rest%% *}
    echo "run_targets.sh: $name: ${rest#* }" >&2
    if [ -z "$best" ] || is_above "$quality" "$best_quality"; then
      best=$attempt
      best_quality=$quality
      best_noisy=$noisy
    fi
    attempt=$((attempt + 1))
    if [ "$noisy" -eq 0 ] || [ "$attempt" -gt "$retries" ]; then
      break
    fi
    echo "run_targets.sh: $name: noisy (load above $load_max CPUs or sgemm below $slow of the best): again" >&2
  done
  for ext in csv json txt probe.json; do
    if [ -f "$dir/$name.try$best.$ext" ]; then
      mv "$dir/$name.try$best.$ext" "$dir/$name.$ext"
    fi
  done
  i=0
  while [ "$i" -lt "$attempt" ]; do
    rm -f "$dir/$name.try$i.csv" "$dir/$name.try$i.json" "$dir/$name.try$i.txt" \
      "$dir/$name.try$i.probe.json"
    i=$((i + 1))
  done
  if [ "$best_noisy" -eq 1 ]; then
    echo "run_targets.sh: warning: $name stays noisy after $attempt attempts" >&2
  fi
}

if [ "$dry_run" -eq 1 ]; then
  round=1
  while [ "$round" -le "$rounds" ]; do
    for name in $sweeps; do
      if wanted "$name"; then
        echo "$bench --sweep $here/$name.sweep --csv $out/round-$round/$name.csv --json $out/round-$round/$name.json --progress none >$out/round-$round/$name.txt"
      fi
    done
    round=$((round + 1))
  done
  if wanted memory; then
    echo "$memory $memory_args >$out/memory.csv"
  fi
  echo "python3 $here/check_targets.py $out/round-* --memory $out/memory.csv --load-max $load_max --slow $slow --results-json $out/results.json --markdown $out/results.md $*"
  exit 0
fi

mkdir -p "$out"
if [ "$check_only" -eq 0 ]; then
  if [ -z "$only" ]; then
    rm -rf "$out"/round-[0-9]* "$out/memory.csv" "$out/.sgemm-best"
  fi
  round=1
  while [ "$round" -le "$rounds" ]; do
    mkdir -p "$out/round-$round"
    for name in $sweeps; do
      if wanted "$name"; then run_sweep "$name" "$out/round-$round"; fi
    done
    round=$((round + 1))
  done
  # Extra rounds: the sweeps of the targets that only noisy runs measured.
  extra=0
  while [ "$extra" -lt "$extra_rounds" ]; do
    dirs=
    round=1
    while [ -d "$out/round-$round" ]; do
      dirs="$dirs $out/round-$round"
      round=$((round + 1))
    done
    # shellcheck disable=SC2086 # $dirs: the round directories
    python3 "$here/check_targets.py" $dirs --baseline none --load-max "$load_max" \
      --slow "$slow" --results-json "$out/.noisy.json" >/dev/null || break
    again=$(python3 -c 'import json, sys
results = json.load(open(sys.argv[1]))
print(" ".join(sorted({s for r in results if r["noisy"] for s in r["sweeps"]})))' "$out/.noisy.json")
    rm -f "$out/.noisy.json"
    [ -n "$again" ] || break
    for name in $again; do
      if ! wanted "$name"; then again=$(echo " $again " | sed "s/ $name / /"); fi
    done
    [ -n "$(echo "$again" | tr -d ' ')" ] || break
    echo "run_targets.sh: only noisy runs measured the targets of:$again; round-$round for them" >&2
    mkdir -p "$out/round-$round"
    for name in $again; do run_sweep "$name" "$out/round-$round"; done
    extra=$((extra + 1))
  done
  if wanted memory; then
    echo "run_targets.sh: memory (attn-memory)" >&2
    # One process per configuration. The materialized rows at T = 16384 are
    # there for contrast (1 GiB in f32, 2 GiB in f64).
    # shellcheck disable=SC2086 # $memory_args is a list of plain words
    "$memory" $memory_args >"$out/memory.csv" \
      || echo "run_targets.sh: attn-memory failed; see $out/memory.csv" >&2
  fi
fi

markdown=1
for arg in "$@"; do
  case $arg in --markdown|--markdown=*) markdown=0 ;; esac
done
if [ "$markdown" -eq 1 ]; then
  set -- --markdown "$out/results.md" "$@"
fi
set -- --load-max "$load_max" --slow "$slow" --results-json "$out/results.json" "$@"
if [ -f "$out/memory.csv" ]; then
  set -- --memory "$out/memory.csv" "$@"
fi
round=99
while [ "$round" -ge 1 ]; do # prepended: the round directories first, in order
  if [ -d "$out/round-$round" ]; then set -- "$out/round-$round" "$@"; fi
  round=$((round - 1))
done
exec python3 "$here/check_targets.py" "$@"
