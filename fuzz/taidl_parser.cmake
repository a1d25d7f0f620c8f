# The .taidl front end: parse, print, re-parse (round trip), load (check), re-load the printed
# spec, walk and specialise every instruction.
tacit_fuzzer(fuzz_taidl_parser SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_taidl_parser.cc
             DEPS tacit_taidl)
