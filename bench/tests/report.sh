# attn-bench report: report.md with the results table (and the plots when
# gnuplot exists) from a run's CSV and JSON.
. "$(dirname "$0")/common.sh"

"$BENCH" --quick --peers naive --T 16,32,48 --csv run.csv --json run.json >/dev/null 2>&1 \
  || fail "quick sweep failed"
"$BENCH" report --csv run.csv --out rep >out.txt 2>err.txt || fail "report: $(cat err.txt)"
[ -s rep/report.md ] || fail "no report.md"
grep -q '^## Results' rep/report.md || fail "report.md has no results"
[ "$(grep -c '^| f[36][24] |' rep/report.md)" -eq 24 ] || fail "report.md does not list the 24 rows"
grep -q 'sgemm | 128 | 1 |' rep/report.md || fail "report.md lacks the ceiling from the JSON"
if command -v gnuplot >/dev/null 2>&1; then
  for plot in time gflops ceiling; do
    [ -s "rep/$plot.png" ] || fail "no $plot.png"
    head -c 8 "rep/$plot.png" | od -An -c | grep -q 'P   N   G' || fail "$plot.png is not a PNG"
  done
  pass "report.md lists 24 rows and links 3 PNG plots"
else
  grep -q 'No plots: gnuplot was not found' rep/report.md || fail "no note of the missing gnuplot"
  pass "report.md lists 24 rows; no gnuplot, said so"
fi
printf 'a,b\n1,2\n' >other.csv
expect_status 1 "not a CSV of this attn-bench run" report --csv other.csv --out rep2

# --targets: issue 5's table from a run_targets.sh folder (canned numbers of
# bench/targets/testdata, one round plus attn-memory's CSV)
command -v python3 >/dev/null 2>&1 || { pass "no python3: --targets not checked"; exit 0; }
data="$(cd "$(dirname "$0")/../targets/testdata" && pwd)"
mkdir -p targets/round-1 && cp "$data/run.csv" "$data/run.json" targets/round-1/ \
  && cp "$data/memory.csv" targets/ || fail "cannot lay out the targets folder"
"$BENCH" report --targets targets --out trep >out.txt 2>err.txt \
  || fail "report --targets: $(cat err.txt)"
grep -q '^| case | target | measured | baseline | status | how |' trep/targets.md \
  || fail "targets.md has no table"
grep -q '^| course shape B=1 T=6 C=64 hs=16, plan forward | >= 25x NumPy |' trep/targets.md \
  || fail "targets.md lacks the course row"
grep -q 'targets met' out.txt || fail "report --targets printed no summary"
pass "report --targets wrote targets.md with the target table"
expect_status 1 "target check failed" report --targets no-such-folder --out trep2
