#!/usr/bin/env bash
# attn.sh — one entry point for setting up, building, testing and measuring attn.
#
#   ./attn.sh deps              install what is missing (Debian 12; apt + pip)
#   ./attn.sh build             configure and build the `release` preset
#   ./attn.sh test              deps + build + the whole test suite (ctest, then
#                               the Python package's: python/test.sh)
#   ./attn.sh python            deps + the Python package: built, installed into
#                               .venv-python, its tests run (python/test.sh)
#   ./attn.sh bench [ARGS...]   deps + build + attn-bench ARGS (its default
#                               sweep when no ARGS are given)
#   ./attn.sh asan              deps + configure, build and test `debug-asan`
#                               (AddressSanitizer + UndefinedBehaviorSanitizer)
#   ./attn.sh cross-deps        install what the AArch64 cross build needs
#                               (Debian: the arm64 architecture added if
#                               absent, the cross gcc, qemu-user, arm64's
#                               OpenBLAS and cmocka); only what is missing
#   ./attn.sh cross             cross-deps + configure, build and test the
#                               `aarch64` preset (tests under qemu-aarch64)
#   ./attn.sh peers [--upgrade] optional: PyTorch 2.x, NumPy 2, threadpoolctl,
#                               Hugging Face transformers, ONNX Runtime (+ onnx),
#                               OpenVINO and ml_dtypes (NumPy bfloat16, for the
#                               Python package's bf16 tests) from PyPI in the
#                               venv .venv-peers,
#                               and ggml's CPU library built from the
#                               llama-cpp-python sdist's source into
#                               .venv-peers/ggml, which
#                               attn-bench's peers use by default (torch's wheel
#                               brings CUDA libraries: about 5 GB, a few minutes);
#                               prints what it has; --upgrade: newest versions
#
# Builds go to build/<preset>/ (CMakePresets.json). Builds and tests run on
# every core unless CMAKE_BUILD_PARALLEL_LEVEL / CTEST_PARALLEL_LEVEL say
# otherwise.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"

# Debian packages the build, the tests, the NumPy peer and the plots of
# attn-bench need.
#   build-essential gcc, make, binutils (readelf/nm used by checks), libc dev
#   cmake           CMake >= 3.25 (Debian 12 ships 3.25.1)
#   pkgconf         pkg-config: FindCBLAS and the install test use it
#   libopenblas-dev CBLAS (OpenBLAS, pthread flavour)
#   liblapacke-dev  LAPACKE, used by the tests' reference checks
#   libcmocka-dev   the unit-test framework
#   python3, python3-numpy  the fixture generator and the NumPy peer
#   python3-matplotlib  attn-bench's plots (bench/report/plots.py; without it
#                   they are skipped with a note)
#   python3-pip     the fallback when python3 on PATH is not Debian's
#   python3-venv, python3-pytest, python3-torch  the Python package's tests
#                   (python/test.sh: a venv of Debian's python3 that sees them;
#                   python3-torch is PyTorch 1.13, enough for the drop-in's
#                   autograd tests, whose reference is then the composed math)
#   libopenmpi-dev, openmpi-bin  libattn_mpi (ring attention) and its tests
#   libblis-dev, libblas-dev  the other CBLAS builds CI runs (ATTN_BLAS=BLIS,
#                   ATTN_BLAS=CBLAS: the reference, Debian's netlib libblas)
#   valgrind, clang, libclang-rt-14-dev  .ci/reliability: memcheck, libFuzzer
readonly DEB_PACKAGES=(
  build-essential
  cmake
  pkgconf
  libopenblas-dev
  liblapacke-dev
  libcmocka-dev
  python3
  python3-numpy
  python3-matplotlib
  python3-pip
  python3-venv
  python3-pytest
  python3-torch
  libopenmpi-dev
  openmpi-bin
  libblis-dev
  libblas-dev
  valgrind
  clang
  libclang-rt-14-dev
)

# What the AArch64 cross build (cmake/toolchains/aarch64-linux-gnu.cmake,
# preset aarch64) needs: the cross compiler and C library, qemu-user to run
# the tests, and the arm64 (multiarch) OpenBLAS and cmocka it links.
readonly CROSS_DEB_PACKAGES=(
  gcc-aarch64-linux-gnu
  libc6-dev-arm64-cross
  qemu-user
  libopenblas-dev:arm64
  libcmocka-dev:arm64
)

: "${CMAKE_BUILD_PARALLEL_LEVEL:=$(nproc 2>/dev/null || echo 2)}"
: "${CTEST_PARALLEL_LEVEL:=$(nproc 2>/dev/null || echo 2)}"
export CMAKE_BUILD_PARALLEL_LEVEL CTEST_PARALLEL_LEVEL

say() { printf 'attn.sh: %s\n' "$*"; }
die() { printf 'attn.sh: error: %s\n' "$*" >&2; exit 1; }

usage() {
  # The comment block at the top of this file.
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
}

# Prints the packages given (default: DEB_PACKAGES) that dpkg does not report
# installed. A name without ":arch" means the machine's own architecture (or
# an "all" package): with arm64 added for the cross build, dpkg also knows
# libopenblas-dev:arm64, which must not count as the native one.
missing_deb_packages() {
  local pkg want
  (($# > 0)) || set -- "${DEB_PACKAGES[@]}"
  for pkg in "$@"; do
    want="${pkg#*:}"
    [[ "$pkg" == *:* ]] || want="$(dpkg --print-architecture)"
    if ! dpkg-query -W -f='${Architecture} ${db:Status-Abbrev}\n' "${pkg%%:*}" 2>/dev/null \
      | grep -Eq "^($want|all) ii"; then
      printf '%s\n' "$pkg"
    fi
  done
}

# The command prefix for root's commands: nothing as root, else sudo.
as_root() {
  if ((EUID == 0)); then
    "$@"
  else
    command -v sudo >/dev/null 2>&1 || die "not root and no sudo: run $* as root"
    sudo "$@"
  fi
}

# apt_install PKG...: installs the missing ones of PKG... (apt-get update
# first); says so when none is missing.
apt_install() {
  local missing
  mapfile -t missing < <(missing_deb_packages "$@")
  if ((${#missing[@]} == 0)); then
    say "Debian packages: all installed"
    return 0
  fi
  say "installing: ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null
  as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
}

cmd_deps() {
  if command -v dpkg-query >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    apt_install "${DEB_PACKAGES[@]}"
  else
    say "no dpkg/apt-get here: not installing system packages; need a C11 compiler," \
      "cmake >= 3.25, pkg-config, OpenBLAS (cblas), LAPACKE, cmocka, python3 + numpy + matplotlib"
  fi

  local tool
  for tool in cc cmake ctest pkg-config python3; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found on PATH"
  done

  # The python3 on PATH (which may be a pyenv or venv Python that does not
  # see Debian's python3-numpy and python3-matplotlib) must import numpy (the
  # fixtures, the NumPy peer) and matplotlib (attn-bench's plots).
  ensure_python_module numpy
  ensure_python_module matplotlib
}

# ensure_python_module NAME: pip-installs NAME (the PyPI name is the module's)
# for the python3 on PATH when it cannot import it; says which version it has.
ensure_python_module() {
  local module="$1"
  local version="import $module; print($module.__version__)"
  if python3 -c "import $module" >/dev/null 2>&1; then
    say "$module: $(python3 -c "$version") for $(command -v python3)"
    return 0
  fi
  say "$module: not importable by $(command -v python3); installing it with pip"
  if ! python3 -m pip --version >/dev/null 2>&1; then
    python3 -m ensurepip --upgrade </dev/null || die "python3 has no pip and ensurepip failed"
  fi
  local pip=(python3 -m pip install --disable-pip-version-check --no-input --progress-bar off)
  local log
  log="$(mktemp)"
  if ! PIP_ROOT_USER_ACTION=ignore "${pip[@]}" "$module" </dev/null >"$log" 2>&1; then
    if grep -q 'externally-managed-environment' "$log"; then
      say "pip refuses (PEP 668, externally managed); retrying with --break-system-packages"
      PIP_ROOT_USER_ACTION=ignore "${pip[@]}" --break-system-packages "$module" </dev/null
    else
      cat "$log" >&2
      rm -f "$log"
      die "pip install $module failed"
    fi
  fi
  rm -f "$log"
  python3 -c "import $module" || die "$module still not importable by $(command -v python3)"
  say "$module: $(python3 -c "$version") for $(command -v python3)"
}

build_preset() {
  local preset="$1"
  cmake --preset "$preset"
  cmake --build --preset "$preset"
}

cmd_build() { build_preset release; }

cmd_test() {
  cmd_deps
  build_preset release
  ctest --preset release
  bash python/test.sh </dev/null
}

cmd_python() {
  cmd_deps
  bash python/test.sh "$@" </dev/null
}

cmd_bench() {
  cmd_deps
  build_preset release
  local bench=build/release/bench/attn-bench
  [[ -x "$bench" ]] || die "$bench was not built"
  exec "$bench" "$@"
}

cmd_asan() {
  cmd_deps
  build_preset debug-asan
  ctest --preset debug-asan
}

# The AArch64 cross build's packages (Debian only): arm64 added to dpkg's
# foreign architectures when absent (then apt-get update sees its lists),
# then the missing ones of CROSS_DEB_PACKAGES.
cmd_cross_deps() {
  command -v dpkg >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 \
    || die "cross-deps needs Debian's dpkg and apt-get; elsewhere install an aarch64-linux-gnu" \
      "gcc and C library, qemu-aarch64, and arm64 builds of OpenBLAS and cmocka"
  if [[ "$(dpkg --print-architecture)" != arm64 ]] \
    && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    say "adding the arm64 architecture to dpkg"
    as_root dpkg --add-architecture arm64
  fi
  apt_install "${CROSS_DEB_PACKAGES[@]}"
  local tool
  for tool in aarch64-linux-gnu-gcc qemu-aarch64; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found on PATH"
  done
}

cmd_cross() {
  cmd_cross_deps
  build_preset aarch64
  ctest --preset aarch64
}

# The venv of attn-bench's python peers (bench/peers/): attn-bench tries
# <source dir>/.venv-peers/bin/python first for them (--python,
# --torch-python). PyPI's torch 2.x is the reference PyTorch peer
# (Debian's python3-torch is 1.13, without scaled_dot_product_attention).
# ml_dtypes gives NumPy its bfloat16 dtype, which attn.sdpa takes (Debian 12
# has no python3-ml-dtypes: python/test.sh's Debian venv skips those tests).
readonly PEERS_VENV="$PWD/.venv-peers"
readonly PEERS_PACKAGES=(torch 'numpy>=2' threadpoolctl transformers onnxruntime onnx openvino
  ml_dtypes)
# The sdist whose vendored ggml source the ggml peer is built from.
readonly GGML_SOURCE_VERSION=0.3.36

# Whether the venv's python has torch >= 2, numpy >= 2, threadpoolctl,
# transformers, onnxruntime, onnx, openvino and ml_dtypes.
peers_installed() {
  "$PEERS_VENV/bin/python" - <<'PY' >/dev/null 2>&1
import threadpoolctl, numpy, torch, transformers, onnxruntime, onnx, openvino, ml_dtypes
assert int(torch.__version__.split(".")[0]) >= 2 and int(numpy.__version__.split(".")[0]) >= 2
PY
}

cmd_peers() {
  local upgrade=()
  case "${1:-}" in
    "") ;;
    --upgrade) upgrade=(--upgrade) ;;
    *) die "peers: unknown argument '$1' (the one option is --upgrade)" ;;
  esac
  command -v python3 >/dev/null 2>&1 || die "python3 not found on PATH"
  if [[ ! -x "$PEERS_VENV/bin/python" ]]; then
    say "creating the venv $PEERS_VENV ($(python3 --version 2>&1))"
    python3 -m venv "$PEERS_VENV" </dev/null \
      || die "python3 -m venv failed (Debian: sudo apt-get install python3-venv)"
  fi
  if ((${#upgrade[@]} > 0)) || ! peers_installed; then
    say "installing ${PEERS_PACKAGES[*]} from PyPI into $PEERS_VENV" \
      "(torch's wheel brings its CUDA libraries: about 5 GB, a few minutes)"
    "$PEERS_VENV/bin/python" -m pip install --disable-pip-version-check --no-input \
      --progress-bar off "${upgrade[@]}" "${PEERS_PACKAGES[@]}" </dev/null \
      || die "pip install ${PEERS_PACKAGES[*]} failed"
    peers_installed || die "$PEERS_VENV/bin/python still lacks one of ${PEERS_PACKAGES[*]}"
  fi
  # ggml: optional (a C toolchain and a few minutes); a failure is said, not fatal
  sh bench/peers/ggml/build_ggml.sh "$PEERS_VENV/bin/python" "$PEERS_VENV/ggml" \
    "$GGML_SOURCE_VERSION" </dev/null \
    || say "the ggml peer could not be built (see $PEERS_VENV/ggml/*.log): attn-bench skips it"
  # What the peers will report (their info, blas and impl lines).
  local peer
  say "peers venv: $PEERS_VENV ($("$PEERS_VENV/bin/python" --version 2>&1)," \
    "threadpoolctl $("$PEERS_VENV/bin/python" -c 'import threadpoolctl; print(threadpoolctl.__version__)'))"
  for peer in torch numpy; do
    say "$peer peer:"
    "$PEERS_VENV/bin/python" "bench/peers/${peer}_peer.py" --describe --threads 1 </dev/null \
      | sed 's/^/  /' || die "bench/peers/${peer}_peer.py --describe failed"
  done
  local engine
  for engine in ort openvino ggml; do
    say "$engine peer (attn-bench run: projected heads):"
    "$PEERS_VENV/bin/python" "bench/peers/${engine}_peer.py" --describe --threads 1 </dev/null \
      | sed 's/^/  /' || say "bench/peers/${engine}_peer.py --describe failed"
  done
  for engine in ort openvino ggml; do
    say "$engine peer (attn-bench sdpa):"
    "$PEERS_VENV/bin/python" "bench/peers/${engine}_sdpa_peer.py" --describe --threads 1 </dev/null \
      | sed 's/^/  /' || say "bench/peers/${engine}_sdpa_peer.py --describe failed"
  done
  say "attn-bench runs its numpy, numpy32, torch, ort, openvino and ggml peers, and sdpa's" \
    "torch, ort, openvino and ggml peers, with $PEERS_VENV/bin/python by default"
}

main() {
  local cmd="${1:-}"
  (($# > 0)) && shift
  case "$cmd" in
    deps) cmd_deps ;;
    build) cmd_build ;;
    test) cmd_test ;;
    python) cmd_python "$@" ;;
    bench) cmd_bench "$@" ;;
    asan) cmd_asan ;;
    cross-deps) cmd_cross_deps ;;
    cross) cmd_cross ;;
    peers) cmd_peers "$@" ;;
    -h | --help | help) usage ;;
    "") usage >&2; exit 2 ;;
    *) printf 'attn.sh: unknown command: %s\n\n' "$cmd" >&2; usage >&2; exit 2 ;;
  esac
}

main "$@"
