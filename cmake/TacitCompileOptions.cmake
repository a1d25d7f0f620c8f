# Compile options shared by every tacit target.

# Exported as tacit::options with the package (cmake/TacitPackage.cmake): projects that link
# tacit's libraries get C++20 and the sanitizer flags the libraries need, but not tacit's
# warnings, -Werror or tuning (those are $<BUILD_INTERFACE:...>).
add_library(tacit_options INTERFACE)
set_target_properties(tacit_options PROPERTIES EXPORT_NAME options)
target_compile_features(tacit_options INTERFACE cxx_std_20)
set(tacit_build_flags
  -Wall -Wextra -Wpedantic -Wnon-virtual-dtor -Wimplicit-fallthrough
  # Bit-faithfulness: never contract a*b+c into an FMA behind the semantics' back.
  -ffp-contract=off)
if(TACIT_WERROR)
  list(APPEND tacit_build_flags -Werror)
endif()
if(TACIT_LINE_TABLES)
  # After the build type's -g: sanitizer reports and debuggers still get file:line, and CI's
  # builds spend about a quarter less compiler time than with full debug info.
  list(APPEND tacit_build_flags -g1)
endif()
# The portable default: x86-64-v3 (AVX2, FMA, BMI2: Haswell, Zen 1 and later) for the code at
# large; the wider kernels (AVX-512) are compiled beside it with target attributes and chosen at
# run time (support/simd.h), so one binary runs at its best on every such machine. TACIT_NATIVE
# builds for the build machine alone (its binaries may not start elsewhere).
if(TACIT_NATIVE)
  list(APPEND tacit_build_flags -march=native)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  list(APPEND tacit_build_flags -march=x86-64-v3)
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # GCC 12 reports false positives in <string>/<vector> at -O2/-O3 (GCC bugs 105329, 106199).
  list(APPEND tacit_build_flags -Wno-restrict -Wno-array-bounds -Wno-stringop-overflow)
  # GCC's spelling; clang (the fuzz build) does not know it and would warn once per file.
  list(APPEND tacit_build_flags -Wshadow=local)
endif()
target_compile_options(tacit_options INTERFACE "$<BUILD_INTERFACE:${tacit_build_flags}>")
if(TACIT_SANITIZE)
  # -O1, as AddressSanitizer recommends: the sanitizer suite runs the test suite (the evaluator's
  # corpus, the tiled kernels' saturation) several times faster than unoptimised code, and the
  # build type stays Debug, so assertions stay on.
  target_compile_options(tacit_options INTERFACE -fsanitize=address,undefined -fno-sanitize-recover=all
                         -fno-omit-frame-pointer -O1)
  target_link_options(tacit_options INTERFACE -fsanitize=address,undefined -fno-sanitize-recover=all)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC 12 at -O1 with the sanitizers reports -Wmaybe-uninitialized inside libstdc++'s
    # <regex>/<functional> (false positives); the optimised build keeps the warning.
    target_compile_options(tacit_options INTERFACE "$<BUILD_INTERFACE:-Wno-maybe-uninitialized>")
  endif()
endif()
if(TACIT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "tacit: TACIT_FUZZ=ON needs clang (configure with -DCMAKE_CXX_COMPILER=clang++)")
  endif()
  # Every target gets the sanitizers; only the fuzzed modules get libFuzzer's coverage
  # instrumentation (fuzz/CMakeLists.txt), so the test suite built alongside runs at sanitizer speed.
  target_compile_options(tacit_options INTERFACE -fsanitize=address,undefined)
  target_link_options(tacit_options INTERFACE -fsanitize=address,undefined)
endif()

# tacit_library(NAME DEPS ...): one static library per module, built from every .cc file in the
# module's folder (recursively), so that adding a file never needs an edit here.
function(tacit_library name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  add_library(tacit_${name} STATIC ${sources})
  add_library(tacit::${name} ALIAS tacit_${name})
  set_target_properties(tacit_${name} PROPERTIES EXPORT_NAME ${name})
  target_include_directories(tacit_${name} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>
                                                  $<INSTALL_INTERFACE:include/tacit>)
  target_link_libraries(tacit_${name} PUBLIC tacit_options ${ARG_DEPS})
  # Every module library is installed and exported as tacit::<module> (cmake/TacitPackage.cmake).
  set_property(GLOBAL APPEND PROPERTY TACIT_EXPORTED_LIBRARIES tacit_${name})
endfunction()

# tacit_test(NAME SOURCES... DEPS ... [LABELS ...]): a GoogleTest executable registered with CTest.
function(tacit_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE tacit_options ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(${name} PRIVATE
    TACIT_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    TACIT_SHARED_DIR="${PROJECT_SOURCE_DIR}/../shared"
    TACIT_BINARY_DIR="${PROJECT_BINARY_DIR}")
  include(GoogleTest)
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS "${ARG_LABELS}")
endfunction()

# tacit_simd_level_runs(TEST_TARGET [EXCLUDE gtest-negative-filter]): the test executable again
# with the SIMD level capped at generic and at avx2 (TACIT_SIMD, support/simd.h), one CTest test
# per level: every level must compute the same bytes, and CI's machine has at least AVX2, so both
# run whatever it has above. EXCLUDE leaves out suites too slow to run three times.
function(tacit_simd_level_runs target)
  cmake_parse_arguments(ARG "" "EXCLUDE" "" ${ARGN})
  set(filter "")
  if(ARG_EXCLUDE)
    set(filter "--gtest_filter=-${ARG_EXCLUDE}")
  endif()
  foreach(level generic avx2)
    add_test(NAME SimdLevel.${level}.${target} COMMAND ${target} --gtest_brief=1 ${filter})
    set_tests_properties(SimdLevel.${level}.${target} PROPERTIES
      ENVIRONMENT "TACIT_SIMD=${level}" TIMEOUT 900 LABELS simd_level)
  endforeach()
endfunction()

# tacit_emulated_cpu_run(TEST_TARGET [EXCLUDE gtest-negative-filter]): the test executable on a
# CPU without AVX-512 (a Haswell: AVX2 and FMA), emulated by QEMU's user mode (Debian's
# qemu-user; scripts/setup): the portable build must start there, choose its AVX2 kernels from
# the CPU's own answer (not TACIT_SIMD) and execute no AVX-512 instruction (docs/design.md, "SIMD
# levels"). QEMU does not model which NaN operand, with which payload, an x86 instruction returns:
# EXCLUDE leaves out the tests of exactly that. Not under sanitizers (their shadow memory and
# QEMU's do not mix).
function(tacit_emulated_cpu_run target)
  cmake_parse_arguments(ARG "" "EXCLUDE" "" ${ARGN})
  find_program(TACIT_QEMU_X86_64 qemu-x86_64)
  if(NOT TACIT_QEMU_X86_64 OR TACIT_SANITIZE)
    return()
  endif()
  set(filter "")
  if(ARG_EXCLUDE)
    set(filter "--gtest_filter=-${ARG_EXCLUDE}")
  endif()
  add_test(NAME EmulatedCpu.haswell.${target}
           COMMAND ${TACIT_QEMU_X86_64} -cpu Haswell-v4 $<TARGET_FILE:${target}> --gtest_brief=1
                   ${filter})
  set_tests_properties(EmulatedCpu.haswell.${target} PROPERTIES TIMEOUT 900 LABELS emulated_cpu)
endfunction()
