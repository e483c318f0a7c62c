# FindCBLAS — the C interface to BLAS, as shipped by OpenBLAS.
#
# Looks in this order: OpenBLAS's pkg-config file, then the usual header and
# library names (Debian puts them under an openblas-pthread/ sub-directory).
# Defines CBLAS_FOUND, CBLAS_INCLUDE_DIR, CBLAS_LIBRARY and the imported
# target CBLAS::CBLAS. Set CBLAS_ROOT to point at another installation.
include(FindPackageHandleStandardArgs)

find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PC_OPENBLAS QUIET openblas)
endif()

find_path(CBLAS_INCLUDE_DIR cblas.h
  HINTS ${PC_OPENBLAS_INCLUDE_DIRS}
  PATH_SUFFIXES openblas-pthread openblas openblas-openmp openblas-serial)
find_library(CBLAS_LIBRARY NAMES openblas
  HINTS ${PC_OPENBLAS_LIBRARY_DIRS}
  PATH_SUFFIXES openblas-pthread openblas openblas-openmp openblas-serial)

find_package_handle_standard_args(CBLAS REQUIRED_VARS CBLAS_LIBRARY CBLAS_INCLUDE_DIR)

if(CBLAS_FOUND AND NOT TARGET CBLAS::CBLAS)
  add_library(CBLAS::CBLAS UNKNOWN IMPORTED)
  set_target_properties(CBLAS::CBLAS PROPERTIES
    IMPORTED_LOCATION "${CBLAS_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CBLAS_INCLUDE_DIR}")
endif()
mark_as_advanced(CBLAS_INCLUDE_DIR CBLAS_LIBRARY)
