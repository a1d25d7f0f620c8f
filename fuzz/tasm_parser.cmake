# The .tasm front end: parse, print, re-parse (round trip), run small programs on the Machine
# (the toy ISA of the oracle's tests).
tacit_fuzzer(fuzz_tasm_parser SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_tasm_parser.cc
             DEPS tacit_oracle)
