// The fixture of the select module's stage tests: one fake problem, quiet options, a memory
// tuning cache, and select_with driven through the fake runner (select_fakes.h).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "select/select_stages.h"
#include "unit/select/select_fakes.h"

namespace ktune::test {

class SelectFixture : public testing::Test {
 protected:
  SelectFixture() {
    problem_.op = "fake_op";
    problem_.name = "n=1";
    options_.out = nullptr;
    options_.progress = nullptr;
    options_.jobs = 2;
    key_.op = "fake_op";
    key_.problem = "n=1";
    key_.candidate_set = "abc";
  }

  Result<Selection> select(std::vector<ChoicePtr>& candidates, Choice* reference = nullptr) {
    const SelectContext ctx{problem_, candidates, options_, selection_title(problem_)};
    return select_with(ctx, backend_, *cache_, key_, reference, runner_);
  }

  static const CandidateRecord& record_of(const Selection& sel, const std::string& name) {
    for (const CandidateRecord& r : sel.record.candidates) {
      if (r.name == name) return r;
    }
    ADD_FAILURE() << "no record of " << name;
    return sel.record.candidates.front();
  }

  Problem problem_;
  SelectorOptions options_;
  FakeBackend backend_;
  std::unique_ptr<TuningCache> cache_ = make_memory_cache();
  TuningKey key_;
  FakeRunner runner_;
};

}  // namespace ktune::test
