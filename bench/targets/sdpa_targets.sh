#!/bin/sh
# Runs the sdpa target cases (bench/targets/sdpa-*.sweep) with attn-bench sdpa:
# prefill (B=1, Tq=Tk=2048, NH=32, NH_kv=8, hs=128, causal; forward and
# forward+backward), decode (Tq=1, Tk=8192, B=1) and batched decode (B=4,
# lengths 1000/3000/5000/8192, Tk=8192); f32, 2 threads, engine auto, PyTorch
# beside attn. On request (--only) issue 23's client cases, each in PyTorch's
# and attn's layout with attn's drop-in beside: client-decode (Tq=1, cache
# (1,4,4096,64), 16 query heads), client-loop (64 decode steps from 1024
# tokens, 16/4 heads, hs 64), client-prefill (as prefill) and client-decode8k
# (as decode). Builds nothing. See bench/run/sdpa.md.
set -eu

usage() {
  cat <<'EOF'
Usage: bench/targets/sdpa_targets.sh [OPTIONS] [-- ATTN_BENCH_SDPA_OPTIONS...]

  --bench PATH   attn-bench (default: $ATTN_BENCH, else build/release/bench/attn-bench)
  --out DIR      where NAME.csv, NAME.json and NAME.txt go (default: attn-sdpa-targets)
  --only LIST    comma-separated: prefill, decode, decode-b4 (default: these three);
                 client-decode, client-loop, client-prefill, client-decode8k
  --dry-run      print the commands, run nothing
  -h, --help     this text

Everything after -- goes to every attn-bench sdpa command and overrides the
sweep files (e.g. -- --repeats 3 --min-time 0, or -- --peers none).
EOF
}

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bench=${ATTN_BENCH:-$root/build/release/bench/attn-bench}
out=attn-sdpa-targets
only="prefill,decode,decode-b4"
dry_run=0
while [ $# -gt 0 ]; do
  case $1 in
    --bench|--out|--only)
      [ $# -ge 2 ] || { echo "sdpa_targets.sh: $1 needs a value" >&2; exit 2; } ;;
  esac
  case $1 in
    --bench) bench=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    *) echo "sdpa_targets.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done

[ "$dry_run" -eq 1 ] || [ -x "$bench" ] || {
  echo "sdpa_targets.sh: $bench is not executable: build first (cmake --build build/release -j2)" >&2
  exit 2
}
[ "$dry_run" -eq 1 ] || mkdir -p "$out"
status=0
for name in $(echo "$only" | tr ',' ' '); do
  sweep=$here/sdpa-$name.sweep
  [ -f "$sweep" ] || { echo "sdpa_targets.sh: no $sweep" >&2; exit 2; }
  if [ "$dry_run" -eq 1 ]; then
    echo "$bench sdpa --sweep $sweep --csv $out/$name.csv --json $out/$name.json --progress none $* | tee $out/$name.txt"
    continue
  fi
  echo "sdpa_targets.sh: $name ($sweep)" >&2
  if "$bench" sdpa --sweep "$sweep" --csv "$out/$name.csv" --json "$out/$name.json" \
      --progress none "$@" >"$out/$name.txt"; then
    :
  else
    status=$?
    echo "sdpa_targets.sh: attn-bench sdpa failed (exit $status) on $name; see $out/$name.txt" >&2
  fi
  cat "$out/$name.txt"
done
exit "$status"
