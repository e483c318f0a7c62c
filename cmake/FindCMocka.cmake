# FindCMocka — the cmocka unit-test library (Debian: libcmocka-dev).
# Uses cmocka's own CMake package when present, else pkg-config, else a plain
# search. Defines CMocka_FOUND and the imported target CMocka::CMocka.
include(FindPackageHandleStandardArgs)

find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PC_CMOCKA QUIET cmocka)
endif()

find_path(CMOCKA_INCLUDE_DIR cmocka.h HINTS ${PC_CMOCKA_INCLUDE_DIRS})
find_library(CMOCKA_LIBRARY NAMES cmocka HINTS ${PC_CMOCKA_LIBRARY_DIRS})

find_package_handle_standard_args(CMocka REQUIRED_VARS CMOCKA_LIBRARY CMOCKA_INCLUDE_DIR)

if(CMocka_FOUND AND NOT TARGET CMocka::CMocka)
  add_library(CMocka::CMocka UNKNOWN IMPORTED)
  set_target_properties(CMocka::CMocka PROPERTIES
    IMPORTED_LOCATION "${CMOCKA_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CMOCKA_INCLUDE_DIR}")
endif()
mark_as_advanced(CMOCKA_INCLUDE_DIR CMOCKA_LIBRARY)
