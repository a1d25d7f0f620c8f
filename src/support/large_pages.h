// Transparent huge pages for the executables that allocate with mimalloc (the CLI, generated
// backends, bench_backend: the tacit::malloc target defines TACIT_MIMALLOC for them). Including
// this header in an executable's main file is what turns them on; include it nowhere else.
//
// mimalloc is asked for 2 MiB OS pages, which the kernel backs with transparent huge pages where
// it offers them on madvise (Debian's default): a compile touches most of its memory once, and in
// a fresh process the 4 KiB page faults on it are a large part of a large kernel's time (measured:
// docs/backend.md, "Decisions"). mimalloc reads its options when it starts, before main and
// before the executable's constructors (it is a shared library, initialised first), so the option
// is set from the executable's .preinit_array, the first code the dynamic linker runs; setting it
// only writes mimalloc's static option table. A user's MIMALLOC_LARGE_OS_PAGES (0 or 1) wins:
// mimalloc reads the environment for the options nobody set.
#pragma once

#ifdef TACIT_MIMALLOC
#include <mimalloc.h>

#include <cstdlib>

namespace tacit::support {
namespace {

void enableLargePages(int, char**, char**) {
  if (std::getenv("MIMALLOC_LARGE_OS_PAGES") == nullptr) mi_option_enable(mi_option_large_os_pages);
}

[[gnu::section(".preinit_array"),
  gnu::used]] void (*const large_pages_at_start)(int, char**, char**) = enableLargePages;

}  // namespace
}  // namespace tacit::support
#endif
