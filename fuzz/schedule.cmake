# Tiling schedules (--schedule FILE.json): parse, print, re-parse (round trip).
tacit_fuzzer(fuzz_schedule SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_schedule.cc DEPS tacit_backend)
