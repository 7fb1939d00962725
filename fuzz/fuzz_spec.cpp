// Fuzz target: the spec reader as `ktune tune` and `ktune space` use it. parse_spec reads the text
// (YAML or JSON) and validates everything, including the size expressions of every problem and
// the search space's restrictions; then the space is counted and enumerated as `ktune space
// --list` does, under SpaceLimits tighter than the defaults (the walk's bounds are what is
// checked; the defaults would only make each input slower).
#include <string_view>

#include "core/checked_size.h"
#include "fuzz_target.h"
#include "ktune/space/search_space.h"
#include "ktune/spec/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ktune;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // test/data/specs holds the kernel sources (matmul.cpp, add.cpp, matmul_ref.cpp) that the
  // seeds name, so that inputs get past the source file's existence check.
  static const std::filesystem::path file =
      std::filesystem::path(KTUNE_FUZZ_SOURCE_DIR) / "test/data/specs/fuzz.yaml";
  Result<Spec> spec = parse_spec(text, file);
  if (!spec) return 0;
  (void)spec_signature(*spec);
  // What `ktune tune` computes next: every buffer's size, to allocate it. The reader must have
  // refused sizes whose arithmetic passes int64 (checked here too, for builds without UBSan).
  // (An op: spec's problems are the op's to build: make_problem refuses them.)
  for (const ProblemDecl& decl : spec->problems) {
    if (!spec->op.name.empty()) break;
    Result<Problem> p = make_problem(*spec, decl);
    if (!p) fuzz::property_failed("an accepted spec's problems build", p.error().message.c_str());
    for (const ProblemArg& a : p->args) {
      if (!checked_storage_bytes(a.tensor)) {
        fuzz::property_failed("an accepted spec's buffers have a size", a.param.name.c_str());
      }
      (void)a.tensor.storage_bytes();
    }
  }
  Result<SearchSpace> space = SearchSpace::create(spec->params, spec->restrictions);
  if (!space) return 0;
  const SpaceLimits limits{.max_evaluations = 20'000, .max_configs = 2'000};
  (void)space->stats(limits);
  if (Result<std::vector<Config>> configs = space->enumerate(limits); configs) {
    for (const Config& c : *configs) (void)c.str();
  }
  return 0;
}
