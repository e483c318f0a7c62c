#!/usr/bin/env bash
# The test of tests/check_no_isa_skips.sh (ctest: check_no_isa_skips): on
# made-up ctest logs and CPU descriptions, a skipped registration of a kernel
# set the CPU has fails it (x86 flags and Arm features alike), one of a set
# the CPU lacks or of a test that is no kernel-set registration does not.
set -euo pipefail
check="$(dirname "${BASH_SOURCE[0]}")/../check_no_isa_skips.sh"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
printf 'processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n' >"$dir/avx2-cpu"
printf 'processor\t: 0\nFeatures\t: fp asimd evtstrm\n' >"$dir/arm-cpu"
log() { # name... -> a ctest closing list of skipped tests
  local file="$dir/log.$RANDOM" n=1 name
  echo "The following tests did not run:" >"$file"
  for name in "$@"; do
    printf '\t %d - %s (Skipped)\n' "$n" "$name" >>"$file"
    n=$((n + 1))
  done
  echo "$file"
}
expect() { # want (pass|fail), cpu, skipped names...
  local want="$1" cpu="$2" got=pass
  shift 2
  bash "$check" "$(log "$@")" "$dir/$cpu" >/dev/null 2>&1 || got=fail
  if [[ "$got" != "$want" ]]; then
    echo "check_no_isa_skips on $cpu with skipped [$*]: ${got}ed, want ${want}" >&2
    exit 1
  fi
}
expect pass avx2-cpu
expect pass avx2-cpu test_exp.avx512 test_sdpa.neon attn_bench_peers readme_example.basic
expect fail avx2-cpu test_exp.avx512 test_lookup.avx2
expect fail avx2-cpu test_exp.scalar
expect pass arm-cpu test_exp.avx2 test_engines.avx512
expect fail arm-cpu test_sdpa.neon
echo "check_no_isa_skips: 6 cases as expected"
