# Install test driver, run as `cmake -P` by ctest (see CMakeLists.txt here).
#
#   1. cmake --install the current build tree (components attn_Runtime and
#      attn_Development only) into WORK_DIR/prefix, check the file list, and
#      check the installed libattn.so: SONAME libattn.so.<major>, only attn_*
#      symbols exported (readelf, nm);
#   2. configure, build and run the consumer project against it with
#      find_package(attn CONFIG REQUIRED), linking attn::attn;
#   3. the same linking attn::attn_static;
#   4. compile and link consumer/main.c by hand with
#      `pkg-config --cflags --libs attn` (shared, found through an rpath) and
#      with `pkg-config --static --libs attn` against libattn.a, and run both.
#
# Every compile and link uses the main build's C compiler and its extra flags
# (CONSUMER_C_FLAGS / CONSUMER_LINK_FLAGS: the sanitizer flags of an
# ATTN_SANITIZE build among them), so that a sanitized libattn links.
#
# Inputs (-D): BUILD_DIR CONFIG WORK_DIR CONSUMER_DIR GENERATOR MAKE_PROGRAM
#   C_COMPILER CONSUMER_C_FLAGS CONSUMER_LINK_FLAGS PREFIX_PATH (':'-separated)
#   CBLAS_ROOT LIBDIR VERSION PKG_CONFIG READELF NM (READELF/NM optional: the
#   checks that need them are skipped without them)
cmake_minimum_required(VERSION 3.25)

foreach(var BUILD_DIR WORK_DIR CONSUMER_DIR GENERATOR C_COMPILER LIBDIR VERSION)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_install_test.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT CONFIG)
  set(CONFIG Release)
endif()

set(prefix "${WORK_DIR}/prefix")
if(IS_ABSOLUTE "${LIBDIR}")
  set(libdir "${LIBDIR}")
else()
  set(libdir "${prefix}/${LIBDIR}")
endif()

# Runs a command; on failure prints what ran and its output and stops.
function(step what)
  message(STATUS "---- ${what}")
  string(REPLACE ";" " " shown "${ARGN}")
  message(STATUS "     ${shown}")
  execute_process(COMMAND ${ARGN}
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE out
    ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message("${out}")
    message(FATAL_ERROR "FAILED (${rc}): ${what}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

# Runs a built consumer. With check_shared it must resolve libattn.so from
# `prefix`; without, it must not load libattn.so at all (libattn.a is in it).
function(run_consumer what exe check_shared)
  find_program(LDD ldd)
  if(LDD)
    execute_process(COMMAND ${LDD} "${exe}" OUTPUT_VARIABLE ldd_out ERROR_VARIABLE ldd_out)
    string(REGEX MATCH "libattn\\.so[^\n]*" line "${ldd_out}")
    if(check_shared)
      string(FIND "${line}" "=> ${prefix}/" found_at)
      if(found_at EQUAL -1)
        message(FATAL_ERROR "${what}: libattn.so not resolved from ${prefix}:\n${ldd_out}")
      endif()
    elseif(line)
      message(FATAL_ERROR "${what}: linked statically but loads ${line}")
    endif()
  endif()
  step("run ${what}" "${exe}")
  string(STRIP "${step_output}" shown)
  message(STATUS "     ${shown}")
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# ---- 1. install
foreach(component attn_Runtime attn_Development)
  step("install ${component}"
    "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --config "${CONFIG}"
    --prefix "${prefix}" --component ${component})
endforeach()
foreach(file
    "include/attn/attn.h"
    "include/attn/attn_half.h"
    "include/attn/attn_openmp.h"
    "${LIBDIR}/libattn.a"
    "${LIBDIR}/libattn.so"
    "${LIBDIR}/libattn.so.0"
    "${LIBDIR}/cmake/attn/attnConfig.cmake"
    "${LIBDIR}/cmake/attn/attnConfigVersion.cmake"
    "${LIBDIR}/cmake/attn/attnTargets.cmake"
    "${LIBDIR}/cmake/attn/FindCBLAS.cmake"
    "${LIBDIR}/pkgconfig/attn.pc")
  if(NOT EXISTS "${prefix}/${file}")
    message(FATAL_ERROR "not installed: ${file}")
  endif()
endforeach()
file(GLOB headers RELATIVE "${prefix}" "${prefix}/include/*" "${prefix}/include/*/*")
if(NOT headers STREQUAL
    "include/attn;include/attn/attn.h;include/attn/attn_half.h;include/attn/attn_openmp.h")
  message(FATAL_ERROR
    "the installed include/ is not attn/attn.h, attn_half.h, attn_openmp.h: ${headers}")
endif()

# The installed shared library: SONAME libattn.so.<major>, and its dynamic
# symbol table defines nothing but the public attn_* entry points.
string(REGEX MATCH "^[0-9]+" major "${VERSION}")
if(READELF)
  step("readelf -d libattn.so" "${READELF}" -d "${libdir}/libattn.so")
  string(FIND "${step_output}" "Library soname: [libattn.so.${major}]" found_at)
  if(found_at EQUAL -1)
    message(FATAL_ERROR "libattn.so has not the SONAME libattn.so.${major}:\n${step_output}")
  endif()
endif()
if(NM)
  step("nm -D --defined-only libattn.so" "${NM}" -D --defined-only "${libdir}/libattn.so")
  string(REGEX MATCHALL "[^\n]+" lines "${step_output}")
  set(exported "")
  set(foreign "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^[0-9a-fA-F]* *[A-Za-z] +([^ ]+)$")
      set(symbol "${CMAKE_MATCH_1}")
      if(symbol MATCHES "^attn_")
        list(APPEND exported "${symbol}")
      else()
        list(APPEND foreign "${symbol}")
      endif()
    endif()
  endforeach()
  if(foreign)
    message(FATAL_ERROR "libattn.so exports symbols outside attn_*: ${foreign}")
  endif()
  list(LENGTH exported n)
  if(n EQUAL 0)
    message(FATAL_ERROR "no attn_* symbol found in libattn.so:\n${step_output}")
  endif()
  message(STATUS "     ${n} symbols, all attn_*")
endif()

# ---- 2, 3. CMake package
set(common_args
  -G "${GENERATOR}"
  "-DCMAKE_BUILD_TYPE=${CONFIG}"
  "-DCMAKE_C_COMPILER=${C_COMPILER}"
  "-DCMAKE_C_FLAGS=${CONSUMER_C_FLAGS}"
  "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_LINK_FLAGS}"
  "-DATTN_CONSUMER_VERSION=${VERSION}")
if(MAKE_PROGRAM)
  list(APPEND common_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(CBLAS_ROOT)
  list(APPEND common_args "-DCBLAS_ROOT=${CBLAS_ROOT}")
endif()

# The scratch prefix first, then the main build's CMAKE_PREFIX_PATH
# (':'-separated), through the environment variable of the same name.
if(PREFIX_PATH)
  set(ENV{CMAKE_PREFIX_PATH} "${prefix}:${PREFIX_PATH}")
else()
  set(ENV{CMAKE_PREFIX_PATH} "${prefix}")
endif()

foreach(link shared static)
  if(link STREQUAL "shared")
    set(target attn::attn)
    set(is_shared TRUE)
  else()
    set(target attn::attn_static)
    set(is_shared FALSE)
  endif()
  set(dir "${WORK_DIR}/consumer-cmake-${link}")
  step("configure consumer (${target})"
    "${CMAKE_COMMAND}" -S "${CONSUMER_DIR}" -B "${dir}" ${common_args}
    "-DATTN_CONSUMER_LINK=${target}")
  string(FIND "${step_output}" "attn ${VERSION} from ${prefix}/" found_at)
  if(found_at EQUAL -1)
    message(FATAL_ERROR "the consumer did not find attn ${VERSION} in ${prefix}:\n${step_output}")
  endif()
  step("build consumer (${target})"
    "${CMAKE_COMMAND}" --build "${dir}" --config "${CONFIG}")
  file(GLOB_RECURSE exe LIST_DIRECTORIES false "${dir}/attn_consumer")
  list(LENGTH exe n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "expected one attn_consumer under ${dir}, found: ${exe}")
  endif()
  run_consumer("consumer (${target})" "${exe}" ${is_shared})
endforeach()

# ---- 4. pkg-config
if(NOT PKG_CONFIG)
  message(FATAL_ERROR "pkg-config was not found at configure time (-DPKG_CONFIG=...)")
endif()
set(ENV{PKG_CONFIG_PATH} "${libdir}/pkgconfig")
step("pkg-config --validate" "${PKG_CONFIG}" --validate attn)
step("pkg-config --modversion" "${PKG_CONFIG}" --modversion attn)
string(STRIP "${step_output}" pc_version)
if(NOT pc_version STREQUAL VERSION)
  message(FATAL_ERROR "attn.pc says version ${pc_version}, expected ${VERSION}")
endif()
step("pkg-config --cflags" "${PKG_CONFIG}" --cflags attn)
separate_arguments(pc_cflags UNIX_COMMAND "${step_output}")
step("pkg-config --libs" "${PKG_CONFIG}" --libs attn)
separate_arguments(pc_libs UNIX_COMMAND "${step_output}")
step("pkg-config --static --libs" "${PKG_CONFIG}" --static --libs attn)
separate_arguments(pc_static_libs UNIX_COMMAND "${step_output}")
# Link libattn.a itself: -lattn would pick the .so that sits beside it.
list(TRANSFORM pc_static_libs REPLACE "^-lattn$" "-l:libattn.a")

separate_arguments(c_flags UNIX_COMMAND "${CONSUMER_C_FLAGS}")
separate_arguments(link_flags UNIX_COMMAND "${CONSUMER_LINK_FLAGS}")
set(compile_flags -std=c11 -O2 -Wall -Wextra -Wpedantic -Werror ${c_flags})

set(exe "${WORK_DIR}/consumer-pkgconfig-shared")
step("compile+link consumer with pkg-config --libs (shared)"
  "${C_COMPILER}" ${compile_flags} ${pc_cflags} "${CONSUMER_DIR}/main.c" -o "${exe}"
  ${link_flags} ${pc_libs} -lm "-Wl,-rpath,${libdir}")
run_consumer("consumer (pkg-config, shared)" "${exe}" TRUE)

set(exe "${WORK_DIR}/consumer-pkgconfig-static")
step("compile+link consumer with pkg-config --static --libs (libattn.a)"
  "${C_COMPILER}" ${compile_flags} ${pc_cflags} "${CONSUMER_DIR}/main.c" -o "${exe}"
  ${link_flags} ${pc_static_libs})
run_consumer("consumer (pkg-config, static)" "${exe}" FALSE)

message(STATUS "install test: all consumers built and ran")
