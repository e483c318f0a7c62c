# FindCBLAS — the C interface to BLAS that attn links, chosen by ATTN_BLAS:
#   OpenBLAS (the default)  OpenBLAS's pkg-config file, then the usual header
#                           and library names (Debian puts them under an
#                           openblas-pthread/ sub-directory)
#   BLIS                    BLIS's CBLAS layer (Debian's libblis-dev: blis.pc,
#                           or blis-pthread/ / blis-openmp/ sub-directories)
#   CBLAS                   the reference CBLAS through pkg-config (cblas.pc or
#                           Debian's blas-netlib.pc: libblas-dev), else the
#                           netlib libcblas/libblas names
# Defines CBLAS_FOUND, CBLAS_INCLUDE_DIR, CBLAS_LIBRARY, CBLAS_VENDOR (the
# ATTN_BLAS it found) and the imported target CBLAS::CBLAS. Set CBLAS_ROOT to
# point at another installation. Only the header's cblas_?gemm is used; a
# BLAS's own thread-count calls are looked up at run time where they are
# wanted (attn-bench), never required.
include(FindPackageHandleStandardArgs)

if(NOT ATTN_BLAS)
  set(ATTN_BLAS OpenBLAS)
endif()
set(_attn_blas_kinds OpenBLAS BLIS CBLAS)
if(NOT ATTN_BLAS IN_LIST _attn_blas_kinds)
  message(FATAL_ERROR "ATTN_BLAS is '${ATTN_BLAS}': OpenBLAS, BLIS or CBLAS")
endif()

find_package(PkgConfig QUIET)
if(ATTN_BLAS STREQUAL "OpenBLAS")
  set(_attn_pc openblas)
  set(_attn_names openblas)
  set(_attn_suffixes openblas-pthread openblas openblas-openmp openblas-serial)
elseif(ATTN_BLAS STREQUAL "BLIS")
  set(_attn_pc blis)
  set(_attn_names blis)
  foreach(_attn_flavour pthread openmp serial)
    list(APPEND _attn_suffixes blis-${_attn_flavour} ${CMAKE_LIBRARY_ARCHITECTURE}/blis-${_attn_flavour})
  endforeach()
  list(APPEND _attn_suffixes blis)
else()
  set(_attn_pc cblas blas-netlib) # Debian's netlib libblas carries the CBLAS symbols
  set(_attn_names cblas blas)
  set(_attn_suffixes blas)
endif()
if(PkgConfig_FOUND)
  pkg_search_module(PC_CBLAS QUIET ${_attn_pc})
endif()

find_path(CBLAS_INCLUDE_DIR cblas.h
  HINTS ${PC_CBLAS_INCLUDE_DIRS}
  PATH_SUFFIXES ${_attn_suffixes})
find_library(CBLAS_LIBRARY NAMES ${_attn_names}
  HINTS ${PC_CBLAS_LIBRARY_DIRS}
  PATH_SUFFIXES ${_attn_suffixes})
set(CBLAS_VENDOR "${ATTN_BLAS}")

find_package_handle_standard_args(CBLAS REQUIRED_VARS CBLAS_LIBRARY CBLAS_INCLUDE_DIR)

if(CBLAS_FOUND AND NOT TARGET CBLAS::CBLAS)
  add_library(CBLAS::CBLAS UNKNOWN IMPORTED)
  set_target_properties(CBLAS::CBLAS PROPERTIES
    IMPORTED_LOCATION "${CBLAS_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CBLAS_INCLUDE_DIR}")
  if(ATTN_BLAS STREQUAL "BLIS")
    # BLIS's cblas.h includes blis.h, which needs POSIX's pthread_barrier_t:
    # hidden by a strict -std=c11 without this
    set_target_properties(CBLAS::CBLAS PROPERTIES
      INTERFACE_COMPILE_DEFINITIONS "_POSIX_C_SOURCE=200809L")
  endif()
endif()
mark_as_advanced(CBLAS_INCLUDE_DIR CBLAS_LIBRARY)
unset(_attn_blas_kinds)
unset(_attn_pc)
unset(_attn_names)
unset(_attn_suffixes)
