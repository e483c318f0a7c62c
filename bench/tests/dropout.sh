# attn-bench sdpa --dropout (issue 26's cost of attention dropout): refused on
# forwards and outside [0, 1); with stand-in peers, a training row at p > 0
# beside its twin at p = 0: the torch peer gets "dropout=P" on its line, the
# inference engines (ort here) skip the row with a note, the check is at
# p = 0, and the CSV's dropout, dropout_check and *_dropout_cost columns; the
# real torch peer's case passes dropout_p to its function (when PyTorch is
# there); attn-bench run's --dropout likewise (a stand-in torch_peer.py gets
# the tenth field "dropout=P"; the real one's attention passes dropout_p).
PEERS_DIR="$(cd "$(dirname "$0")/../peers" && pwd)"
. "$(dirname "$0")/common.sh"

small="--B 1 --NH 4 --NH-kv 2 --Tq 7 --Tk 16 --hs 8 --lengths full --mask none --window 0 --causal 1
  --threads 1 --engine own --layout bshd --scenario call --dtype f32 --ceiling 0 --bandwidth-mib 0
  --repeats 2 --warmup 0 --min-time 0 --progress none"
# shellcheck disable=SC2086
expect_status 2 "dropout is for training" sdpa $small --op forward --dropout 0.1 --peers none
# shellcheck disable=SC2086
expect_status 2 "dropout probabilities in \[0, 1\)" sdpa $small --op backward --dropout 1 --peers none
# shellcheck disable=SC2086
expect_status 0 "forward .*dropout is for training" sdpa $small --op forward,backward \
  --dropout 0,0.5 --peers none --csv mixed.csv --json none
[ "$(csv_rows mixed.csv)" -eq 3 ] || fail "forward,backward x 0,0.5: wanted 3 rows, got $(csv_rows mixed.csv)"
pass "a forward at p > 0 is left out (with the reason) beside the training rows"

"$BENCH" sdpa --help >help.txt || fail "sdpa --help"
for topic in "--dropout" "DROPOUT" "attn_plan_set_dropout" "at p=0" "attn_dropout_cost" "drop a/p0 t/p0"; do
  grep -q -- "$topic" help.txt || fail "sdpa --help does not mention $topic"
done
"$BENCH" --help >run-help.txt || fail "--help"
for topic in "--dropout" "DROPOUT" "attn_plan_set_dropout" "attn_dropout_cost" "torch/p0"; do
  grep -q -- "$topic" run-help.txt || fail "attn-bench --help does not mention $topic"
done
for sweep in sdpa-prefill gpt2-block; do
  [ -n "$SWEEPS" ] || break
  command=""; [ "$sweep" = sdpa-prefill ] && command=sdpa
  # shellcheck disable=SC2086
  "$BENCH" $command --sweep "$SWEEPS/dropout/$sweep.sweep" --list >list.txt 2>err.txt || fail "$sweep: $(cat err.txt)"
  [ "$(grep -c '^f32,backward' list.txt)" -eq 2 ] || fail "$sweep: not 2 rows: $(cat list.txt)"
done
pass "sdpa --help and --help document --dropout; the dropout sweeps parse (2 rows each)"

command -v python3 >/dev/null 2>&1 || { echo "no python3: the stand-in peers are not tried"; exit 0; }
# dropout_csv CSV P TORCH_COST COLUMNS...: the CSV's rows are at p = 0 and P, its
# header has COLUMNS side by side (the run command's later peers follow them), the row at P has the medians' ratio as
# attn_dropout_cost and TORCH_COST as torch_dropout_cost, the row at 0 none
dropout_csv() {
  python3 - "$@" <<'PY' || fail "$1: the dropout columns"
import csv, sys
path, p, torch_cost, *columns = sys.argv[1:]
rows = list(csv.DictReader(open(path)))
assert [r["dropout"] for r in rows] == ["0", p], rows
header = open(path).readline().strip().split(",")
first = header.index(columns[0])
assert header[first:first + len(columns)] == columns, header
base, drop = rows
assert base["attn_dropout_cost"] == "" and drop["torch_dropout_cost"] == torch_cost, drop
cost = float(drop["attn_median_ms"]) / float(base["attn_median_ms"])
assert abs(float(drop["attn_dropout_cost"]) - cost) < 1e-3 * cost, (cost, drop)
PY
}

mkdir -p engines
stand_in engines/torch_sdpa_peer.py "torch=9.9.9 python=fake numpy=fake" torch-lines.txt
cat >>engines/torch_sdpa_peer.py <<'PY'
    now, rounds = fields[17].split("/")
    if now != rounds:
        print("pending " + " ".join(fields), flush=True)
        continue
    median = "2.2e-3" if fields[-1] == "dropout=0.25" else "2.0e-3"
    print("result " + " ".join(fields) + f" {median} 1.5e-3 5 float32 1.0e-7 is_causal 1 F.sdpa", flush=True)
PY
stand_in engines/ort_sdpa_peer.py "onnxruntime=9.9.9 python=fake" ort-lines.txt
cat >>engines/ort_sdpa_peer.py <<'PY'
    print("result " + line.strip() + " 4.0e-3 3.0e-3 5 float32 2.0e-7 none 1 stand-in", flush=True)
PY
# shellcheck disable=SC2086
"$BENCH" sdpa $small --op backward --dropout 0,0.25 --rounds 2 --peers torch,ort --peer-dir engines \
  --torch-python python3 --csv drop.csv --json drop.json >drop.txt 2>err.txt \
  || fail "stand-in peers with --dropout: $(head -c 500 err.txt)"
grep -q '^# dropout: rows with p > 0 call attn_plan_set_dropout' drop.txt || fail "no dropout line in the header"
grep -q '| *drop *a/p0 *t/p0$' drop.txt || fail "no dropout columns in the table"
grep -Eq '^f32 +backward .*@p0 .*\| +0.25 +[0-9.]+ +1.100$' drop.txt \
  || fail "the p = 0.25 row: no @p0 check, no costs: $(grep '^f32' drop.txt)"
dropout_csv drop.csv 0.25 1.1000 dropout dropout_check attn_dropout_cost torch_dropout_cost
python3 - <<'PY' || fail "drop.csv/drop.json and the peers' lines"
import csv, json
base, drop = csv.DictReader(open("drop.csv"))
assert base["dropout_check"] == "" and drop["dropout_check"] == "at p=0", (base, drop)
assert drop["check"] == "passed" and drop["torch_median_ms"] == "2.2", drop
assert base["ort_median_ms"] == "4" and drop["ort_median_ms"] == "", (base, drop)
assert drop["ort_note"].startswith("an inference engine: no attention dropout"), drop
lines = [l.split() for l in open("torch-lines.txt")]
# one group: p = 0 and p = 0.25 interleaved round by round
assert [(l[17], l[-1]) for l in lines] == [("1/2", "1/2"), ("1/2", "dropout=0.25"),
                                           ("2/2", "2/2"), ("2/2", "dropout=0.25")], lines
assert all("dropout" not in l for l in open("ort-lines.txt")), "ort got a dropout row"
d = json.load(open("drop.json"))
assert [r["dropout"] for r in d["rows"]] == [0, 0.25], d["rows"]
PY
pass "stand-in peers with --dropout 0,0.25: the torch line's dropout=P, interleaved with p = 0; ort skips; check at p=0; the CSV's and JSON's dropout columns and costs"

# ---- attn-bench run (the projected plans): --dropout on training rows ------------------------
run_small="--T 16 --C 32 --NH 2 --B 1 --causal 1 --threads 1 --engine own --api plan --dtype f32
  --ceiling 0 --repeats 2 --warmup 0 --min-time 0 --progress none"
# shellcheck disable=SC2086
expect_status 2 "dropout is for training" $run_small --op forward --dropout 0.1 --peers none
# shellcheck disable=SC2086
expect_status 2 "dropout above 0 needs a plan" $run_small --api oneshot --op backward --dropout 0.1 \
  --peers none
stand_in fake_torch_run.py "torch=9.9.9 python=fake numpy=fake" torch-run-lines.txt
cat >>fake_torch_run.py <<'PY'
    median = "1.2e-3" if fields[-1].startswith("dropout=") else "1.0e-3"
    print("result " + " ".join(fields) + f" {median} 9.0e-4 5 float32", flush=True)
PY
# shellcheck disable=SC2086
"$BENCH" $run_small --op backward --dropout 0,0.1 --peers naive,torch --torch-script fake_torch_run.py \
  --csv run.csv --json run.json >run.txt 2>err.txt || fail "run --dropout: $(head -c 500 err.txt)"
grep -q '^# dropout: rows with p > 0 (plans, op backward) call attn_plan_set_dropout' run.txt \
  || fail "run: no dropout line in the header"
grep -Eq '^f32 +backward .*@p0 .*\| p=0.1 attn/p0 [0-9.]+ torch/p0 1.200$' run.txt \
  || fail "run: the p = 0.1 row has no @p0 check or no costs: $(grep '^f32' run.txt)"
dropout_csv run.csv 0.1 1.2000 dropout attn_dropout_cost torch_dropout_cost
python3 - <<'PY' || fail "run.csv and the torch peer's lines"
import csv
base, drop = csv.DictReader(open("run.csv"))
assert base["naive_median_ms"] != "" and drop["naive_median_ms"] == "", drop
assert drop["naive_note"].startswith("no attention dropout"), drop
# the twins are timed side by side (attn's own threads) in rounds: each
# line's round field is 1/R, and a peer that answers at once is asked no more
lines = [l.split() for l in open("torch-run-lines.txt")]
assert len(lines) == 2 and len(lines[0]) == 10 and lines[0][9].startswith("1/"), lines
assert lines[1][:10] == lines[0] and lines[1][10] == "dropout=0.10000000000000001", lines
PY
pass "run --dropout 0,0.1: the torch peer's round and dropout=P fields, naive skips, check at p=0, the CSV's dropout columns and costs"
head -n 2 run.csv >resume.csv # the row at p = 0 only: --resume measures the one at 0.1
# shellcheck disable=SC2086
"$BENCH" $run_small --op backward --dropout 0,0.1 --peers none --csv resume.csv --json none --resume \
  >resume.txt 2>err.txt || fail "run --dropout --resume: $(head -c 500 err.txt)"
[ "$(csv_rows resume.csv)" -eq 2 ] && [ "$(csv_field resume.csv 2 dropout)" = 0.1 ] \
  || fail "--resume with dropouts: $(cat resume.csv)"
pass "--resume tells the rows at p = 0 and p = 0.1 apart"

# the real torch peer's case (PyTorch 2.x from the peers' venv or python3, else skipped:
# Debian's python3-torch 1.13 has no scaled_dot_product_attention)
venv_python=$("$BENCH" sdpa --help | grep -A4 -- '--torch-python' \
  | sed -n 's/^ *default: \([^,]*\),.*/\1/p' | head -n 1)
for python in "$venv_python" python3; do
  [ -n "$python" ] && "$python" -c "import numpy, torch.nn.functional as F
F.scaled_dot_product_attention" 2>/dev/null && break
  python=""
done
[ -n "$python" ] || { echo "no PyTorch 2.x: the torch peer's dropout_p is not tried"; exit 0; }
PEERS_DIR="$PEERS_DIR" "$python" - <<'PY' || fail "the torch peer's case does not pass dropout_p"
import os, sys
sys.path.insert(0, os.environ["PEERS_DIR"])
import numpy, torch
import torch.nn.functional as F
import peer_common, sdpa_peer_cases, sdpa_peer_protocol
sdpa_peer_cases.bind(numpy, torch)
seen = []
sdpa = F.scaled_dot_product_attention
def fn(*args, **kwargs):
    seen.append(kwargs.get("dropout_p", 0.0))
    return sdpa(*args, **kwargs)
line = "f32 backward 1 4 2 16 16 8 8 1 0 none full warm bhsd call 0 1/1 dropout=0.25"
c = sdpa_peer_protocol.Config(line.split())
assert c.dropout == 0.25 and c.text == line, c.text
flush = sdpa_peer_protocol.Flush(1, False)
case = sdpa_peer_cases.CallCase(c, fn, True, 1, flush)
policy = peer_common.Policy(0, 2, 0.0, 2)
case.block(policy, True)
error, _ = case.check()
assert seen[:2] == [0.25, 0.25] and seen[-1] == 0.0, seen  # timed at p, checked at 0
assert error < 1e-5, error
try:
    sdpa_peer_protocol.Config(line.replace("backward", "forward").split())
    raise SystemExit("a forward with dropout was accepted")
except ValueError:
    pass
# attn-bench run's torch peer: the tenth field reaches its block's attention
sys.argv = [sys.argv[0]]
import torch_peer
shape = peer_common.parse_shape("f32 backward 1 1 8 16 2 8 0 dropout=0.10000000000000001".split())
assert shape.dropout == 0.1 and peer_common.shape_text(shape).endswith(" dropout=0.10000000000000001")
seen.clear()
torch_peer.F.scaled_dot_product_attention = fn
X, Wq, Wk, Wv = (torch.randn(*s) for s in ((1, 8, 16), (16, 16), (16, 16), (16, 16)))
torch_peer.attention(X, Wq, Wk, Wv, None, shape.NH, True, shape.dropout)
assert seen == [0.1], seen
PY
pass "the torch peers' training steps pass dropout_p=P (sdpa's case: its check runs at p = 0)"
