#!/usr/bin/env bash
# tests/check_no_isa_skips.sh LOG [CPUINFO] — fails when ctest skipped a
# kernel-set registration (<name>.<set>, tests/CMakeLists.txt) whose set this
# CPU has: such a test exits 77 only when the library does not run the set
# (the build lacks it, or its detection is wrong), which must not pass CI
# unnoticed. LOG is ctest's output (its closing list "The following tests
# did not run: ... (Skipped)"); CPUINFO defaults to /proc/cpuinfo. Skips of
# sets the CPU lacks, and of tests that are not per kernel set, are fine.
# A kernel set is known here by the CPU flags it needs (x86 "flags", Arm
# "Features"); a new set (lib/kernels/kernels.h) gets a line in required_flags.
set -euo pipefail

log="${1:?usage: check_no_isa_skips.sh CTEST_LOG [CPUINFO]}"
cpuinfo="${2:-/proc/cpuinfo}"

# The CPU flags a kernel set needs; "-" for none; nothing for a name that is
# no kernel set.
required_flags() {
  case "$1" in
    scalar) echo "-" ;;
    avx2) echo "avx2 fma" ;;
    avx512) echo "avx512f" ;;
    avx512-bf16) echo "avx512f avx512bw avx512vl avx512_bf16" ;;
    amx) echo "avx512f avx512bw avx512vl avx512_bf16 amx_bf16 amx_tile" ;;
    neon) echo "asimd" ;;
  esac
}

has_flags() { # flags... ("-": none)
  local flag
  for flag in "$@"; do
    [[ "$flag" == "-" ]] && continue
    grep -qE "^(flags|Features)[[:space:]]*:.*[[:space:]]$flag([[:space:]]|$)" "$cpuinfo" || return 1
  done
}

failed=0
checked=0
while read -r name; do
  set_name="${name##*.}"
  [[ "$set_name" != "$name" ]] || continue
  flags="$(required_flags "$set_name")"
  [[ -n "$flags" ]] || continue
  checked=$((checked + 1))
  # shellcheck disable=SC2086 # the flags are words
  if has_flags $flags; then
    echo "check_no_isa_skips: $name was skipped, but this CPU has the $set_name kernel set" \
      "($flags): the library did not run it" >&2
    failed=1
  fi
done < <(sed -n 's/^[[:space:]]*[0-9]\{1,\} - \(.*\) (Skipped)$/\1/p' "$log")

if ((failed)); then
  exit 1
fi
echo "check_no_isa_skips: no kernel set this CPU has was skipped ($checked skipped" \
  "registrations of sets it lacks)"
