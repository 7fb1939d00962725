// Planted by test/faults/files_faults_test.cpp (issue 16, class 9): a shared object swapped into
// the code cache in place of a compiled candidate. Being loaded at all is the failure, so its
// constructor leaves MARK_PATH (a -D of the test's build) behind before any entry is called; the
// entry itself writes nothing, so a run of it would be caught later too.
#include <cstdio>

namespace {

__attribute__((constructor)) void mark_loaded() {
  if (std::FILE* f = std::fopen(MARK_PATH, "w")) {
    std::fputs("loaded\n", f);
    std::fclose(f);
  }
}

}  // namespace

extern "C" void ktune_entry(void* const*) {}
