// bench_backend --sizes (sizes.cc).
#pragma once

#include <string>

// Prints the tiled-compilation table against problem size; returns the exit status.
int sizeSweep(const std::string& source_dir, int runs);
