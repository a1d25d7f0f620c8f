# The StableHLO text parser: parse, print as StableHLO, re-parse (a fixed point after one round).
tacit_fuzzer(fuzz_stablehlo_parser SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_stablehlo_parser.cc
             DEPS tacit_stablehlo tacit_hlo)
