# The CSV's schema (header, one complete row per configuration) and the
# JSON's (it parses, has the machine's description, the ceiling, the FMA peak
# and the rows); every row's threads (attn's, the peers') and FMA peak share.
. "$(dirname "$0")/common.sh"

"$BENCH" --quick --peers naive --NH 1,2 --wo 0,1 --api plan,oneshot --T 16 --causal 1 \
  --csv run.csv --json run.json >out.txt 2>err.txt || fail "quick sweep failed: $(cat err.txt)"

header='dtype,op,causal,api,path,engine,threads,B,T,C,NH,hs,wo,weights,ran_path,engine_threads,flops,status,check,check_rows,check_error,check_tolerance,attn_repeats,attn_median_ms,attn_min_ms,attn_gflops,ceiling_gflops,attn_ceiling_fraction,naive_repeats,naive_median_ms,naive_min_ms,naive_gflops,naive_ceiling_fraction,speedup_vs_naive,naive_out_dtype,naive_note,numpy_repeats,numpy_median_ms,numpy_min_ms,numpy_gflops,numpy_ceiling_fraction,speedup_vs_numpy,numpy_out_dtype,numpy_note,numpy32_repeats,numpy32_median_ms,numpy32_min_ms,numpy32_gflops,numpy32_ceiling_fraction,speedup_vs_numpy32,numpy32_out_dtype,numpy32_note,torch_repeats,torch_median_ms,torch_min_ms,torch_gflops,torch_ceiling_fraction,speedup_vs_torch,torch_out_dtype,torch_note,python_repeats,python_median_ms,python_min_ms,python_gflops,python_ceiling_fraction,speedup_vs_python,python_out_dtype,python_note,attn_threads,fma_peak_gflops,attn_peak_fraction,naive_threads,naive_peak_fraction,numpy_threads,numpy_peak_fraction,numpy32_threads,numpy32_peak_fraction,torch_threads,torch_peak_fraction,python_threads,python_peak_fraction,dropout,attn_dropout_cost,torch_dropout_cost,ort_repeats,ort_median_ms,ort_min_ms,ort_gflops,ort_ceiling_fraction,speedup_vs_ort,ort_out_dtype,ort_note,ort_threads,ort_peak_fraction,openvino_repeats,openvino_median_ms,openvino_min_ms,openvino_gflops,openvino_ceiling_fraction,speedup_vs_openvino,openvino_out_dtype,openvino_note,openvino_threads,openvino_peak_fraction,ggml_repeats,ggml_median_ms,ggml_min_ms,ggml_gflops,ggml_ceiling_fraction,speedup_vs_ggml,ggml_out_dtype,ggml_note,ggml_threads,ggml_peak_fraction,naive_check_error,naive_kernel,numpy_check_error,numpy_kernel,numpy32_check_error,numpy32_kernel,torch_check_error,torch_kernel,python_check_error,python_kernel,ort_check_error,ort_kernel,openvino_check_error,openvino_kernel,ggml_check_error,ggml_kernel'
[ "$(head -n 1 run.csv)" = "$header" ] || fail "CSV header changed: $(head -n 1 run.csv)"
pass "CSV header has the documented 84 columns (the last three: dropout, attn_dropout_cost, torch_dropout_cost)"

# 2 dtypes x 2 ops x 2 head counts x 2 wo x 2 apis = 32 configurations
rows=$(csv_rows run.csv)
[ "$rows" -eq 32 ] || fail "CSV has $rows rows, wanted 32"
awk -F, 'NR > 1 && NF != 130 { bad = 1 } END { exit bad }' run.csv || fail "a CSV row has another field count"
awk -F, 'NR > 1 && $18 != "timed" { bad = 1 } END { exit bad }' run.csv || fail "a configuration was not timed"
awk -F, 'NR > 1 && ($24 <= 0 || $27 <= 0 || $29 == "" || $16 == "") { bad = 1 } END { exit bad }' run.csv \
  || fail "a row lacks its median, ceiling, naive timing or engine_threads"
# attn_threads ($69) = engine_threads ($16), or threads ($7) on BLAS threads;
# the FMA peak ($70) and attn's share of it ($71); the naive peer's thread ($72)
awk -F, 'NR > 1 && ($69 != ($16 == 0 ? $7 : $16) || $69 != $7 || $70 <= 0 || $71 <= 0 || $72 != 1) { bad = 1 }
         END { exit bad }' run.csv || fail "a row lacks equal threads, the FMA peak or its share"
pass "32 rows of 84 fields, all timed, with the ceiling, the FMA peak, the naive peer and equal threads"
grep -q '^dtype op .* attn_ms athr  GFLOP/s peak% blas% |   naive_ms thr ' out.txt \
  || fail "no athr, peak%, blas% and peer thr columns in the table: $(grep '^dtype' out.txt)"
grep -q '^# FMA peak: f32, [0-9]* threads\{0,1\}: [0-9.]* GFLOP/s' out.txt || fail "no f32 FMA peak line"
grep -q '^# FMA peak: f64, ' out.txt || fail "no f64 FMA peak line"
pass "the table has athr, peak%, blas% and each peer's thr; the header the f32 and f64 FMA peaks"

grep -q 'sgemm n=128' out.txt || fail "no ceiling line in the output"
grep -q 'numpy peer: not asked for' out.txt || fail "no note for the skipped peer"

# --csv none: no CSV file left behind (the rows go to a temporary one in
# TMPDIR for the JSON), in either command; --resume needs a real CSV.
mkdir -p scratch && before=$(ls | sort)
for cmd in run sdpa; do
  [ "$cmd" = run ] && args="--T 16" || args="sdpa --Tq 16 --Tk 16"
  TMPDIR="$PWD/scratch" "$BENCH" $args --quick --peers none --csv none --json none.json \
    >none.txt 2>err.txt || fail "$cmd --csv none failed: $(head -c 300 err.txt)"
  grep -q 'CSV: none$' none.txt || fail "$cmd --csv none: footer $(tail -n 1 none.txt)"
  [ -z "$(ls scratch)" ] || fail "$cmd --csv none left $(ls scratch) in TMPDIR"
  [ -s none.json ] && grep -q '"csv": "none"' none.json && grep -q '"rows": \[' none.json \
    || fail "$cmd --csv none: the JSON lacks its rows or says another CSV"
  rm none.json
done
rm none.txt
[ "$(ls | sort)" = "$before" ] || fail "--csv none wrote files: $(ls)"
pass "--csv none: no CSV file anywhere, the JSON still has the rows, footer 'CSV: none'"
expect_status 2 'not with --csv none' --quick --csv none --resume --json none

command -v python3 >/dev/null 2>&1 || { echo "skip: no python3 to parse the JSON"; exit 77; }
python3 - <<'PY' || fail "JSON schema"
import csv, json
d = json.load(open("run.json"))
for key in ("tool", "schema", "command", "settings", "machine", "ceiling", "fma_peak", "peers",
            "columns", "rows"):
    assert key in d, key
m = d["machine"]
for key in ("cpu_model", "cpu_simd_flags", "cpus_online", "simd_kernel", "blas_config",
            "blas_core", "blas_threads_at_start", "compiler", "compile_flags", "build_type"):
    assert key in m, key
assert m["simd_kernel"] in ("scalar", "avx2", "avx512", "avx512-bf16", "amx", "neon"), m["simd_kernel"]
assert [c["gemm"] for c in d["ceiling"]] == ["sgemm", "dgemm"], d["ceiling"]
assert all(c["gflops"] > 0 for c in d["ceiling"])
threads = {r["threads"] for r in d["rows"]}
peak = d["fma_peak"]
assert {(e["kind"], e["threads"]) for e in peak["entries"] if e["kind"] not in ("bf16-dot", "amx-bf16")} == \
    {(k, t) for k in ("f32", "f64") for t in threads}, peak
for r in d["rows"]:
    entry = [e for e in peak["entries"] if e["kind"] == r["dtype"] and e["threads"] == r["threads"]]
    assert r["fma_peak_gflops"] == float("%.4g" % entry[0]["gflops"]), (r, entry)
    assert abs(r["attn_peak_fraction"] - r["attn_gflops"] / r["fma_peak_gflops"]) < 1e-3 * r["attn_peak_fraction"] + 1e-6
    assert r["attn_threads"] == (r["engine_threads"] or r["threads"]) == r["threads"], r
    assert r["naive_threads"] == 1 and r["naive_peak_fraction"] > 0
assert [p["name"] for p in d["peers"]] == ["naive", "numpy", "numpy32", "torch", "python", "ort",
                                          "openvino", "ggml"]
assert d["peers"][0]["status"] == "ran" and d["peers"][1]["status"] == "not asked for"
rows = list(csv.DictReader(open("run.csv")))
assert d["columns"] == list(rows[0].keys())
assert len(d["rows"]) == len(rows) == 32
assert all(isinstance(r["attn_median_ms"], float) and r["numpy_median_ms"] is None for r in d["rows"])
assert {(r["api"], r["NH"]) for r in d["rows"]} == {("plan", 1), ("plan", 2), ("oneshot", 1), ("oneshot", 2)}
# --quick runs engine auto; one-shots are always auto; what it resolved to is a count
assert {r["engine"] for r in d["rows"]} == {"auto"}
assert len({r["engine_threads"] for r in d["rows"]}) == 1 and isinstance(d["rows"][0]["engine_threads"], int)
assert not any("profile" in r for r in d["rows"])  # no --profile
PY
pass "JSON parses: machine, ceiling, FMA peak, peers, 32 rows matching the CSV and the peak"
