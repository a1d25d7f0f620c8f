// tacit: the single command-line tool. Subcommands live in cmd_*.cc and register themselves.
#include "cli.h"
#include "support/large_pages.h"  // huge pages for the allocator (see there)

int main(int argc, char** argv) {
  return tacit::cli::dispatch(argc, argv);
}
