# The python peers without PyTorch: the numpy and numpy32 peers' columns
# (numpy32 keeps float32, the lesson's code promotes f32 under NumPy >= 2 and
# the table and the report say so), a stand-in torch script whose info/blas/
# impl lines must reach the header, the JSON and report.md, the FLOP counts
# and the ceiling's provenance in the header and the report, the threads
# each peer reports (its blas line's threads=N: the table's thr, the CSV's
# PEER_threads) and its share of the FMA peak, and --resume refusing a CSV of
# an attn-bench without the numpy32 columns.
PEERS="$(cd "$(dirname "$0")/../peers" && pwd)"
. "$(dirname "$0")/common.sh"

command -v python3 >/dev/null 2>&1 || { echo "skip: no python3"; exit 77; }

# A stand-in for torch_peer.py that speaks the protocol (peer_common.py):
# its header lines are what the real one prints about its build, with the
# --threads it was started with.
cat >fake_torch.py <<'PY'
import sys
threads = sys.argv[sys.argv.index("--threads") + 1]
print("info torch=9.9.9 python=fake numpy=fake", flush=True)
print("blas BLAS_INFO=mkl; MKL 2099.1; oneDNN (MKL-DNN) v9.9; CPU capability AVX512; parallel backend OpenMP; threads=" + threads, flush=True)
print("impl torch.nn.functional.scaled_dot_product_attention", flush=True)
print("ready", flush=True)
for line in iter(sys.stdin.readline, ""):
    fields = line.split()
    out = "float32" if fields[0] == "f32" else "float64"
    print("result " + " ".join(fields) + f" 1.0e-3 9.0e-4 5 {out}", flush=True)
PY

"$BENCH" --quick --peers numpy,numpy32,torch --torch-script fake_torch.py --T 16 --causal 0,1 \
  --csv peers.csv --json peers.json >out.txt 2>err.txt || fail "quick sweep failed: $(cat err.txt)"
if grep -q '^# numpy peer skipped' out.txt; then
  echo "skip: no python with numpy for the NumPy peers: $(grep '^# numpy peer skipped' out.txt)"
  exit 77
fi
grep -q '^# numpy32 peer: numpy=' out.txt || fail "no numpy32 peer header line"
grep -q '^#   computes: .*float32 throughout' out.txt || fail "numpy32 does not say it keeps float32"
grep -q '^#   BLAS: BLAS_INFO=mkl; MKL 2099.1; oneDNN (MKL-DNN) v9.9; CPU capability AVX512' out.txt \
  || fail "the torch peer's build line is not in the header"
grep -q '^# FLOP counts: forward 3\*2\*B\*T\*C\*D' out.txt || fail "no FLOP counts header line"
grep -q "^# ceiling: square cblas_sgemm/cblas_dgemm of attn's BLAS (.* core .*) on .*not the CPU's theoretical peak" \
  out.txt || fail "no provenance of the ceiling in the header"
pass "header lines: numpy32 peer, torch build (BLAS_INFO, MKL, oneDNN, CPU capability), FLOP counts, ceiling provenance"

python3 - <<'PY' || fail "CSV/JSON peer columns"
import csv, json
rows = list(csv.DictReader(open("peers.csv")))
assert len(rows) == 8, len(rows)
for r in rows:
    f32_forward = r["dtype"] == "f32" and r["op"] == "forward"
    assert bool(r["numpy32_median_ms"]) == f32_forward, r
    assert bool(r["speedup_vs_numpy32"]) == f32_forward, r
    assert bool(r["numpy_median_ms"]) == (r["op"] == "forward"), r
    assert r["torch_median_ms"] == "1", r  # the stand-in's 1 ms
    assert r["torch_threads"] == r["threads"] == r["attn_threads"], r  # what it reports
    assert r["numpy_threads"] in (r["threads"], ""), r  # "" when NumPy cannot say
    assert abs(float(r["torch_peak_fraction"]) * float(r["fma_peak_gflops"]) -
               float(r["torch_gflops"])) < 1e-2 * float(r["torch_gflops"]), r
    if f32_forward:
        assert r["numpy32_out_dtype"] == "float32", r
        assert r["numpy_out_dtype"] in ("float32", "float64"), r
    elif r["op"] == "forward":
        assert r["numpy32_note"].startswith("f64: the lesson's code keeps float64"), r
d = json.load(open("peers.json"))
peers = {p["name"]: p for p in d["peers"]}
assert list(peers) == ["naive", "numpy", "numpy32", "torch", "python", "ort", "openvino",
                       "ggml"], list(peers)
assert peers["python"]["status"] == "not asked for"  # only when named
assert peers["numpy32"]["status"] == "ran" and "float32 throughout" in peers["numpy32"]["impl"]
assert peers["torch"]["info"] == "torch=9.9.9 python=fake numpy=fake", peers["torch"]
assert "MKL 2099.1" in peers["torch"]["blas"] and "oneDNN (MKL-DNN) v9.9" in peers["torch"]["blas"]
assert peers["naive"]["status"] == "not asked for"
PY
pass "numpy32 columns on the f32 forwards only (float32), a note on f64; torch's build in the JSON; the peers' threads and FMA peak shares"

# The table: each peer's median, then the threads it reports (torch: the row's).
awk '/^dtype / { for (i = 1; i <= NF; ++i) if ($i == "torch_ms") col = i; next }
     col && /^f[36][24] / { if ($(col + 1) != $7) bad = 1; rows++ }
     END { exit bad || rows != 8 }' out.txt || fail "the table's torch thr is not the row's threads"
pass "the table's thr after torch_ms is the count the stand-in reports, the row's"

# The lesson's code under NumPy >= 2: f32 rows computed in float64, marked.
promoted=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
  $c["dtype"] == "f32" && $c["numpy_out_dtype"] == "float64" { n++ } END { print n + 0 }' peers.csv)
if [ "$promoted" -gt 0 ]; then
  [ "$(grep -c '^f32   forward .*x\*' out.txt)" -eq "$promoted" ] || fail "the table does not mark every promoted ratio x*"
  grep -q '^# x\*: .*promotes float32 scores to float64' out.txt || fail "no footnote for x*"
  pass "NumPy >= 2: the $promoted promoted f32 ratios are marked x*, with a footnote"
else
  pass "NumPy < 2: the lesson's code stays float32, nothing to mark"
fi

# Peers between attn's rounds: two configurations of one shape on attn's own
# threads are timed side by side in rounds, and a stand-in that answers
# pending until its last round is asked every round of the shape, once, and
# its last answer's numbers (every round's samples) reach the CSV.
stand_in fake_rounds.py "torch=9.9.9 python=fake numpy=fake" rounds-lines.txt
cat >>fake_rounds.py <<'PY'
    done, rounds = (int(v) for v in fields[9].split("/"))
    if done < rounds:
        print("pending " + " ".join(fields), flush=True)
    else:
        print("result " + " ".join(fields) + " 3.0e-3 2.0e-3 %d float32" % (2 * rounds), flush=True)
PY
"$BENCH" --T 16 --C 32 --NH 2 --B 1 --causal 1 --threads 1 --engine own --api plan,oneshot \
  --dtype f32 --op forward --ceiling 0 --repeats 2 --warmup 0 --min-time 0 --progress none \
  --peers torch --torch-script fake_rounds.py --csv rounds.csv --json none >rounds.txt 2>&1 \
  || fail "rounds: $(cat rounds.txt)"
python3 - <<'PY' || fail "the peer's rounds"
import csv
lines = [l.split() for l in open("rounds-lines.txt")]
rounds = len(lines)
assert rounds > 1, lines
assert [l[9] for l in lines] == [f"{r}/{rounds}" for r in range(1, rounds + 1)], lines
assert all(l[:9] == "f32 forward 1 1 16 32 2 16 0".split() for l in lines), lines
rows = list(csv.DictReader(open("rounds.csv")))
assert len(rows) == 2 and all(r["torch_median_ms"] == "3" for r in rows), rows
assert all(r["torch_repeats"] == str(2 * rounds) for r in rows), rows
PY
pass "the run command times its peers in rounds between attn's (ROUND/ROUNDS, pending, then the numbers)"

"$BENCH" report --csv peers.csv --out rep >rep.txt 2>&1 || fail "report: $(cat rep.txt)"
grep -q '^- ceiling: .*`cblas_sgemm` / `cblas_dgemm` (core `.*`) on .*not the CPU.s theoretical peak' rep/report.md \
  || fail "report.md does not say where the ceiling comes from"
grep -q '^- FLOP counts .*forward 3\*2\*B\*T\*C\*D' rep/report.md || fail "report.md has no FLOP counts"
grep -q '| × numpy32 |' rep/report.md || fail "report.md has no numpy32 column"
grep -q '| torch | ran | torch=9.9.9 python=fake numpy=fake | BLAS_INFO=mkl; MKL 2099.1;' rep/report.md \
  || fail "report.md's peers table lacks torch's build"
if [ "$promoted" -gt 0 ]; then
  [ "$(grep -c '× †' rep/report.md)" -eq "$promoted" ] || fail "report.md does not mark every promoted ratio"
  grep -q '^† .*promotes the float32 scores to float64' rep/report.md || fail "report.md has no † footnote"
fi
pass "report.md: ceiling provenance, FLOP counts, numpy32 column, torch's build, promoted ratios marked"

"$BENCH" --quick --peers numpy32 --T 16 --dtype f32 --op forward --json none --csv only.csv \
  >only.txt 2>&1 || fail "--peers numpy32 alone: $(cat only.txt)"
if ! grep -q '^# numpy peer: not asked for' only.txt || ! grep -q '^# numpy32 peer: numpy=' only.txt; then
  fail "--peers numpy32 did not run numpy32 alone"
fi
pass "--peers numpy32 runs it without the numpy peer"

# A CSV of an attn-bench before numpy32 (its columns removed): resume refuses
# it and says why; report still reads it.
python3 - <<'PY' || fail "cannot write the old CSV"
import csv
rows = list(csv.reader(open("peers.csv")))
keep = [i for i, name in enumerate(rows[0]) if "numpy32" not in name]
csv.writer(open("old.csv", "w", newline=""), lineterminator="\n").writerows(
    [[row[i] for i in keep] for row in rows])
PY
cp old.csv old-kept.csv
expect_status 1 "old.csv was not written by this attn-bench .*lacks 12 of this attn-bench's columns \(numpy32_repeats, \.\.\.\)" \
  --quick --peers none --csv old.csv --resume
cmp -s old.csv old-kept.csv || fail "--resume changed the refused CSV"
"$BENCH" report --csv old.csv --out old-rep >/dev/null 2>&1 || fail "report refuses an older run's CSV"
[ "$(grep -c '^| f[36][24] |' old-rep/report.md)" -eq 8 ] || fail "the older CSV's report lacks rows"
pass "--resume refuses a CSV without the numpy32 columns and leaves it alone; report reads it"

python=$(python3 -c 'import json; print(json.load(open("peers.json"))["peers"][1]["python"])')
out=$("$python" "$PEERS/numpy_peer.py" --describe --float32) || fail "numpy_peer.py --describe failed"
case "$out" in
  *ready*) fail "--describe went on to serve shapes" ;;
  *"impl the lesson's self_attention per head with sqrt(hs) as a float32 scalar"*) ;;
  *) fail "numpy_peer.py --describe --float32: $out" ;;
esac
pass "numpy_peer.py --describe prints its header lines and stops"

# --help documents the peers and where their interpreters are looked for.
expect_status 0 "numpy32 numpy_peer.py --float32" --help
expect_status 0 "default: /.*/\.venv-peers/bin/python,python3,/usr/bin/python3" --help
expect_status 0 "\./attn\.sh peers" --help
expect_status 2 "--peers: 'numpy64' is not a list of naive, numpy, numpy32, torch, python, ort, openvino, ggml, all, none" \
  --peers numpy64

# The inference engines on the projected heads (ort_peer.py, openvino_peer.py,
# ggml_peer.py)
# through stand-ins in --peer-dir: their result lines' further words (the
# check's error, the mask, the threads, the kernel) reach the CSV's
# PEER_check_error and PEER_kernel columns, an unsupported shape its note, an
# engine that cannot be imported is skipped with its reason, and nothing
# else of a row moves.
mkdir -p engines
for engine in ort openvino ggml; do
  stand_in "engines/${engine}_peer.py" "$engine=7.7.7 python=fake numpy=fake" "$engine-lines.txt"
  cat >>"engines/${engine}_peer.py" <<PY
    if fields[0] != "f32" or fields[1] != "forward":
        print("unsupported " + " ".join(fields) + " f32 forward only", flush=True)
    elif "/" in fields[-1] and len(set(fields[-1].split("/"))) == 2:  # not the last round
        print("pending " + " ".join(fields), flush=True)
    else:
        print("result " + " ".join(fields) + " 2.0e-3 1.5e-3 7 float32 3.5e-07 causal 1"
              + " $engine-kernel-" + fields[2], flush=True)
PY
done
"$BENCH" --quick --peers ort,openvino,ggml --peer-dir engines --T 16 --causal 0,1 --csv engines.csv \
  --json engines.json >engines.txt 2>&1 || fail "the engines' stand-ins: $(tail -3 engines.txt)"
grep -q '^# ort peer: ort=7.7.7 ' engines.txt || fail "no ort peer header line"
grep -q '^# openvino peer: openvino=7.7.7 ' engines.txt || fail "no openvino peer header line"
grep -q '^# ggml peer: ggml=7.7.7 ' engines.txt || fail "no ggml peer header line"
python3 - <<'PY' || fail "the engines' CSV/JSON columns"
import csv, json
rows = list(csv.DictReader(open("engines.csv")))
assert len(rows) == 8, len(rows)
for r in rows:
    f32_forward = r["dtype"] == "f32" and r["op"] == "forward"
    for engine in ("ort", "openvino", "ggml"):
        if f32_forward:
            assert r[f"{engine}_median_ms"] == "2", r
            assert r[f"{engine}_check_error"] == "3.500e-07", r
            assert r[f"{engine}_kernel"] == f"{engine}-kernel-{r['causal']}", r
            assert r[f"{engine}_threads"] == "1", r  # the result line's THREADS
            assert r[f"speedup_vs_{engine}"], r
        else:
            assert not r[f"{engine}_median_ms"] and not r[f"{engine}_kernel"], r
            assert r[f"{engine}_note"] == "f32 forward only", r
    assert not r["torch_median_ms"] and not r["torch_check_error"], r
peers = {p["name"]: p for p in json.load(open("engines.json"))["peers"]}
assert peers["ort"]["status"] == "ran" and "7.7.7" in json.dumps(peers["ort"]), peers["ort"]
PY
pass "ort, openvino and ggml stand-ins: check error, kernel, threads and notes in the CSV and JSON"

printf 'print("unavailable ort cannot be imported: No module named onnxruntime", flush=True)\n' \
  >engines/ort_peer.py
"$BENCH" --quick --peers ort --peer-dir engines --T 16 --causal 0 --dtype f32 --op forward \
  --csv none-ort.csv --json none >none-ort.txt 2>&1 || fail "a missing engine stopped the run"
grep -q '^# ort peer skipped: .*No module named onnxruntime' none-ort.txt \
  || fail "a missing engine is not skipped with its reason: $(grep ort none-ort.txt)"
pass "an engine that cannot be imported is skipped with its reason"

# The engines' own check (engine_projected_cases.reference_error) against
# an independent float32 computation of the projected heads: small on the
# right answer, above the 1e-4 tolerance when a checked row is off.
python3 - "$PEERS" <<'PY' || fail "the engines' projected reference"
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import engine_projected_cases as projected
import peer_common
for causal, wo in ((1, 1), (0, 0)):
    shape = peer_common.parse_shape(f"f32 forward {causal} 2 40 24 3 8 {wo}".split())
    X, Wq, Wk, Wv, Wo, _ = arrays = peer_common.make_inputs(np, shape, 5)
    def heads(W):
        return (X @ W).reshape(2, 40, 3, 8).transpose(0, 2, 1, 3)
    S = heads(Wq) @ heads(Wk).transpose(0, 1, 3, 2) / np.float32(np.sqrt(8))
    if causal:
        S = np.where(np.tri(40, dtype=bool), S, -np.inf)
    P = np.exp(S - S.max(-1, keepdims=True))
    Y = ((P / P.sum(-1, keepdims=True)) @ heads(Wv)).transpose(0, 2, 1, 3).reshape(2, 40, 24)
    out = Y @ Wo if wo else Y
    error = projected.reference_error(shape, arrays, out)
    assert error < 1e-5, error
    wrong = out.copy()
    wrong[1, 39, 2] += 1e-2 * np.abs(out).max()
    assert projected.reference_error(shape, arrays, wrong) > 1e-4
    wrong[1, 39, 2] = np.nan
    assert projected.reference_error(shape, arrays, wrong) == float("inf")
PY
pass "the engines' projected reference: within 1e-5 of an independent computation, a wrong row fails"
