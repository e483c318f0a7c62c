#!/bin/sh
# Builds the ggml peer of attn-bench sdpa (bench/peers/ggml_sdpa_peer.py):
# ggml's CPU library from the source the llama-cpp-python sdist on PyPI
# ships (vendor/llama.cpp/ggml), and bench/peers/ggml/ggml_sdpa_shim.c
# against it, into a cache directory (./attn.sh peers: .venv-peers/ggml).
#
#   build_ggml.sh PYTHON CACHE_DIR [VERSION]
#
# PYTHON runs pip download (the sdist only, no dependencies, nothing
# installed); VERSION pins llama-cpp-python (default: the one below). ggml
# is configured as llama.cpp builds it by default for the machine it runs on
# (GGML_NATIVE, OpenMP threads), Release, shared libraries, no tests or
# examples, only its ggml and ggml-cpu targets. Nothing is built again when CACHE_DIR/lib/libattn_ggml_shim.so
# exists for the same version; the file CACHE_DIR/ggml-version says which.
set -eu
PYTHON=$1
CACHE=$2
VERSION=${3:-0.3.36}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
SHIM="$CACHE/lib/libattn_ggml_shim.so"
if [ -f "$SHIM" ] && [ "$(cat "$CACHE/ggml-version" 2>/dev/null)" = "llama-cpp-python $VERSION" ] &&
  [ "$SHIM" -nt "$HERE/ggml_sdpa_shim.c" ]; then
  echo "ggml peer: $SHIM is built (llama-cpp-python $VERSION)"
  exit 0
fi
SDIST="$CACHE/download/llama_cpp_python-$VERSION.tar.gz"
if [ ! -f "$SDIST" ]; then
  echo "ggml peer: downloading the llama-cpp-python $VERSION sdist from PyPI"
  "$PYTHON" -m pip download --disable-pip-version-check --no-input --progress-bar off \
    --no-deps --no-binary llama-cpp-python "llama-cpp-python==$VERSION" -d "$CACHE/download"
fi
SOURCE="$CACHE/source-$VERSION"
if [ ! -f "$SOURCE/ggml/CMakeLists.txt" ]; then
  rm -rf "$SOURCE"
  mkdir -p "$SOURCE"
  tar -xzf "$SDIST" -C "$SOURCE" --strip-components=3 "llama_cpp_python-$VERSION/vendor/llama.cpp/ggml"
fi
# the sdist leaves out the pkg-config template ggml's top level configures
[ -f "$SOURCE/ggml/ggml.pc.in" ] || : >"$SOURCE/ggml/ggml.pc.in"
echo "ggml peer: building ggml's CPU library from $SOURCE/ggml"
cmake -S "$SOURCE/ggml" -B "$CACHE/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
  -DGGML_NATIVE=ON -DGGML_OPENMP=ON -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF \
  -DGGML_BACKEND_DL=OFF >"$CACHE/cmake.log"
cmake --build "$CACHE/build" -j "${CMAKE_BUILD_PARALLEL_LEVEL:-2}" --target ggml ggml-cpu \
  >"$CACHE/build.log"
LIBDIR=$(dirname "$(find "$CACHE/build" -name 'libggml-cpu.so' | head -n 1)")
mkdir -p "$CACHE/lib"
cc -O2 -std=c11 -Wall -Wextra -Werror -shared -fPIC -I"$SOURCE/ggml/include" \
  "$HERE/ggml_sdpa_shim.c" -o "$SHIM" \
  -L"$LIBDIR" -Wl,-rpath,"$LIBDIR" -lggml -lggml-cpu -lggml-base -lm
echo "llama-cpp-python $VERSION" >"$CACHE/ggml-version"
echo "ggml peer: built $SHIM"
