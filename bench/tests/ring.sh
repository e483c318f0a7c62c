# attn-bench ring: ring attention over MPI on 1 and 2 ranks (--quick), every
# mode, both ops: one CSV row each, the bytes each rank sends as the ring
# sends them ((P-1) K/V blocks forward, (2P-1) blocks of K/V and dK/dV
# backward), a hidden share in [0, 1], positive times; bad arguments exit 2.
# Skipped (77) when libattn_mpi was not built (no MPI at configure time).
. "$(dirname "$0")/common.sh"

expect_status 2 "--mode: 'diagonal' is not a list of full, causal, zigzag" ring --mode diagonal
expect_status 2 "--NH-kv 3 does not divide --NH 8" ring --NH-kv 3
expect_status 2 "unknown option '--bogus'" ring --bogus
"$BENCH" ring --help | grep -q 'hidden = 1 - wait in the steps' || fail "--help does not define hidden"

"$BENCH" ring --quick --csv ring.csv >out.txt 2>err.txt
status=$?
if [ "$status" -ne 0 ] && grep -q 'libattn_mpi was not built' err.txt; then
  echo "skip: $(cat err.txt)"
  exit 77
fi
[ "$status" -eq 0 ] || fail "ring --quick exited $status: $(tail -c 600 err.txt) $(tail -c 600 out.txt)"
python3 - <<'PY' || fail "ring CSV"
import csv
rows = list(csv.DictReader(open("ring.csv")))
assert len(rows) == 12, len(rows)  # P 1, 2 x 3 modes x 2 ops
assert {(r["P"], r["mode"], r["op"]) for r in rows} == {
    (p, m, o) for p in ("1", "2") for m in ("full", "causal", "zigzag")
    for o in ("forward", "backward")}
for r in rows:
    P, block, sent = int(r["P"]), float(r["block_bytes"]), float(r["sent_bytes"])
    assert block == 2 * 1 * 2 * 64 * 16 * 4, r  # K and V of B=1, NH_kv=2, T=64, hs=16, f32
    blocks = (P - 1) if r["op"] == "forward" else (2 * P - 1 if P > 1 else 0)
    assert sent == blocks * block, (r, blocks)
    assert 0.0 <= float(r["hidden"]) <= 1.0, r
    assert float(r["ms_per_call"]) > 0 and float(r["compute_ms"]) > 0 and float(r["gflops"]) > 0, r
PY
grep -q 'communication hidden in the steps' out.txt || fail "no report of the hidden share"
pass "ring --quick: 12 rows, bytes per rank as the ring sends them, hidden in [0, 1]"
