# Shared by the attn-bench tests: sh TEST.sh ATTN_BENCH WORK_DIR [SWEEPS_DIR]
# Each test prints what it checks and exits nonzero on the first failure
# (77: skipped, e.g. no python3).
set -u
BENCH="$1"
WORK="$2"
SWEEPS="${3:-}"
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1

fail() {
  printf 'FAIL: %s\n' "$*" >&2
  exit 1
}

pass() {
  printf 'ok: %s\n' "$*"
}

# expect_status STATUS PATTERN ARGS...: runs attn-bench ARGS, wants the exit
# status STATUS and PATTERN (grep -E) in its stderr (or stdout for status 0).
expect_status() {
  want="$1" pattern="$2"
  shift 2
  "$BENCH" "$@" >out.txt 2>err.txt
  got=$?
  [ "$got" -eq "$want" ] || fail "attn-bench $* exited $got, wanted $want: $(head -c 300 err.txt)"
  if [ "$want" -eq 0 ]; then where=out.txt; else where=err.txt; fi
  grep -Eq -- "$pattern" "$where" || fail "attn-bench $*: no '$pattern' in $where: $(head -c 300 "$where")"
  pass "attn-bench $* -> $want, says '$pattern'"
}

# csv_rows FILE: data rows (lines after the header)
csv_rows() {
  echo $(($(wc -l <"$1") - 1))
}

# csv_field FILE ROW NAME: the field NAME of data row ROW (1: the first), by
# the header's names (no commas inside fields)
csv_field() {
  awk -F, -v row="$2" -v name="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i }
    NR == row + 1 { print $c }' "$1"
}

# stand_in FILE INFO LOG: a stand-in peer's start (its header lines, then
# each line it gets appended to LOG, as `line` and `fields`); its answer follows
stand_in() {
  printf '%s\n' "import sys" "print(\"info $2\", flush=True)" \
    "print(\"blas stand-in; threads=1\", flush=True)" "print(\"impl stand-in\", flush=True)" \
    "print(\"ready\", flush=True)" "for line in iter(sys.stdin.readline, \"\"):" \
    "    fields = line.split()" "    open(\"$3\", \"a\").write(line)" >"$1"
}
