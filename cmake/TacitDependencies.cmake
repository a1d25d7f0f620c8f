# Every external dependency is a Debian 12 package installed by scripts/setup.
# A missing one stops configuration with the package to install, not a link error later.

function(tacit_require_package found_var what package)
  if(NOT ${found_var})
    message(FATAL_ERROR "tacit: ${what} not found. Install it with: "
                        "sudo apt-get install --no-install-recommends ${package} "
                        "(or run scripts/setup, which installs every build dependency)")
  endif()
endfunction()

# tacit_interface_library(NAME HEADER LIBRARY WHAT PACKAGE): an INTERFACE target tacit_NAME for a
# C library found as HEADER and LIBRARY (Debian packages without a CMake config), exported as
# tacit::NAME with the absolute paths found here (cmake/TacitPackage.cmake).
function(tacit_interface_library name header library what package)
  string(TOUPPER ${name} upper)
  find_path(${upper}_INCLUDE_DIR ${header})
  find_library(${upper}_LIB ${library})
  if(${upper}_INCLUDE_DIR AND ${upper}_LIB)
    set(found TRUE)
  endif()
  tacit_require_package(found "${what}" ${package})
  add_library(tacit_${name} INTERFACE)
  set_target_properties(tacit_${name} PROPERTIES EXPORT_NAME ${name})
  target_include_directories(tacit_${name} SYSTEM INTERFACE ${${upper}_INCLUDE_DIR})
  target_link_libraries(tacit_${name} INTERFACE ${${upper}_LIB})
endfunction()

find_package(Threads REQUIRED)

# Xbyak: the x86 code generator (header-only) that compiles the evaluator's fused elementwise
# runs to AVX-512 code (src/hlo_eval/evaluator_native.cc). Only that file includes it.
find_path(XBYAK_INCLUDE_DIR xbyak/xbyak.h)
if(XBYAK_INCLUDE_DIR)
  set(XBYAK_FOUND TRUE)
endif()
tacit_require_package(XBYAK_FOUND "Xbyak" libxbyak-dev)

# nlohmann/json (header-only): tiling schedules (--schedule, --emit-schedule). Found as a path, not
# as its CMake package, so that the exported static libraries carry no dependency on it.
find_path(NLOHMANN_JSON_INCLUDE_DIR nlohmann/json.hpp)
if(NLOHMANN_JSON_INCLUDE_DIR)
  set(NLOHMANN_JSON_FOUND TRUE)
endif()
tacit_require_package(NLOHMANN_JSON_FOUND "nlohmann/json" nlohmann-json3-dev)

# Gecode: constraint programming for scratchpad allocation (libgecode-dev ships no CMake config).
find_path(GECODE_INCLUDE_DIR gecode/int.hh)
find_library(GECODE_INT_LIB gecodeint)
find_library(GECODE_KERNEL_LIB gecodekernel)
find_library(GECODE_SEARCH_LIB gecodesearch)
find_library(GECODE_SUPPORT_LIB gecodesupport)
find_library(GECODE_MINIMODEL_LIB gecodeminimodel)
if(GECODE_INCLUDE_DIR AND GECODE_INT_LIB AND GECODE_KERNEL_LIB AND GECODE_SEARCH_LIB
   AND GECODE_SUPPORT_LIB AND GECODE_MINIMODEL_LIB)
  set(GECODE_FOUND TRUE)
endif()
tacit_require_package(GECODE_FOUND "Gecode" libgecode-dev)
add_library(tacit_gecode INTERFACE)
# Exported as tacit::gecode with the absolute paths found here (cmake/TacitPackage.cmake).
set_target_properties(tacit_gecode PROPERTIES EXPORT_NAME gecode)
target_include_directories(tacit_gecode SYSTEM INTERFACE ${GECODE_INCLUDE_DIR})
target_link_libraries(tacit_gecode INTERFACE ${GECODE_MINIMODEL_LIB} ${GECODE_SEARCH_LIB}
                      ${GECODE_INT_LIB} ${GECODE_KERNEL_LIB} ${GECODE_SUPPORT_LIB} Threads::Threads)

# XGBoost (C API): the learned cost models' gradient-boosted trees (src/costmodel).
tacit_interface_library(xgboost xgboost/c_api.h xgboost "XGBoost" libxgboost-dev)
# libcurl: `tacit optimize`'s HTTP(S) client for chat-completion servers (src/optimize).
tacit_interface_library(curl curl/curl.h curl "libcurl" libcurl4-openssl-dev)

# mimalloc: the memory allocator of tacit's executables (the CLI, generated backends,
# bench_backend), not of its libraries — a program embedding them keeps its own. Phase 1 allocates
# and frees e-nodes, views and match records by the hundred thousand; with glibc's allocator that
# churn (and re-faulting the pages it returns to the system) was a fifth of a compile (K5, the
# Gemmini compositions: 15-50% faster with mimalloc, docs/isel.md). Sanitizer builds keep their
# own allocator. The link is not --as-needed: nothing names a mimalloc symbol, it replaces malloc.
add_library(tacit_malloc INTERFACE)
add_library(tacit::malloc ALIAS tacit_malloc)  # for generated backends built from the sources
set_target_properties(tacit_malloc PROPERTIES EXPORT_NAME malloc)
if(NOT TACIT_SANITIZE)
  find_library(MIMALLOC_LIB NAMES mimalloc)
  if(MIMALLOC_LIB)
    set(MIMALLOC_FOUND TRUE)
  endif()
  tacit_require_package(MIMALLOC_FOUND "mimalloc" libmimalloc-dev)
  target_link_options(tacit_malloc INTERFACE "LINKER:--no-as-needed")
  target_link_libraries(tacit_malloc INTERFACE ${MIMALLOC_LIB})
  # support/large_pages.h asks mimalloc for 2 MiB pages where this is defined.
  target_compile_definitions(tacit_malloc INTERFACE TACIT_MIMALLOC=1)
endif()

if(TACIT_TESTS)
  find_package(GTest QUIET)
  tacit_require_package(GTest_FOUND "GoogleTest" "libgtest-dev libgmock-dev")
endif()

if(TACIT_BENCH AND NOT TACIT_SANITIZE)
  find_package(benchmark QUIET)
  tacit_require_package(benchmark_FOUND "Google Benchmark" libbenchmark-dev)
  # OpenBLAS is only the yardstick the evaluator's dot is measured against (bench/hlo).
  find_library(OPENBLAS_LIB NAMES openblas PATH_SUFFIXES openblas-pthread)
  find_path(OPENBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas openblas-pthread)
  if(OPENBLAS_LIB AND OPENBLAS_INCLUDE_DIR)
    set(OPENBLAS_FOUND TRUE)
  endif()
  tacit_require_package(OPENBLAS_FOUND "OpenBLAS" libopenblas-dev)
endif()

find_package(Python3 COMPONENTS Interpreter QUIET)
