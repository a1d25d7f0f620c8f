# The .tasm front end: parse, print, re-parse (round trip), run small programs on the Machine
# (the toy ISA of the oracle's tests).
tacit_fuzzer(fuzz_tasm_parser ${CMAKE_CURRENT_LIST_DIR}/fuzz_tasm_parser.cc tacit_oracle)
target_include_directories(fuzz_tasm_parser PRIVATE ${PROJECT_SOURCE_DIR}/tests)
