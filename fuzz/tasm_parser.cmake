# The .tasm front end: parse, print, re-parse (round trip), run small programs on the Machine.
# Built from the sources it needs (as fuzz_taidl_parser: the Python importer of src/taidl does
# not compile with clang 14 yet).
file(GLOB TACIT_TASM_FUZZ_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/taidl/*.cc
     ${PROJECT_SOURCE_DIR}/src/oracle/*.cc)
list(FILTER TACIT_TASM_FUZZ_SOURCES EXCLUDE REGEX "/importer[^/]*\\.cc$")
tacit_fuzzer(fuzz_tasm_parser ${CMAKE_CURRENT_LIST_DIR}/fuzz_tasm_parser.cc tacit_hlo)
target_sources(fuzz_tasm_parser PRIVATE ${TACIT_TASM_FUZZ_SOURCES})
target_include_directories(fuzz_tasm_parser PRIVATE ${PROJECT_SOURCE_DIR}/src
                           ${PROJECT_SOURCE_DIR}/tests)
