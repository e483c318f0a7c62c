# The experiments' documented properties on small fixed inputs (--quick):
# each --check exits 1 when a property fails; each writes its CSV (and its
# PNG when python3 has matplotlib; without it, a note).
. "$(dirname "$0")/common.sh"

if python3 -c 'import matplotlib' >/dev/null 2>&1; then plots=1; else plots=0; fi
for experiment in scaling rank init asymmetry; do
  "$BENCH" "$experiment" --quick --check --out exp >"$experiment.txt" 2>&1 \
    || fail "$experiment --check: $(grep -E 'FAIL|attn-bench' "$experiment.txt")"
  grep -q '^check: PASS' "$experiment.txt" || fail "$experiment printed no check"
  [ "$(wc -l <"exp/$experiment.csv")" -gt 2 ] || fail "$experiment wrote no CSV rows"
  if [ "$plots" -eq 1 ]; then
    head -c 8 "exp/$experiment.png" | od -An -c | grep -q 'P   N   G' \
      || fail "$experiment wrote no PNG plot"
    grep -q "^# $experiment: plot exp/$experiment.png" "$experiment.txt" \
      || fail "$experiment did not say where its plot is"
  else
    grep -q "^# $experiment: no plot: matplotlib not found" "$experiment.txt" \
      || fail "$experiment did not say that matplotlib is missing"
  fi
  pass "$experiment: $(grep -c '^check: PASS' "$experiment.txt") properties hold"
done
grep -q 'PASS the numerical rank of Q K^T never exceeds hs' rank.txt || fail "rank: no rank <= hs check"
grep -q 'PASS shared Wq = Wk: ||S - S^T|| is exactly 0' asymmetry.txt || fail "asymmetry: no exact 0"
grep -q 'PASS unscaled, the largest weight grows with hs' scaling.txt || fail "scaling: no saturation"
awk -F, '$5 == "shared" && $6 != 0 { bad = 1 } END { exit bad }' exp/asymmetry.csv \
  || fail "asymmetry.csv: a shared row is not 0"
awk -F, 'NR > 1 && $4 > $2 { bad = 1 } END { exit bad }' exp/rank.csv || fail "rank.csv: rank > hs"
pass "CSV columns agree: rank <= hs, shared asymmetry 0"
# Without matplotlib (a stand-in package that fails to import hides it) the
# experiment says so, draws nothing and still passes.
mkdir -p no-matplotlib/matplotlib \
  && echo 'raise ImportError("hidden by the test")' >no-matplotlib/matplotlib/__init__.py \
  || fail "cannot hide matplotlib"
PYTHONPATH="$PWD/no-matplotlib" "$BENCH" rank --quick --check --out bare >bare.txt 2>&1 \
  || fail "rank without matplotlib: $(cat bare.txt)"
grep -q '^# rank: no plot: matplotlib not found' bare.txt || fail "rank: no note of the missing matplotlib"
[ ! -e bare/rank.png ] || fail "rank drew a plot without matplotlib"
pass "without matplotlib: rank says so and draws nothing"
