# tacit tune's resumable logs (--log / --resume): parse one line, print, re-parse (round trip).
tacit_fuzzer(fuzz_tune_log SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_tune_log.cc DEPS tacit_backend)
