# FindLAPACKE — the C interface to LAPACK (Debian: liblapacke-dev).
# Defines LAPACKE_FOUND and the imported target LAPACKE::LAPACKE.
include(FindPackageHandleStandardArgs)

find_path(LAPACKE_INCLUDE_DIR lapacke.h PATH_SUFFIXES lapacke openblas-pthread)
find_library(LAPACKE_LIBRARY NAMES lapacke)

find_package_handle_standard_args(LAPACKE REQUIRED_VARS LAPACKE_LIBRARY LAPACKE_INCLUDE_DIR)

if(LAPACKE_FOUND AND NOT TARGET LAPACKE::LAPACKE)
  add_library(LAPACKE::LAPACKE UNKNOWN IMPORTED)
  set_target_properties(LAPACKE::LAPACKE PROPERTIES
    IMPORTED_LOCATION "${LAPACKE_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${LAPACKE_INCLUDE_DIR}")
endif()
mark_as_advanced(LAPACKE_INCLUDE_DIR LAPACKE_LIBRARY)
