# The Python-spec importer's record converter: JSON in, .taidl text that must parse out.
tacit_fuzzer(fuzz_import_record SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_import_record.cc
             DEPS tacit_import tacit_taidl)
