# The C examples of README.md, compiled and run as tests.
#
# An example is a fenced ```c block whose opening fence is the first
# non-blank line after a marker line
#     <!-- example: NAME -->
# (NAME: letters, digits, '_' and '-'). Each becomes <build>/readme_examples/
# NAME.c, an executable readme_example_NAME linked to the shared library,
# and a test readme_example.NAME that passes when the program exits with 0.
#
# Two modes:
#  - included from tests/CMakeLists.txt: attn_add_readme_examples(<readme>)
#    reads the marker names at configure time (README.md is a configure
#    dependency, so adding or renaming an example re-runs CMake), and adds a
#    build step that extracts the blocks whenever README.md changes;
#  - as a script, cmake -DREADME=<readme> -DOUTPUT_DIR=<dir> -P
#    readme_examples.cmake: that extraction (writing only files whose text
#    changed, so an edit elsewhere in README.md recompiles nothing).
# A README without markers, or no README, adds no test (a configure message
# says so); a marker not followed by a ```c block, a block never closed, or
# a name used twice is an error.

if(CMAKE_SCRIPT_MODE_FILE)
  cmake_minimum_required(VERSION 3.25) # the policies of the project, in script mode
endif()

# Parses `readme` into <prefix>_NAMES and, for each NAME, <prefix>_CODE_<NAME>.
function(attn_readme_parse readme prefix)
  # one list element per line: ';' and brackets (which CMake's lists treat
  # specially) travel as placeholders and come back in each line
  file(READ "${readme}" content)
  string(REPLACE ";" "<attn-semicolon>" content "${content}")
  string(REPLACE "[" "<attn-open-bracket>" content "${content}")
  string(REPLACE "]" "<attn-close-bracket>" content "${content}")
  string(REPLACE "\r\n" "\n" content "${content}")
  string(REPLACE "\n" ";" lines "${content}")
  set(names "")
  set(state "text") # text -> marker (saw a marker) -> code (inside the block)
  set(line_number 0)
  foreach(line IN LISTS lines)
    math(EXPR line_number "${line_number} + 1")
    string(REPLACE "<attn-semicolon>" ";" line "${line}")
    string(REPLACE "<attn-open-bracket>" "[" line "${line}")
    string(REPLACE "<attn-close-bracket>" "]" line "${line}")
    if(state STREQUAL "code")
      if(line MATCHES "^```[ \t]*$")
        set(state "text")
        set(${prefix}_CODE_${name} "${code}" PARENT_SCOPE)
      else()
        string(APPEND code "${line}\n")
      endif()
    elseif(line MATCHES "^<!--[ \t]*example:[ \t]*([A-Za-z0-9_-]+)[ \t]*-->[ \t]*$")
      if(state STREQUAL "marker")
        message(FATAL_ERROR "${readme}:${line_number}: example marker after marker '${name}'")
      endif()
      set(name "${CMAKE_MATCH_1}")
      if(name IN_LIST names)
        message(FATAL_ERROR "${readme}:${line_number}: example '${name}' defined twice")
      endif()
      list(APPEND names "${name}")
      set(state "marker")
    elseif(state STREQUAL "marker")
      if(line MATCHES "^```c[ \t]*$")
        set(state "code")
        set(code "")
      elseif(NOT line MATCHES "^[ \t]*$")
        message(FATAL_ERROR
          "${readme}:${line_number}: example '${name}' is not followed by a ```c block")
      endif()
    endif()
  endforeach()
  if(NOT state STREQUAL "text")
    message(FATAL_ERROR "${readme}: example '${name}' has no closing ``` fence")
  endif()
  set(${prefix}_NAMES "${names}" PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE)
  if(NOT DEFINED README OR NOT DEFINED OUTPUT_DIR)
    message(FATAL_ERROR
      "usage: cmake -DREADME=<file> -DOUTPUT_DIR=<dir> -P ${CMAKE_SCRIPT_MODE_FILE}")
  endif()
  attn_readme_parse("${README}" example)
  file(MAKE_DIRECTORY "${OUTPUT_DIR}")
  foreach(name IN LISTS example_NAMES)
    set(text "/* Extracted from README.md (example: ${name}); edit it there. */\n")
    string(APPEND text "${example_CODE_${name}}")
    set(path "${OUTPUT_DIR}/${name}.c")
    set(old "")
    if(EXISTS "${path}")
      file(READ "${path}" old)
    endif()
    if(NOT old STREQUAL text)
      file(WRITE "${path}" "${text}")
    endif()
  endforeach()
  # the build's witness that extraction ran for this README.md
  file(TOUCH "${OUTPUT_DIR}/extracted.stamp")
  return()
endif()

# attn_add_readme_examples(<readme>): the executables and tests above; called
# once per document (README.md, docs/examples.md), example names unique
# across them.
function(attn_add_readme_examples readme)
  if(NOT EXISTS "${readme}")
    message(STATUS "README examples: ${readme} does not exist; no example tests")
    return()
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${readme}")
  attn_readme_parse("${readme}" example)
  if(NOT example_NAMES)
    message(STATUS "README examples: no <!-- example: NAME --> marker in ${readme}; "
                   "no example tests")
    return()
  endif()
  get_filename_component(doc "${readme}" NAME_WE) # README, examples: one folder each
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/readme_examples/${doc}")
  set(sources "")
  foreach(name IN LISTS example_NAMES)
    list(APPEND sources "${dir}/${name}.c")
  endforeach()
  set(script "${CMAKE_CURRENT_FUNCTION_LIST_FILE}")
  add_custom_command(
    OUTPUT "${dir}/extracted.stamp"
    BYPRODUCTS ${sources} # rewritten only when their text changes
    COMMAND "${CMAKE_COMMAND}" "-DREADME=${readme}" "-DOUTPUT_DIR=${dir}" -P "${script}"
    DEPENDS "${readme}" "${script}"
    COMMENT "Extracting the C examples of ${doc}.md"
    VERBATIM)
  add_custom_target(readme_examples_${doc} DEPENDS "${dir}/extracted.stamp")
  foreach(name IN LISTS example_NAMES)
    set(target "readme_example_${name}")
    add_executable(${target} "${dir}/${name}.c")
    add_dependencies(${target} readme_examples_${doc})
    # compiled as a user would: the installed-style include, the shared
    # library, the C standard of the project, no project-internal headers
    target_link_libraries(${target} PRIVATE attn)
    target_compile_options(${target} PRIVATE -Wall -Wextra)
    add_test(NAME readme_example.${name} COMMAND ${target})
    set_tests_properties(readme_example.${name} PROPERTIES TIMEOUT 60 LABELS readme)
  endforeach()
  list(LENGTH example_NAMES count)
  message(STATUS "README examples: ${count} (${example_NAMES})")
endfunction()
