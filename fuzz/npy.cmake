# The .npy reader: parse, serialise, re-parse (round trip), convert to a literal and back.
tacit_fuzzer(fuzz_npy SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_npy.cc DEPS tacit_hlo)
