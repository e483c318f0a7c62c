# --resume: an interrupted CSV (complete rows plus a half-written line) is
# completed without redoing its finished rows; a finished one runs nothing.
. "$(dirname "$0")/common.sh"

run() {
  "$BENCH" --quick --peers none --ceiling 0 --json none --csv sweep.csv "$@" >out.txt 2>err.txt \
    || fail "attn-bench $* failed: $(cat err.txt)"
}

run
full=$(csv_rows sweep.csv)
[ "$full" -eq 16 ] || fail "quick sweep wrote $full rows, wanted 16"

head -n 4 sweep.csv >kept.csv               # the header and 3 finished rows
cp kept.csv sweep.csv
printf 'f64,backward,1,plan,auto,blas,1,2,48,32' >>sweep.csv   # cut mid-row
run --resume
[ "$(csv_rows sweep.csv)" -eq 16 ] || fail "after --resume: $(csv_rows sweep.csv) rows, wanted 16"
head -n 4 sweep.csv | cmp -s - kept.csv || fail "--resume rewrote the finished rows"
[ "$(cut -d, -f1-14 sweep.csv | sort | uniq -d | wc -l)" -eq 0 ] || fail "--resume duplicated a row"
grep -q "3 rows already in sweep.csv are kept" out.txt || fail "no note of the kept rows"
grep -q "13 configurations measured, 3 kept from the CSV" out.txt || fail "did not measure exactly 13"
pass "--resume kept 3 rows, dropped the cut line and measured the 13 others"

run --resume
grep -q "0 configurations measured, 16 kept" out.txt || fail "a finished sweep was measured again"
[ "$(csv_rows sweep.csv)" -eq 16 ] || fail "a finished sweep changed the CSV"
pass "--resume of a finished sweep measures nothing"

printf 'a,b\n1,2\n' >other.csv
"$BENCH" --quick --peers none --csv other.csv --resume >out.txt 2>err.txt
[ $? -eq 1 ] && grep -q "header differs" err.txt || fail "resuming a foreign CSV was not refused"
pass "--resume refuses a CSV with another header"
