# --engine auto (the plan's default, ATTN_THREADS_AUTO) next to blas and own,
# the engine_threads column, and --profile's per-phase block and JSON.
. "$(dirname "$0")/common.sh"

small="--quick --peers none --T 16 --dtype f32 --causal 0"

# The default engine list is auto,blas,own (engine varies fastest); --quick's is auto.
"$BENCH" --list --T 64 --dtype f32 --op forward --causal 0 --path auto >list.txt \
  || fail "--list failed"
[ "$(grep '^f32' list.txt | cut -d, -f6 | tr '\n' ' ')" = "auto blas own " ] \
  || fail "the default engines are not auto, blas, own: $(cat list.txt)"
"$BENCH" --quick --list >list.txt || fail "--quick --list failed"
[ "$(grep '^f' list.txt | cut -d, -f6 | sort -u)" = "auto" ] || fail "--quick's engine is not auto"
pass "default --engine auto,blas,own; --quick's auto"

# Every engine of a plan, and a one-shot (run once, as auto). engine_threads
# (column 16): blas 0, own --threads; auto and the one-shot what
# ATTN_NUM_THREADS forces; attn_threads (column 69) the count each ran on,
# the row's --threads (column 7) whatever the engine.
for case in 3:3 0:1; do
  forced=${case%:*} threads=${case#*:}
  ATTN_NUM_THREADS=$forced "$BENCH" $small --threads $threads --op forward --api plan,oneshot \
    --engine auto,blas,own --csv engines.csv --json none >out.txt 2>err.txt \
    || fail "engines sweep (ATTN_NUM_THREADS=$forced): $(cat err.txt)"
  got=$(awk -F, 'NR > 1 { printf "%s/%s=%s ", $4, $6, $16 }' engines.csv)
  want="plan/auto=$forced plan/blas=0 plan/own=$threads oneshot/auto=$forced "
  [ "$got" = "$want" ] || fail "ATTN_NUM_THREADS=$forced: engines '$got', wanted '$want'"
  awk -F, 'NR > 1 && ($69 != $7 || $7 != '"$threads"') { bad = 1 } END { exit bad }' engines.csv \
    || fail "ATTN_NUM_THREADS=$forced: attn_threads is not the row's $threads"
  grep -q "^# engine auto .*ATTN_NUM_THREADS=$forced" out.txt || fail "no header line for engine auto"
done
pass "engine_threads: auto and one-shots follow ATTN_NUM_THREADS (3, 0), blas 0, own --threads; attn_threads = threads"

# Engine auto (and a one-shot, at the default) where it resolves to another
# count than the row's is left out, counted in the header: a row runs attn,
# its peers and its ceiling on one count.
ATTN_NUM_THREADS=3 "$BENCH" $small --threads 2 --op forward --api plan,oneshot \
  --engine auto,blas,own --csv engines.csv --json none >out.txt 2>err.txt \
  || fail "engines sweep at 2 threads, auto on 3: $(cat err.txt)"
got=$(awk -F, 'NR > 1 { printf "%s/%s=%s ", $4, $6, $69 }' engines.csv)
[ "$got" = "plan/blas=2 plan/own=2 " ] || fail "auto on 3 in rows of 2 threads: '$got'"
grep -q "^# left out: .*engine auto at a thread count other than the one it resolves to" out.txt \
  || fail "the header does not count the auto rows left out: $(grep '^#' out.txt)"
pass "engine auto and one-shots resolving to 3 threads are left out of 2-thread rows, and counted"

"$BENCH" $small --engine fast >out.txt 2>err.txt
[ $? -eq 2 ] && grep -q "'fast' is not a list of auto, blas, own" err.txt \
  || fail "--engine fast was not refused: $(cat err.txt)"
"$BENCH" --help >help.txt || fail "--help failed"
for text in "--profile" "PROFILE (--profile" "auto (the plan's default" "engine_threads"; do
  grep -qF -- "$text" help.txt || fail "--help lacks '$text'"
done
pass "--engine fast refused; --help documents auto, engine_threads and --profile"

# --profile: a block per plan row, none for the one-shot; the CSV is unchanged.
"$BENCH" $small --op forward,backward --api plan,oneshot --profile --csv profile.csv \
  --json profile.json >out.txt 2>err.txt || fail "--profile run: $(cat err.txt)"
[ "$(grep -c '^    profile: attn' out.txt)" -eq 2 ] || fail "not one profile block per plan row"
[ "$(grep -c '^    profile: none' out.txt)" -eq 1 ] || fail "the one-shot row has no 'none' profile"
for phase in projections scores softmax weighted_sum backward_values backward_input outside; do
  grep -Eq "^    $phase +[0-9]" out.txt || fail "no '$phase' line in the profile"
done
"$BENCH" $small --op forward --csv plain.csv --json none >/dev/null 2>&1 || fail "plain run failed"
[ "$(head -n 1 profile.csv)" = "$(head -n 1 plain.csv)" ] || fail "--profile changed the CSV header"
pass "--profile prints a block per plan row (forward and backward phases), the CSV unchanged"

command -v python3 >/dev/null 2>&1 || { echo "skip: no python3 to parse the JSON"; exit 77; }
python3 - <<'PY' || fail "--profile's JSON"
import json
document = json.load(open("profile.json"))
assert document["settings"]["profile"] is True
rows = document["rows"]
plans = [r for r in rows if r["api"] == "plan"]
assert len(plans) == 2 and not any("profile" in r for r in rows if r["api"] == "oneshot")
for r in plans:
    p = r["profile"]
    assert p["engine_threads"] == r["engine_threads"] and p["calls"] >= 1, p
    names = [ph["phase"] for ph in p["phases"]]
    assert "projections" in names and "softmax" in names, names
    assert ("backward_input" in names) == (r["op"] == "backward"), names
    inside = sum(ph["thread_ms"] for ph in p["phases"])
    assert abs(inside + p["outside_thread_ms"] - max(p["thread_ms"], inside)) < 1e-4 * p["thread_ms"], p
    assert all(0 <= ph["share"] <= 1.5 for ph in p["phases"]), p
    for ph in p["phases"]:
        if ph["gflop"] > 0 and ph["thread_ms"] > 0:
            assert abs(ph["gflops_per_thread"] - ph["gflop"] / ph["thread_ms"] * 1e3) < 1e-3 * ph["gflops_per_thread"]
            # relative: the JSON's %.6g numbers are each within 5e-6 of theirs, and a
            # busy machine's small ceiling makes the share large
            share = ph["gflops_per_thread"] / p["per_thread_ceiling_gflops"]
            assert abs(ph["ceiling_share"] - share) <= 1e-4 * share, (ph, p)
        else:
            assert ph["gflops_per_thread"] is None
PY
pass "--profile's JSON: a profile per plan row whose phases and 'outside' add up to its thread time"

# sdpa --profile: a block per row (calls, a decode loop's steps, a cold cache,
# a backward with dropout and its twin), each row's profile in the JSON under
# its own key (the dropout twin's apart), attn's FLOPs at least the row's.
"$BENCH" sdpa --quick --peers none --Tq 1,7 --Tk 33 --lengths full --mask none --window 0 \
  --dtype f32 --op forward,backward --scenario call,decode-loop --cache warm,cold \
  --dropout 0,0.25 --profile --csv sdpa_profile.csv --json sdpa_profile.json \
  --progress none >out.txt 2>err.txt || fail "sdpa --profile: $(head -c 500 err.txt)"
rows=$(($(wc -l <sdpa_profile.csv) - 1))
[ "$(grep -c '^    profile: attn' out.txt)" -eq "$rows" ] || fail "not one sdpa profile block per row"
python3 - <<'PY' || fail "sdpa --profile's JSON"
import json
document = json.load(open("sdpa_profile.json"))
assert document["settings"]["profile"] is True
rows = document["rows"]
assert {r["scenario"] for r in rows} == {"call", "decode-loop"} and any(r["dropout"] > 0 for r in rows)
for r in rows:
    p = r["profile"]
    assert p["engine_threads"] == r["engine_threads"] and p["calls"] >= 1, p
    if r["scenario"] == "decode-loop":
        assert p["calls"] % r["steps"] == 0, p
    names = [ph["phase"] for ph in p["phases"]]
    assert any(n.startswith("backward_") for n in names) == (r["op"] == "backward"), names
    gflop = sum(ph["gflop"] for ph in p["phases"])
    assert gflop * 1e9 >= 0.99 * r["flops"], (gflop, r["flops"])
    inside = sum(ph["thread_ms"] for ph in p["phases"])
    assert abs(inside + p["outside_thread_ms"] - max(p["thread_ms"], inside)) < 1e-4 * p["thread_ms"], p
twins = [(r, t) for r in rows for t in rows if r["dropout"] > 0 and t["dropout"] == 0
         and all(r[k] == t[k] for k in list(r)[:19])]
assert twins and all(r["profile"] != t["profile"] for r, t in twins), "a dropout row got its twin's profile"
PY
pass "sdpa --profile: a profile per row in the output and the JSON, decode loops per step"
