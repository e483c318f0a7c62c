# Cross build for 64-bit ARM Linux on a Debian x86-64 host:
#   cmake -S . -B build/aarch64 \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
#     -DATTN_BUILD_BENCH=OFF -DATTN_WITH_MPI=OFF
#   cmake --build build/aarch64 && ctest --test-dir build/aarch64
# (or the preset `aarch64`). What it needs: ./attn.sh cross-deps (Debian's
# gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and qemu-user, and arm64's
# libopenblas-dev and libcmocka-dev, multiarch under /usr/lib/aarch64-linux-gnu).
# ctest runs the test programs under qemu-aarch64 (CMAKE_CROSSCOMPILING_EMULATOR,
# below).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# Target files come from the cross C library's tree and from the multiarch
# directories of arm64 packages (/usr/lib/aarch64-linux-gnu,
# /usr/include/aarch64-linux-gnu, found through "/" and the library
# architecture above); programs (pkg-config, python) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config (FindCBLAS, FindCMocka) reads arm64's .pc files, not the host's.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# The test programs run under qemu-aarch64 with the cross C library's loader
# (-L). Its libc.so.6 must be the one of the same glibc build: without
# LD_LIBRARY_PATH the loader takes arm64's multiarch libc6 (a dependency of
# libopenblas0:arm64, another Debian revision) from the host's ld.so.cache,
# and the mix hangs in the first pthread_create (OpenBLAS's thread pool).
set(CMAKE_CROSSCOMPILING_EMULATOR
  qemu-aarch64;-L;/usr/aarch64-linux-gnu;-E;LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib)
