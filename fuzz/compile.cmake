# The compiler backend end to end on small valid kernels drawn from the input bytes by the
# differential generators; compiled programs are verified. Coverage feedback also from the
# compile-side modules, as edge counters only (fuzz/CMakeLists.txt).
tacit_fuzzer(fuzz_compile
             SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_compile.cc
                     ${PROJECT_SOURCE_DIR}/tests/differential/generators.cc
             DEPS tacit_backend)
