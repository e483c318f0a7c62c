# Sweep files: the options of a file are used, the command line overrides
# them; the shipped examples parse, and default.sweep is the default sweep;
# progress lines go to stderr when it is not a terminal.
. "$(dirname "$0")/common.sh"

cat >small.sweep <<'SWEEP'
# a small sweep
T      = 16, 32        # two lengths
C      = 32
NH     = 2
B      = 1
dtype  = f64
op     = forward
causal = 0
api    = plan, oneshot
engine = blas
peers  = none
ceiling = 0
json   = none
weights = no
min-time = 0.001
SWEEP
"$BENCH" --sweep small.sweep --csv file.csv --T 24 >out.txt 2>err.txt || fail "sweep file run: $(cat err.txt)"
# plan x (materialized, tiled) by default, oneshot once (its path and engine are not selectable)
[ "$(csv_rows file.csv)" -eq 3 ] || fail "wanted 3 rows (T=24 from the command line)"
awk -F, 'NR > 1 && ($1 != "f64" || $9 != 24 || $11 != 2 || $12 != 16) { bad = 1 } END { exit bad }' \
  file.csv || fail "rows do not follow the file (f64, NH=2, hs=C/NH=16) and --T 24"
pass "sweep file read; --T on the command line overrides its T"
grep -q '^attn-bench: \[3/3\] f64 forward causal=0 oneshot/auto' err.txt || fail "no progress lines on stderr"
pass "plain progress lines when stderr is not a terminal"

for sweep in "$SWEEPS"/*.sweep; do
  "$BENCH" --sweep "$sweep" --list >list.txt 2>err.txt || fail "$sweep: $(cat err.txt)"
  grep -q '^# [1-9][0-9]* configurations$' list.txt || fail "$sweep lists no configuration"
done
"$BENCH" --list >builtin.txt && "$BENCH" --sweep "$SWEEPS/default.sweep" --list >file.txt \
  || fail "--list failed"
cmp -s builtin.txt file.txt || fail "sweeps/default.sweep is not the built-in default sweep"
pass "the shipped sweep files parse; default.sweep lists the built-in default's $(grep -c '^f' file.txt) configurations"
