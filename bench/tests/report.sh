# attn-bench report: report.md with the results table (and the plots when
# python3 has matplotlib; without it, a note) from a run's CSV and JSON.
. "$(dirname "$0")/common.sh"

results_rows() { sed -n '/^## Results/,$p' "$1" | grep -c '^| f[36][24] |'; }

"$BENCH" --quick --peers naive --T 16,32,48 --csv run.csv --json run.json >/dev/null 2>&1 \
  || fail "quick sweep failed"
"$BENCH" report --csv run.csv --out rep >out.txt 2>err.txt || fail "report: $(cat err.txt)"
[ -s rep/report.md ] || fail "no report.md"
grep -q '^## Results' rep/report.md || fail "report.md has no results"
[ "$(results_rows rep/report.md)" -eq 24 ] || fail "report.md does not list the 24 rows"
grep -q 'sgemm | 128 | [0-9]* |' rep/report.md || fail "report.md lacks the ceiling from the JSON"
# The FMA peak (issue 27): its table from the JSON, and each row's "% FMA peak"
# = attn's GFLOP/s (CSV) over the JSON's best FMA GFLOP/s of the row's dtype and threads
python3 - <<'PY' || fail "report.md's FMA peak table or % FMA peak column"
import csv, json
run = json.load(open("run.json"))
peak = {(e["kind"], e["threads"]): e["gflops"] for e in run["fma_peak"]["entries"]}
text = open("rep/report.md").read()
assert "## FMA peak" in text, "no FMA peak section"
for (kind, threads), g in peak.items():
    assert "| %s | %d | %.1f |" % (kind, threads, g) in text, (kind, threads, g)
lines = [l for l in text.split("## Results")[1].split("\n") if l[:6] in ("| f32 ", "| f64 ")]
head = [c.strip() for c in text.split("## Results")[1].split("\n")[2].split("|")[1:-1]]
col, thr = head.index("% FMA peak"), head.index("thr")
rows = list(csv.DictReader(open("run.csv")))
assert len(rows) == len(lines) == 24, (len(rows), len(lines))
for row, line in zip(rows, lines):
    cells = [c.strip() for c in line.split("|")[1:-1]]
    want = 100.0 * float(row["attn_gflops"]) / peak[(row["dtype"], int(cells[thr]))]
    got = float(cells[col].rstrip("%"))
    assert abs(got - want) <= 0.5 + 0.01 * want, (cells, want)
PY
pass "report.md: the FMA peak table and every row's % FMA peak against it"
# Without matplotlib (a stand-in package that fails to import hides it):
# report.md says so, and the rest is written.
mkdir -p no-matplotlib/matplotlib \
  && echo 'raise ImportError("hidden by the test")' >no-matplotlib/matplotlib/__init__.py \
  || fail "cannot hide matplotlib"
PYTHONPATH="$PWD/no-matplotlib" "$BENCH" report --csv run.csv --out rep-bare >out.txt 2>err.txt \
  || fail "report without matplotlib: $(cat err.txt)"
grep -q 'No plots: matplotlib was not found' rep-bare/report.md || fail "no note of the missing matplotlib"
[ "$(results_rows rep-bare/report.md)" -eq 24 ] || fail "without matplotlib, rows are missing"
[ ! -e rep-bare/time.png ] || fail "a plot was drawn without matplotlib"
pass "without matplotlib: report.md lists 24 rows and says there are no plots"
if python3 -c 'import matplotlib' >/dev/null 2>&1; then
  for plot in time gflops ceiling; do
    [ -s "rep/$plot.png" ] || fail "no $plot.png"
    head -c 8 "rep/$plot.png" | od -An -c | grep -q 'P   N   G' || fail "$plot.png is not a PNG"
    grep -q "^!\[.*\]($plot.png)\$" rep/report.md || fail "report.md does not show $plot.png"
  done
  pass "report.md lists 24 rows and links 3 PNG plots"
else
  grep -q 'No plots: matplotlib was not found' rep/report.md || fail "no note of the missing matplotlib"
  pass "report.md lists 24 rows; no matplotlib, said so"
fi
printf 'a,b\n1,2\n' >other.csv
expect_status 1 "not a CSV of this attn-bench run" report --csv other.csv --out rep2
expect_status 1 "no-such.csv" report --csv no-such.csv --out rep2
expect_status 2 "no CSV given" report --csv ,
: >not-a-folder
expect_status 1 "not-a-folder" report --csv run.csv --out not-a-folder/rep
# More than 12 panels continue in time-2.png: 13 shapes (hs 1..13).
"$BENCH" --quick --peers none --dtype f32 --op forward --causal 0 --T 8 \
  --hs 1,2,3,4,5,6,7,8,9,10,11,12,13 --csv many.csv --json none >/dev/null 2>&1 \
  || fail "13-shape sweep failed"
"$BENCH" report many.csv --out many >out.txt 2>err.txt || fail "report of 13 shapes: $(cat err.txt)"
if python3 -c 'import matplotlib' >/dev/null 2>&1; then
  for plot in time time-2 gflops-2 ceiling-2; do
    head -c 8 "many/$plot.png" | od -An -c | grep -q 'P   N   G' || fail "no $plot.png of 13 panels"
  done
  [ ! -e many/time-3.png ] || fail "13 panels made a third figure"
  pass "13 panels: time.png and time-2.png"
fi
# Directly, without attn-bench: the same report.md (the FLOP counts aside).
python3 "$(dirname "$0")/../report/report.py" --csv run.csv --out rep-direct >/dev/null 2>err.txt \
  || fail "report.py directly: $(cat err.txt)"
grep -v '^- FLOP counts\|^attn-bench report --csv' rep/report.md >a.md
grep -v '^- FLOP counts\|^attn-bench report --csv' rep-direct/report.md >b.md
cmp -s a.md b.md || fail "report.py run directly wrote another report.md"
pass "report.py run directly writes the same report.md"

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
