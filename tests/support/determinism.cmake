# Runs test_determinism (PROGRAM) in several processes under environments
# that docs/api.md ("Determinism") says do not change a result, and compares
# what they print (see the header of unit/test_determinism.c):
#   - the `own` lines (attn's own threads) of every run are the same: with
#     ATTN_NUM_THREADS unset, 1, 3 and 0, and OPENBLAS_NUM_THREADS 1 and 2
#     (the own engine never calls BLAS; the thread count changes nothing);
#     where the default engine is own threads, so is the whole output
#     (default plans and one-shots);
#   - with BLAS threads (ATTN_NUM_THREADS=0), two processes at the same BLAS
#     thread count print the same; whether counts 1 and 2 agree is reported,
#     not required (it depends on the BLAS kernel).
# Each process also checks the in-process equalities itself (exit 1).
# Usage: cmake -DPROGRAM=<path> [-DEMULATOR=<command|arg|...>] -P determinism.cmake
# (EMULATOR: a cross build's CMAKE_CROSSCOMPILING_EMULATOR, '|'-joined).
if(NOT PROGRAM)
  message(FATAL_ERROR "PROGRAM not set")
endif()
string(REPLACE "|" ";" EMULATOR "${EMULATOR}")

# run(<var> <env assignment>...): the program's output under the environment
# (ATTN_NUM_THREADS and OPENBLAS_NUM_THREADS unset unless assigned).
function(run var)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env --unset=ATTN_NUM_THREADS --unset=OPENBLAS_NUM_THREADS
            --unset=OMP_NUM_THREADS ${ARGN} ${EMULATOR} ${PROGRAM}
    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  message(STATUS "[${ARGN}]\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "test_determinism failed under [${ARGN}] (exit ${rc})")
  endif()
  set(${var} "${out}" PARENT_SCOPE)
endfunction()

# own_lines(<var> <output>): the lines of own-thread digests
function(own_lines var text)
  string(REGEX MATCHALL "[^\n]* own [0-9a-f]+" lines "${text}")
  set(${var} "${lines}" PARENT_SCOPE)
endfunction()

run(base)
own_lines(base_own "${base}")
list(LENGTH base_own n)
if(n EQUAL 0)
  message(FATAL_ERROR "no own-thread digests printed")
endif()
# Where the default is attn's own threads (every SIMD kernel set but the
# scalar one), the whole output, one-shots included, is the same whatever
# ATTN_NUM_THREADS (>= 1) or OPENBLAS_NUM_THREADS say.
string(FIND "${base}" "default-blas" blas_default)
foreach(env "ATTN_NUM_THREADS=1" "ATTN_NUM_THREADS=3" "OPENBLAS_NUM_THREADS=1"
            "OPENBLAS_NUM_THREADS=2" "ATTN_NUM_THREADS=0;OPENBLAS_NUM_THREADS=2")
  run(out ${env})
  own_lines(other "${out}")
  if(NOT other STREQUAL base_own)
    message(FATAL_ERROR "own-thread results differ under [${env}]:\n${other}\nagainst\n${base_own}")
  endif()
  if(blas_default EQUAL -1 AND NOT env MATCHES "ATTN_NUM_THREADS=0" AND NOT out STREQUAL base)
    message(FATAL_ERROR "default results differ under [${env}]:\n${out}\nagainst\n${base}")
  endif()
endforeach()

set(blas_runs "")
foreach(count 1 2)
  run(first ATTN_NUM_THREADS=0 OPENBLAS_NUM_THREADS=${count})
  run(second ATTN_NUM_THREADS=0 OPENBLAS_NUM_THREADS=${count})
  if(NOT first STREQUAL second)
    message(FATAL_ERROR "BLAS threads (${count}): two processes differ:\n${first}\n${second}")
  endif()
  list(APPEND blas_runs "${first}")
endforeach()
list(GET blas_runs 0 blas1)
list(GET blas_runs 1 blas2)
if(blas1 STREQUAL blas2)
  message(STATUS "BLAS threads: 1 and 2 BLAS threads gave the same bytes (not promised)")
else()
  message(STATUS "BLAS threads: 1 and 2 BLAS threads differ (allowed: depends on the BLAS kernel)")
endif()
message(STATUS "determinism: every stated equality holds")
