# Install rules and package files for attn.
#
# Installed tree (paths relative to the install prefix, GNUInstallDirs names):
#   ${CMAKE_INSTALL_INCLUDEDIR}/attn/attn.h, attn_half.h, attn_openmp.h  the public
#       headers (attn.h includes attn_half.h)
#   ${CMAKE_INSTALL_LIBDIR}/libattn.so.X.Y.Z (+ .so.X, .so links), libattn.a
#   ${CMAKE_INSTALL_LIBDIR}/cmake/attn/                 attnConfig.cmake,
#       attnConfigVersion.cmake, attnTargets*.cmake (attn::attn,
#       attn::attn_static) and FindCBLAS.cmake (used by attnConfig.cmake)
#   ${CMAKE_INSTALL_LIBDIR}/pkgconfig/attn.pc
#
# Components: attn_Runtime (the shared library proper, libattn.so.X and
# libattn.so.X.Y.Z) and attn_Development (everything else), so that e.g.
# `cmake --install build --component attn_Runtime` installs only what a
# program linked against libattn needs to run.
#
# Everything installed is relocatable: the CMake package locates itself from
# its own directory and attn.pc from ${pcfiledir}, so `cmake --install build
# --prefix DIR` gives a working tree in DIR whatever CMAKE_INSTALL_PREFIX was
# at configure time.

include(CMakePackageConfigHelpers)

set(ATTN_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/attn"
  CACHE STRING "Where attnConfig.cmake is installed (relative to the prefix)")
mark_as_advanced(ATTN_INSTALL_CMAKEDIR)

# ---- headers: only the public ones (lib/*.h are internal)
install(FILES "${PROJECT_SOURCE_DIR}/include/attn/attn.h"
  "${PROJECT_SOURCE_DIR}/include/attn/attn_half.h"
  "${PROJECT_SOURCE_DIR}/include/attn/attn_openmp.h"
  DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/attn"
  COMPONENT attn_Development)

# ---- libraries and their export set
install(TARGETS attn attn_static
  EXPORT attnTargets
  LIBRARY
    DESTINATION "${CMAKE_INSTALL_LIBDIR}"
    COMPONENT attn_Runtime
    NAMELINK_COMPONENT attn_Development
  ARCHIVE
    DESTINATION "${CMAKE_INSTALL_LIBDIR}"
    COMPONENT attn_Development
  RUNTIME
    DESTINATION "${CMAKE_INSTALL_BINDIR}"
    COMPONENT attn_Runtime)
# (The include directory comes from the targets' INSTALL_INTERFACE in
# lib/CMakeLists.txt, so no INCLUDES DESTINATION here.)

install(EXPORT attnTargets
  NAMESPACE attn::
  FILE attnTargets.cmake
  DESTINATION "${ATTN_INSTALL_CMAKEDIR}"
  COMPONENT attn_Development)

# ---- CMake package: attnConfig.cmake + attnConfigVersion.cmake
configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/attnConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/attnConfig.cmake"
  INSTALL_DESTINATION "${ATTN_INSTALL_CMAKEDIR}")

# While the major version is 0 the API is not stable: under semantic
# versioning 0.y.z may break anything at each minor step, so a request for
# 0.1 must accept 0.1.z (z >= requested) but neither 0.2 nor 1.0.
# SameMajorVersion would accept 0.2 for a request of 0.1. From 1.0 on the
# rule becomes SameMajorVersion.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_attn_version_compat SameMinorVersion)
else()
  set(_attn_version_compat SameMajorVersion)
endif()
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/attnConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY ${_attn_version_compat})
unset(_attn_version_compat)

install(FILES
    "${PROJECT_BINARY_DIR}/attnConfig.cmake"
    "${PROJECT_BINARY_DIR}/attnConfigVersion.cmake"
    "${PROJECT_SOURCE_DIR}/cmake/FindCBLAS.cmake"
  DESTINATION "${ATTN_INSTALL_CMAKEDIR}"
  COMPONENT attn_Development)

# ---- pkg-config: attn.pc
# prefix is written relative to the .pc file's own directory when the install
# dirs are relative (the usual case), so the tree stays relocatable; an
# absolute CMAKE_INSTALL_LIBDIR/INCLUDEDIR is written as is.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(ATTN_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(ATTN_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  # e.g. lib/pkgconfig -> ../.. ; lib/x86_64-linux-gnu/pkgconfig -> ../../..
  file(RELATIVE_PATH _attn_pc_up
    "/attn-prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/attn-prefix")
  string(REGEX REPLACE "/$" "" _attn_pc_up "${_attn_pc_up}")
  set(ATTN_PC_PREFIX "\${pcfiledir}/${_attn_pc_up}")
  set(ATTN_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  unset(_attn_pc_up)
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(ATTN_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(ATTN_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()

# What a static link of libattn.a needs besides it: the CBLAS library the
# build found (with its directory when the linker would not search it by
# itself; Debian's is under openblas-pthread/), threads and libm.
set(ATTN_PC_LIBS_PRIVATE "")
if(CBLAS_LIBRARY MATCHES "^(.*)/lib([^/]+)\\.(so|a)([.0-9]*)$")
  set(_attn_blas_dir "${CMAKE_MATCH_1}")
  set(_attn_blas_name "${CMAKE_MATCH_2}")
  if(NOT _attn_blas_dir IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
    string(APPEND ATTN_PC_LIBS_PRIVATE "-L${_attn_blas_dir} ")
  endif()
  string(APPEND ATTN_PC_LIBS_PRIVATE "-l${_attn_blas_name}")
  unset(_attn_blas_dir)
  unset(_attn_blas_name)
else()
  string(APPEND ATTN_PC_LIBS_PRIVATE "-lopenblas")
endif()
string(APPEND ATTN_PC_LIBS_PRIVATE " -lpthread -lm")

configure_file("${PROJECT_SOURCE_DIR}/cmake/attn.pc.in"
  "${PROJECT_BINARY_DIR}/attn.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/attn.pc"
  DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig"
  COMPONENT attn_Development)
