# The HLO text parser: parse, print, re-parse (round trip must hold), verify.
tacit_fuzzer(fuzz_hlo_parser SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_hlo_parser.cc DEPS tacit_hlo)
