# attn-bench sdpa without PyTorch: the quick sweep passes its checks and
# writes one timed row per configuration to the CSV and the JSON; engines,
# hs_v != hs, cold caches, lengths, both layouts and decode loops on small
# explicit sizes; bad arguments exit 2; the target sweeps parse; a stand-in
# peer script's lines reach the header, the CSV and the JSON, as the torch
# and the python peer, in one round and in several; --help documents the mode.
TARGETS="$(cd "$(dirname "$0")/../targets" && pwd)"
PEERS="$(cd "$(dirname "$0")/../peers" && pwd)"
. "$(dirname "$0")/common.sh"

# ---- the quick sweep, no peer ----------------------------------------------------------
"$BENCH" sdpa --quick --peers none --csv quick.csv --json quick.json --progress none \
  >out.txt 2>err.txt || fail "sdpa --quick: $(head -c 500 err.txt)"
"$BENCH" sdpa --quick --peers none --list >list.txt || fail "sdpa --quick --list"
configs=$(sed -n 's/^# \([0-9]*\) configurations$/\1/p' list.txt)
[ -n "$configs" ] && [ "$configs" -gt 100 ] || fail "--quick lists $configs configurations"
[ "$(csv_rows quick.csv)" -eq "$configs" ] || fail "quick.csv has $(csv_rows quick.csv) rows, --list $configs"
awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
         $col["status"] != "timed" || $col["check"] != "passed" || $col["attn_median_ms"] == "" { bad = 1 }
         END { exit bad }' quick.csv || fail "a quick row is not timed and passed"
grep -q '^# CPU: ' out.txt || fail "no CPU model in the header"
grep -q '^# bandwidth: [0-9]* threads\{0,1\}: [0-9.]* GB/s' out.txt || fail "no bandwidth line"
grep -q '^# ceiling: sgemm n=128' out.txt || fail "no ceiling line"
grep -q '^# torch peer: not asked for' out.txt || fail "no peer line"
grep -q '^# python peer: not asked for' out.txt || fail "no python peer line"
grep -q '^dtype op .* attn_ms athr .* peak% blas% .*bw%$' out.txt || fail "no table header"
grep -q '^# FMA peak: f32, [0-9]* threads\{0,1\}: [0-9.]* GFLOP/s' out.txt || fail "no FMA peak line"
pass "sdpa --quick --peers none: $configs configurations, every one checked and timed"

awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
         { seen[$col["layout"] "/" $col["scenario"]] = 1 }
         END { exit !(seen["bshd/call"] && seen["bhsd/call"] && seen["bshd/decode-loop"] && seen["bhsd/decode-loop"]) }' \
  quick.csv || fail "the quick sweep lacks a layout or a scenario"
pass "the quick sweep has both layouts, calls and decode loops"

header=$(head -n 1 quick.csv)
[ "$(echo "$header" | cut -d, -f1-19)" = "dtype,op,causal,window,mask,engine,threads,cache,B,NH,NH_kv,Tq,Tk,hs,hs_v,lengths,layout,scenario,steps" ] \
  || fail "the CSV's key columns are not the 16 old ones, then layout, scenario, steps: $header"
for column in dtype op causal window mask engine threads cache B NH NH_kv Tq Tk hs hs_v lengths \
    layout scenario steps python_median_ms python_overhead_us python_check_error python_note \
    engine_threads visible_pairs flops kv_bytes check_error attn_median_ms attn_gflops attn_kv_gbps \
    bandwidth_gbps attn_bandwidth_fraction ceiling_gflops attn_ceiling_fraction torch_median_ms \
    speedup_vs_torch torch_check_error torch_mask torch_note fma_peak_gflops attn_peak_fraction \
    attn_threads torch_threads torch_kernel torch_version ort_median_ms ort_threads ort_kernel \
    ort_version ort_check_error speedup_vs_ort openvino_median_ms openvino_threads openvino_kernel \
    ggml_median_ms ggml_threads ggml_kernel ggml_check_error ggml_note; do
  case ",$header," in *",$column,"*) ;; *) fail "CSV has no column $column" ;; esac
  "$BENCH" sdpa --help | grep -q "^  $column " || fail "--help does not document CSV column $column"
done
pass "the CSV columns are there and documented in --help"

if command -v python3 >/dev/null 2>&1; then
  python3 - "$configs" <<'PY' || fail "quick.json"
import csv, json, sys
d = json.load(open("quick.json"))
assert d["tool"] == "attn-bench" and d["mode"] == "sdpa", d["mode"]
for key in ("machine", "ceiling", "fma_peak", "bandwidth", "peers", "columns", "rows", "flop_count"):
    assert key in d, key
assert d["machine"]["cpu_model"], d["machine"]
assert d["bandwidth"]["entries"][0]["gbps"] > 0, d["bandwidth"]
assert len(d["rows"]) == int(sys.argv[1]), len(d["rows"])
rows = list(csv.DictReader(open("quick.csv")))
for r, j in zip(rows, d["rows"]):
    assert float(r["flops"]) == j["flops"] and r["lengths"] == str(j["lengths"]), (r, j)
    # the FLOP count: 2*(hs+hs_v) per visible pair forward, 2*(4*hs+3*hs_v) forward+backward
    per = 2 * (j["hs"] + j["hs_v"]) if j["op"] == "forward" else 2 * (4 * j["hs"] + 3 * j["hs_v"])
    assert j["flops"] == j["visible_pairs"] * per, j
assert d["peers"][0]["name"] == "torch" and d["peers"][0]["status"] == "not asked for"
assert d["peers"][1]["name"] == "python" and d["peers"][1]["status"] == "not asked for"
assert [p["name"] for p in d["peers"]] == ["torch", "python", "ort", "openvino", "ggml"], d["peers"]
assert d["fma_peak"]["entries"][0]["gflops"] > 0, d["fma_peak"]
assert d["settings"]["rounds"] == 1, d["settings"]
PY
  pass "quick.json: mode sdpa, machine, ceiling, bandwidth, peer, the CSV's rows; FLOPs from the pairs"
fi

# ---- small explicit sizes ------------------------------------------------------------------
# B=3 with lengths 5/0/17 (an empty sequence), GQA 6/2, hs_v != hs, both
# engines, a causal window, f64 backward, cold caches
"$BENCH" sdpa --peers none --B 3 --NH 6 --NH-kv 2,6 --Tq 1,4 --Tk 17 --hs 8 --hs-v 12 \
  --lengths full,5/0/17,9 --window 0,3 --mask none,padding --causal 1 --op forward,backward \
  --dtype f64 --engine blas,own --threads 1 --cache warm,cold --layout bshd,bhsd --bandwidth-mib 4 --ceiling 64,48 \
  --repeats 1 --warmup 0 --min-time 0 --csv small.csv --json none --progress none \
  >small.txt 2>err.txt || fail "small explicit sizes: $(head -c 500 err.txt)"
awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
         $col["status"] != "timed" || $col["check"] != "passed" { bad = 1 }
         $col["engine"] == "blas" && $col["engine_threads"] != 0 { bad = 1 }
         $col["engine"] == "own" && $col["engine_threads"] != 1 { bad = 1 }
         $col["hs_v"] != 12 { bad = 1 }
         END { exit bad || NR != 1 + 2*2*3*2*2*2*2*2*2 }' small.csv \
  || fail "small.csv: a row failed, wrong engine_threads or hs_v, or not $((2*2*3*2*2*2*2*2*2)) rows"
pass "lengths (one empty sequence), GQA and MHA, hs_v != hs, windows, padding masks, engines blas/own, cold caches, both layouts"

# decode loops: 5 steps from Tk = 17 filled slots, both layouts, GQA and MHA,
# f32 and f64, cold caches, 3 rounds (a pass each: 15 samples)
"$BENCH" sdpa --peers none --B 2 --NH 6 --NH-kv 2,6 --Tq 1 --Tk 17 --hs 8 --hs-v 12 \
  --scenario decode-loop --steps 5 --layout bshd,bhsd --dtype f32,f64 --cache warm,cold \
  --rounds 3 --bandwidth-mib 4 --ceiling 0 --repeats 1 --warmup 1 --min-time 0 \
  --csv loop.csv --json none --progress none >loop.txt 2>err.txt \
  || fail "decode loops: $(head -c 500 err.txt)"
awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
         $col["status"] != "timed" || $col["check"] != "passed" { bad = 1 }
         $col["scenario"] != "decode-loop" || $col["steps"] != 5 || $col["attn_repeats"] != 15 { bad = 1 }
         # the mean step attends over Tk + (steps + 1) / 2 = 20 keys
         $col["visible_pairs"] != 2 * 6 * 20 { bad = 1 }
         $col["kv_bytes"] != 2 * 20 * $col["NH_kv"] * 20 * ($col["dtype"] == "f32" ? 4 : 8) { bad = 1 }
         END { exit bad || NR != 1 + 2*2*2*2 }' loop.csv \
  || fail "loop.csv: a loop failed, wrong steps, samples, pairs or bytes, or not 16 rows"
grep -Eq ' (bshd|bhsd) +5 \|' loop.txt || fail "the table does not show the layout and the steps"
pass "decode loops in both layouts: checked, 3 rounds of 5 steps, the mean step's pairs and bytes"

# half precision (attn.h's bf16 and f16): forward and backward, masks,
# lengths, both layouts, decode loops; each passes its check against attn.h's
# bound, the CSV has the dtype, 2-byte K+V, its own tolerances, and the share
# of peak against the bf16 dot product (bf16, where the CPU has it) or f32's
"$BENCH" sdpa --peers none --B 2 --NH 4 --NH-kv 2 --Tq 1,5 --Tk 13 --hs 8 --hs-v 12 \
  --lengths full,4/13 --mask none,full --causal 1 --window 0,3 --op forward,backward \
  --dtype f32,bf16,f16 --layout bshd,bhsd --threads 1 --engine own --bandwidth-mib 4 --ceiling 64,48 \
  --repeats 1 --warmup 0 --min-time 0 --csv half.csv --json half.json --progress none \
  >half.txt 2>err.txt || fail "bf16, f16: $(head -c 500 err.txt)"
"$BENCH" sdpa --peers none --B 2 --NH 4 --NH-kv 2 --Tq 1 --Tk 13 --hs 8 --scenario decode-loop \
  --steps 3 --dtype bf16,f16 --layout bshd,bhsd --threads 1 --engine own --bandwidth-mib 0 --ceiling 0 \
  --repeats 1 --warmup 0 --min-time 0 --csv half-loop.csv --json none --progress none \
  >half-loop.txt 2>err.txt || fail "bf16, f16 decode loops: $(head -c 500 err.txt)"
grep -Eq '^bf16 +backward ' half.txt && grep -Eq '^f16 +forward ' half.txt || fail "no bf16/f16 rows in the table"
if command -v python3 >/dev/null 2>&1; then
  python3 - <<'PY' || fail "half.csv/half.json"
import csv, json
rows = list(csv.DictReader(open("half.csv"))) + list(csv.DictReader(open("half-loop.csv")))
assert {r["dtype"] for r in rows} == {"f32", "bf16", "f16"}, {r["dtype"] for r in rows}
assert len(rows) == 3 * 2 * 2 * 2 * 2 * 2 * 2 + 2 * 2, len(rows)
record = json.load(open("half.json"))
peak = record["fma_peak"]
on_tiles = peak.get("amx_bf16") and record["machine"]["simd_kernel"] == "amx"
kinds = {e["kind"]: e["gflops"] for e in peak["entries"] if e["threads"] == 1}
for r in rows:
    assert r["status"] == "timed" and r["check"] == "passed", r
    assert float(r["check_error"]) <= float(r["check_tolerance"]), r
    size = {"f32": 4, "bf16": 2, "f16": 2}[r["dtype"]]
    keys = 13 + 2 if r["scenario"] == "decode-loop" else None  # the loop's mean step: Tk + (3+1)/2
    if keys:
        assert float(r["kv_bytes"]) == 2 * keys * 2 * (8 + 8) * size, r
    if r["dtype"] == "f32":
        continue
    u = 2.0 ** -8 if r["dtype"] == "bf16" else 2.0 ** -11
    if r["check_worst"] in ("dQ", "dK", "dV"):  # 1e-3 + u
        assert abs(float(r["check_tolerance"]) - (1e-3 + u)) < 1e-3 * (1e-3 + u), r
    else:  # attn.h's bound over max|ref|: at least u
        assert float(r["check_tolerance"]) >= u * (1 - 1e-3), r
    if r["scenario"] == "call":  # half.csv's rows: the peak of half.json
        if r["dtype"] == "bf16" and on_tiles:  # the library's bf16 products on AMX
            want = kinds["amx-bf16"]
        else:
            want = kinds["bf16-dot"] if r["dtype"] == "bf16" and peak["bf16_dot"] else kinds["f32"]
        assert abs(float(r["fma_peak_gflops"]) - want) <= 1e-3 * want, (r, kinds)
PY
fi
pass "bf16 and f16: forward, backward, masks, lengths, windows, layouts, decode loops checked against attn.h's bound; the CSV's dtype, 2-byte K+V, tolerances and peak"

# a large-enough configuration for the sampled check
"$BENCH" sdpa --peers none --B 3 --NH 4 --NH-kv 1 --Tq 400 --Tk 600 --hs 64 --lengths 500/600/240 \
  --op backward --dtype f32 --check-rows 8 --repeats 1 --warmup 0 --min-time 0 --ceiling 0 \
  --bandwidth-mib 0 --csv sampled.csv --json none --progress none >sampled.txt 2>err.txt \
  || fail "sampled check: $(head -c 500 err.txt)"
awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
         $col["check_sampled"] != 1 || $col["check_rows"] != 64 || $col["check"] != "passed" { bad = 1 }
         END { exit bad }' sampled.csv || fail "the large configuration was not checked on a sample"
grep -q '^# bandwidth: not measured' sampled.txt || fail "--bandwidth-mib 0 is not said"
pass "a large configuration is checked on a sample (2 sequences x 4 heads x 8 rows)"

# ---- bad arguments and left-out combinations -------------------------------------------------
expect_status 2 "no configuration to run: a --lengths item with neither 1 nor B lengths" \
  sdpa --B 2 --lengths 1/2/3 --Tk 8 --peers none
expect_status 2 "no configuration to run: a key length above Tk" sdpa --lengths 9 --Tk 8 --peers none
expect_status 2 "no configuration to run: NH not a multiple of NH-kv" sdpa --NH 3 --NH-kv 2 --peers none
expect_status 2 "no configuration to run: a decode loop with Tq other than 1" \
  sdpa --scenario decode-loop --Tq 4 --peers none
expect_status 2 "no configuration to run: a decode loop with lengths, a mask, a window or backward" \
  sdpa --scenario decode-loop --Tq 1 --op backward --peers none
expect_status 2 "--layout: 'bsdh' is not a list of bshd, bhsd" sdpa --layout bsdh
expect_status 2 "--dtype: 'f8' is not a list of f32, f64, bf16, f16" sdpa --dtype f8
expect_status 2 "--peers: 'numpy' is not a list of torch, python, ort, openvino, ggml, none" sdpa --peers numpy
expect_status 2 "--rounds" sdpa --rounds 0
expect_status 2 "--mask: 'causal' is not a list of none, padding, full" sdpa --mask causal
expect_status 2 "--lengths: 'x' in '4/x' is not a whole number" sdpa --lengths 4/x
expect_status 2 "--cache cold reads the bandwidth buffer" sdpa --cache cold --bandwidth-mib 0
expect_status 2 "unknown option '--T'" sdpa --T 16
"$BENCH" sdpa --NH 4,6 --NH-kv 4 --Tq 1 --Tk 8 --list >left.txt || fail "--list with a left-out combination"
grep -q '^# left out: 1 combinations: NH not a multiple of NH-kv' left.txt || fail "no left-out line"
pass "left-out combinations are counted"

for sweep in "$TARGETS"/sdpa-*.sweep; do
  "$BENCH" sdpa --sweep "$sweep" --list >list.txt 2>err.txt || fail "$sweep: $(cat err.txt)"
  grep -q '^# [1-9][0-9]* configurations$' list.txt || fail "$sweep lists no configuration"
done
pass "the target sweeps (bench/targets/sdpa-*.sweep) parse"

# ---- help -------------------------------------------------------------------------------------
expect_status 0 "bottom-right alignment" sdpa --help
expect_status 0 "enable_gqa=True" help sdpa
expect_status 0 "sdpa +attention on given Q, K, V" help
"$BENCH" sdpa --help >help.txt
for topic in "FLOP COUNTS" "8\*hs \+ 6\*hs_v" "BANDWIDTH" "BYTES" "mask_ld = 0|mask_sh = mask_ld = 0" \
    "torch.__config__" "openblas_set_num_threads" "--lengths" "--engine" "--cache" "LAYOUTS" \
    "sh = T\*hs, sb = NH\*T\*hs" "DECODE LOOP" "k_cache\[:, :, S-1\]" "--rounds" \
    "attn.torch.scaled_dot_product_attention" "HALF PRECISION" "attn_sdpa_forward_bf16" \
    "u \|x\| \+ \(u_P \+ 4 g\) max_j \|V_j\|" "torch.bfloat16"; do
  grep -Eq -- "$topic" help.txt || fail "sdpa --help does not mention $topic"
done
pass "sdpa --help documents the counts, the bandwidth, the masks, the peer and the options"

# ---- a stand-in torch peer (the protocol, without PyTorch) ------------------------------------
command -v python3 >/dev/null 2>&1 || { echo "no python3: the stand-in peer is not tried"; exit 0; }
cat >fake_torch.py <<'PY'
import sys
attn = "--function attn" in " ".join(sys.argv)  # the python peer
print("info torch=9.9.9 python=fake numpy=fake" + (" attn=fake" if attn else ""), flush=True)
print("blas BLAS_INFO=mkl; MKL 2099.1; oneDNN (MKL-DNN) v9.9; CPU capability AVX512; threads=1", flush=True)
print("impl F.scaled_dot_product_attention (stand-in)", flush=True)
print("ready", flush=True)
for line in iter(sys.stdin.readline, ""):
    fields = line.split()
    if not attn:
        open("torch-lines.txt", "a").write(line)
    if fields[12] != "full":
        print("unsupported " + " ".join(fields) + " no lengths here", flush=True)
        continue
    now, rounds = fields[17].split("/")
    if now != rounds:
        print("pending " + " ".join(fields), flush=True)
        continue
    out = {"f32": "float32", "f64": "float64", "bf16": "bfloat16", "f16": "float16"}[fields[0]]
    median = "3.0e-3" if attn else "2.0e-3"
    print("result " + " ".join(fields) + f" {median} 1.5e-3 5 {out} 1.0e-7 is_causal 1 F.sdpa", flush=True)
PY
# the same script as both peers, in 3 rounds ("pending" twice, then the
# numbers), both layouts interleaved; one measurement for both engines; an
# unsupported note
ATTN_NUM_THREADS=1 "$BENCH" sdpa --torch-script fake_torch.py --torch-python python3 --attn-python python3 \
  --peers torch,python --threads 1 --rounds 3 --layout bshd,bhsd --B 2 --NH 4 --NH-kv 2 --Tq 1 --Tk 16 --hs 8 \
  --lengths full,3/16 --scenario call,decode-loop --steps 2 --engine auto,own --repeats 3 \
  --warmup 0 --min-time 0 --ceiling 0 --bandwidth-mib 4 --csv peer.csv --json peer.json \
  --progress none >peer.txt 2>err.txt || fail "stand-in peer run: $(head -c 500 err.txt)"
grep -q '^# torch peer: torch=9.9.9 python=fake numpy=fake; python3 (threads 1)' peer.txt \
  || fail "the peer's info line is not in the header"
grep -q '^# python peer: torch=9.9.9 python=fake numpy=fake attn=fake; python3 (threads 1)' peer.txt \
  || fail "the python peer's info line is not in the header"
grep -q '^#   build: BLAS_INFO=mkl; MKL 2099.1' peer.txt || fail "the peer's build line is not in the header"
grep -q '^dtype op .* xtorch | *py_ms *+us$' peer.txt || fail "no python columns in the table"
grep -Eq '^f32 .* \| +2 +1 +[0-9.]+x \| ' peer.txt || fail "the torch peer's threads are not in the table"
python3 - <<'PY' || fail "peer.csv/peer.json"
import csv, json
rows = list(csv.DictReader(open("peer.csv")))
assert len(rows) == 12, len(rows)
# the layouts of a shape are measured round by round side by side
calls = [l.split()[14] + " " + l.split()[17] for l in open("torch-lines.txt")
         if l.split()[12] == "full" and l.split()[15] == "call"]
assert calls == ["bshd 1/3", "bhsd 1/3", "bshd 2/3", "bhsd 2/3", "bshd 3/3", "bhsd 3/3"], calls
for r in rows:
    if r["lengths"] == "full":
        assert r["torch_median_ms"] == "2" and r["torch_mask"] == "is_causal", r
        assert abs(float(r["speedup_vs_torch"]) - 2.0 / float(r["attn_median_ms"])) < 1e-3 * float(r["speedup_vs_torch"]), r
        assert r["torch_check_error"] == "1.000e-07" and r["python_check_error"] == "1.000e-07", r
        assert r["python_median_ms"] == "3", r
        overhead = (3.0 - float(r["attn_median_ms"])) * 1e3
        assert abs(float(r["python_overhead_us"]) - overhead) < 1e-3 * abs(overhead), r
        # attn: 3 rounds of ceil(3/3) calls, or 3 passes of 2 steps
        assert r["attn_repeats"] == ("6" if r["scenario"] == "decode-loop" else "3"), r
    else:
        assert r["torch_median_ms"] == "" and r["torch_note"] == "no lengths here", r
        assert r["python_median_ms"] == "" and r["python_note"] == "no lengths here", r
d = json.load(open("peer.json"))
assert [p["name"] for p in d["peers"]][:2] == ["torch", "python"], d["peers"]
p = d["peers"][0]
assert p["status"] == "ran" and p["info"] == "torch=9.9.9 python=fake numpy=fake" and p["measured"] == 4, p
assert d["peers"][1]["status"] == "ran" and d["peers"][1]["measured"] == 4, d["peers"][1]
assert d["settings"]["rounds"] == 3, d["settings"]
PY
pass "a stand-in script as the torch and the python peer, in rounds, the layouts interleaved: header lines, one measurement for both engines, pending answers, an unsupported note, the JSON"

# the stand-in as the torch peer of bf16 and f16 rows: its lines say the dtype
rm -f torch-lines.txt
"$BENCH" sdpa --torch-script fake_torch.py --torch-python python3 --peers torch --threads 1 --engine own \
  --dtype bf16,f16 --B 1 --NH 4 --NH-kv 2 --Tq 1 --Tk 16 --hs 8 --repeats 1 --warmup 0 --min-time 0 \
  --ceiling 0 --bandwidth-mib 0 --csv peer-half.csv --json none --progress none >peer-half.txt 2>err.txt \
  || fail "stand-in peer, bf16 and f16: $(head -c 500 err.txt)"
[ "$(cut -d' ' -f1 torch-lines.txt | tr '\n' ' ')" = "bf16 f16 " ] || fail "the peer's lines: $(cat torch-lines.txt)"
python3 - <<'PY' || fail "peer-half.csv"
import csv
rows = list(csv.DictReader(open("peer-half.csv")))
assert [(r["dtype"], r["torch_out_dtype"]) for r in rows] == [("bf16", "bfloat16"), ("f16", "float16")], rows
PY
pass "the torch peer gets bf16 and f16 lines (DTYPE, the first field)"

# the peers' half-precision rules (sdpa_peer_protocol.py, engine_sdpa_cases.py), with NumPy
if python3 -c "import numpy" 2>/dev/null; then
  PYTHONPATH="$PEERS" python3 - <<'PY' || fail "the peers' bf16/f16 check"
import math
import numpy as np
import engine_sdpa_cases, peer_common, sdpa_peer_protocol as proto
line = "bf16 forward 1 2 1 1 8 4 4 0 0 none full warm bhsd call 0 1/1".split()
c = proto.Config(line)
assert c.half and proto.Inputs(c, 1).np_dtype == np.float32
try:
    engine_sdpa_cases.require_supported(c)
    raise AssertionError("an engine took a bf16 row")
except peer_common.Unsupported as exc:
    assert "half-precision" in str(exc), exc
rng = np.random.default_rng(3)
Q, K, V = rng.uniform(-1, 1, (1, 2, 1, 4)), rng.uniform(-1, 1, (1, 1, 8, 4)), rng.uniform(-1, 1, (1, 1, 8, 4))
exact = np.zeros((1, 2, 1, 4))
for h in range(2):  # one key/value head for both query heads; scale 1/sqrt(4)
    s = (K[0, 0] @ Q[0, h, 0]) / 2.0
    w = np.exp(s - s.max())
    exact[0, h, 0] = (w / w.sum()) @ V[0, 0]
error, tolerance = proto.reference_check(c, Q, K, V, None, exact)
assert error < 1e-12 and 2.0 ** -8 <= tolerance < 0.1, (error, tolerance)
off = exact.copy(); off[0, 1, 0, 2] += 0.2 * np.abs(exact).max()
error, _ = proto.reference_check(c, Q, K, V, None, off)
try:
    proto.require_within(error, tolerance)
    raise AssertionError("an output 20% off passed")
except proto.CheckFailed:
    pass
f32 = proto.Config(["f32"] + line[1:])
assert proto.reference_check(f32, Q, K, V, None, exact)[1] is None  # no bound: not enforced
PY
  pass "the peers: bf16 rows parse, engines skip them with a note, the torch check holds them to attn.h's bound"
fi

# an engine candidate's untimed work (a stateful cache restarted, engine_sdpa_cases.Candidate.before):
# the check's call runs without it; every warmup, trial and timed call after it, before the flush
if python3 -c "import numpy" 2>/dev/null; then
  PYTHONPATH="$PEERS" python3 - <<'PY' || fail "an engine candidate's before()"
import types
import numpy as np
import engine_sdpa_cases as engine, sdpa_peer_protocol as proto
c = proto.Config("f32 forward 1 2 1 1 8 4 4 0 0 none full cold bhsd call 0 1/1".split())
Q, K, V, bias = proto.Inputs(c, 1).qkv_bias()
s = np.einsum("hd,kd->hk", Q[0, :, 0].astype(np.float64), K[0, 0].astype(np.float64)) / 2.0
w = np.exp(s - s.max(axis=1, keepdims=True))
exact = ((w / w.sum(axis=1, keepdims=True)) @ V[0, 0].astype(np.float64))[None, :, None, :]
log = []
def call():
    log.append("call")
    return exact
flush = proto.Flush(1, True)
flush.read = lambda: log.append("flush")
two = [engine.Candidate(name, "none", call, before=lambda: log.append("before"))
       for name in ("first", "second")]
case = engine.EngineCase(c, (Q, K, V, bias), two, flush, 1)
assert case.error < 1e-6, case.error
step = ["before", "flush", "call"]
trials = 2 * engine.TRIAL_CALLS
assert log == ["call", "call"] + step * trials, log
del log[:]
policy = types.SimpleNamespace(warmup=1, repeats=3, min_time=0.0, max_repeats=3)
assert len(case.block(policy, True)) == 3 and log == step * 4, log
# a decode loop: refused unless the engine serves loops (serve_engine's loop_case_of)
import peer_common
loop = proto.Config("f32 forward 1 2 1 1 8 4 4 0 0 none full warm bhsd decode-loop 3 1/1".split())
try:
    engine.require_supported(loop)
    raise AssertionError("an engine without loops took a decode loop")
except peer_common.Unsupported as exc:
    assert "decode loop" in str(exc), exc
engine.require_supported(loop, loops=True)
PY
  pass "an engine candidate's untimed before(): after the check, before every trial, warmup and timed call, then the flush; decode loops only for an engine that serves them"
fi

# an f16 row on the engines (engine_sdpa_cases.py): inputs and masks rounded to float16, every
# candidate held to attn.h's bound on those inputs, the output's dtype reported as it is
if python3 -c "import numpy" 2>/dev/null; then
  PYTHONPATH="$PEERS" python3 - <<'PY' || fail "an engine's f16 row"
import numpy as np
import engine_sdpa_cases as engine, peer_common, sdpa_peer_protocol as proto
c = proto.Config("f16 forward 1 2 1 3 8 4 4 1 0 none 6 warm bhsd call 0 1/1".split())
engine.require_supported(c)
Q, K, V, bias = engine.half_inputs(c, proto.Inputs(c, 1).qkv_bias())
assert Q.dtype == K.dtype == V.dtype == np.float16 and bias is None, (Q.dtype, bias)
mask = engine.additive_mask(c, None)  # 6 of 8 keys, causal: every query sees a different set
assert mask.dtype == np.float16 and np.isneginf(mask[0, 0, 0, 5]) and mask[0, 0, 2, 5] == 0
def exact_of(Q, K, V):
    """the row's out in float64: query t of both heads sees keys 0 .. 3 + t"""
    exact = np.zeros((1, 2, 3, 4))
    for h in range(2):
        for t in range(3):
            s = K[0, 0, :4 + t].astype(np.float64) @ Q[0, h, t].astype(np.float64) / 2.0
            w = np.exp(s - s.max())
            exact[0, h, t] = (w / w.sum()) @ V[0, 0, :4 + t].astype(np.float64)
    return exact
exact = exact_of(Q, K, V)
# 1% off: above attn.h's bound here (~1e-3), below the 2e-2 of an f32 row's F16 K/V cache
off = exact.copy(); off[0, 1, 2, 1] += 0.01 * np.abs(exact).max()
assert proto.reference_check(c, Q, K, V, None, exact)[1] < 0.005
flush = proto.Flush(1, False)
def made(name, out):
    return engine.Candidate(name, "none", lambda: out)
case = engine.EngineCase(c, (Q, K, V, None), [made("off", off.astype(np.float32)),
                                              made("exact", exact.astype(np.float16))], flush, 1)
assert case.kernel == "exact" and case.check()[1] == "float16" and case.error < 2.0 ** -11, (
    case.kernel, case.check())
try:
    engine.EngineCase(c, (Q, K, V, None), [made("off", off.astype(np.float16))], flush, 1)
    raise AssertionError("an output 1% off passed an f16 row's check")
except RuntimeError as exc:
    assert "off: check error" in str(exc), exc
# bf16 rows: only an engine that names bf16 takes them; inputs rounded to bfloat16 (ties to
# even) in float32 arrays; an output the engine returns as bits is widened before its check
b = proto.Config(["bf16"] + c.text.split()[1:])
try:
    engine.require_supported(b)
    raise AssertionError("an engine without bf16 took a bf16 row")
except peer_common.Unsupported as exc:
    assert "half-precision" in str(exc), exc
engine.require_supported(b, half_types=("f16", "bf16"))
ties = np.array([1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, -(1 + 2.0 ** -9), np.inf], np.float32)
assert list(engine.bf16_rounded(ties)) == [1.0, 1 + 2.0 ** -6, -1.0, np.inf], engine.bf16_rounded(ties)
Qb, Kb, Vb, _ = engine.half_inputs(b, proto.Inputs(b, 1).qkv_bias())
assert Qb.dtype == np.float32 and np.all(Qb.view(np.uint32) & 0xFFFF == 0), Qb.dtype
bits = (engine.bf16_rounded(exact_of(Qb, Kb, Vb).astype(np.float32)).view(np.uint32) >> 16).astype(np.uint16)
def widen(data):
    return (np.asarray(data).view(np.uint16).astype(np.uint32) << 16).view(np.float32)
case = engine.EngineCase(b, (Qb, Kb, Vb, None), [engine.Candidate(
    "bits", "none", lambda: bits.view(np.float16), out_dtype="bfloat16", widen=widen)], flush, 1)
assert case.check()[1] == "bfloat16" and case.error <= 2.0 ** -8, case.check()
PY
  pass "the engines' f16 rows: inputs and masks in float16, attn.h's bound held, the output's dtype reported; bf16 rows only where an engine takes them, rounded to even, its bits widened before the check"
fi

"$BENCH" sdpa --torch-script does-not-exist.py --peers torch --Tq 1 --Tk 8 --NH 2 --NH-kv 2 --hs 4 --ceiling 0 \
  --bandwidth-mib 0 --repeats 1 --min-time 0 --csv none.csv --json none >none.txt 2>err.txt \
  || fail "a missing peer script failed the run: $(head -c 300 err.txt)"
grep -q '^# torch peer skipped: --torch-script does-not-exist.py is not readable' none.txt \
  || fail "a missing peer is not a note: $(grep torch none.txt)"
pass "a missing peer is skipped with a note"

# ---- stand-in engine peers (ort, ggml) found in --peer-dir; openvino's script there fails ------
mkdir -p engines
cat >engines/ort_sdpa_peer.py <<'PY'
import sys
print("info onnxruntime=9.9.9 onnx=fake python=fake", flush=True)
print("blas CPUExecutionProvider; intra_op_num_threads=1 inter_op_num_threads=1; threads=1", flush=True)
print("impl the fastest operator (stand-in)", flush=True)
print("ready", flush=True)
for line in iter(sys.stdin.readline, ""):
    fields = line.split()
    if fields[0] != "f32":
        print("unsupported " + " ".join(fields) + " f32 only", flush=True)
        continue
    print("result " + " ".join(fields) + " 4.0e-3 3.0e-3 5 float32 2.0e-7 bool(1,1,1,16) 1 "
          "com.microsoft.GroupQueryAttention", flush=True)
PY
sed -e 's/onnxruntime=9.9.9 onnx=fake/ggml=0.0.1 source=fake/' \
    -e 's/com.microsoft.GroupQueryAttention/ggml_flash_attn_ext-KV-F16/' engines/ort_sdpa_peer.py \
    >engines/ggml_sdpa_peer.py
printf 'print("unavailable openvino cannot be imported: stand-in")\n' >engines/openvino_sdpa_peer.py
"$BENCH" sdpa --peer-dir engines --torch-python python3 --peers ort,openvino,ggml --threads 1 \
  --engine own --dtype f32,f64 --B 1 --NH 4 --NH-kv 2 --Tq 1 --Tk 16 --hs 8 --repeats 1 \
  --warmup 0 --min-time 0 --ceiling 64,48 --bandwidth-mib 4 --csv engines.csv --json engines.json \
  --progress none >engines.txt 2>err.txt || fail "stand-in engine peers: $(head -c 500 err.txt)"
grep -q '^# ort peer: onnxruntime=9.9.9 onnx=fake python=fake; python3 (threads 1)' engines.txt \
  || fail "the ort peer's info line is not in the header"
grep -q '^# openvino peer skipped: python3: openvino cannot be imported: stand-in' engines.txt \
  || fail "a missing engine is not a note: $(grep openvino engines.txt)"
grep -q '^dtype op .* | *ort_ms thr *xort | openvino_ms thr xopenvino | *ggml_ms thr *xggml$' engines.txt \
  || fail "no engine columns in the table"
python3 - <<'PY' || fail "engines.csv/engines.json"
import csv, json
rows = list(csv.DictReader(open("engines.csv")))
assert len(rows) == 2, len(rows)
for r in rows:
    if r["dtype"] == "f32":
        assert r["ort_median_ms"] == "4" and r["ort_threads"] == "1", r
        assert r["ort_kernel"] == "com.microsoft.GroupQueryAttention", r
        assert r["ort_version"] == "onnxruntime=9.9.9" and r["ort_check_error"] == "2.000e-07", r
        assert r["ggml_kernel"] == "ggml_flash_attn_ext-KV-F16" and r["ggml_version"] == "ggml=0.0.1", r
        assert abs(float(r["speedup_vs_ort"]) - 4.0 / float(r["attn_median_ms"])) < 1e-3 * float(r["speedup_vs_ort"]), r
        assert r["attn_threads"] == "1" and float(r["fma_peak_gflops"]) > 0, r
    else:
        assert r["ort_median_ms"] == "" and r["ort_note"] == "f32 only", r
    assert r["openvino_median_ms"] == "", r
d = json.load(open("engines.json"))
names = {p["name"]: p for p in d["peers"]}
assert names["ort"]["status"] == "ran" and names["ort"]["measured"] == 1, names["ort"]
assert names["openvino"]["status"] == "skipped", names["openvino"]
assert names["torch"]["status"] == "not asked for", names["torch"]
PY
pass "stand-in engine peers from --peer-dir: header lines, threads, kernel and version columns, an unsupported note, a skipped engine"
