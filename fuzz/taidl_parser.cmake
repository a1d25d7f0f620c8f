# The .taidl front end: parse, print, re-parse (round trip), load (check), re-load the printed
# spec, walk and specialise every instruction. Built from the language's own sources (not the
# whole tacit_taidl library): the Python importer in the same folder does not compile with
# clang 14 yet, and the fuzzer does not need it.
file(GLOB TACIT_TAIDL_LANGUAGE_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/taidl/*.cc)
list(FILTER TACIT_TAIDL_LANGUAGE_SOURCES EXCLUDE REGEX "/importer[^/]*\\.cc$")
tacit_fuzzer(fuzz_taidl_parser ${CMAKE_CURRENT_LIST_DIR}/fuzz_taidl_parser.cc tacit_hlo)
target_sources(fuzz_taidl_parser PRIVATE ${TACIT_TAIDL_LANGUAGE_SOURCES})
target_include_directories(fuzz_taidl_parser PRIVATE ${PROJECT_SOURCE_DIR}/src)
