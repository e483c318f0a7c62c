# The experiments' documented properties on small fixed inputs (--quick):
# each --check exits 1 when a property fails; each writes its CSV (and its
# PNG when gnuplot exists).
. "$(dirname "$0")/common.sh"

for experiment in scaling rank init asymmetry; do
  "$BENCH" "$experiment" --quick --check --out exp >"$experiment.txt" 2>&1 \
    || fail "$experiment --check: $(grep -E 'FAIL|attn-bench' "$experiment.txt")"
  grep -q '^check: PASS' "$experiment.txt" || fail "$experiment printed no check"
  [ "$(wc -l <"exp/$experiment.csv")" -gt 2 ] || fail "$experiment wrote no CSV rows"
  if command -v gnuplot >/dev/null 2>&1; then
    [ -s "exp/$experiment.png" ] || fail "$experiment wrote no plot"
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
