// SequenceChoice: two choices run in order as one candidate.
#include "ktune/choice/sequence_choice.h"

#include <fmt/format.h>

#include <utility>

#include "core/hash.h"

namespace ktune {
namespace {

class SequenceChoice final : public Choice {
 public:
  SequenceChoice(std::string name, ChoicePtr first, ChoicePtr then)
      : name_(std::move(name)), first_(std::move(first)), then_(std::move(then)) {}

  Kind kind() const override { return first_->kind(); }
  const std::string& name() const override { return name_; }
  std::string hash_key() const override {
    Hasher h;
    h.add("sequence").add(first_->hash_key()).add(then_->hash_key());
    return h.hex();
  }
  std::string info() const override {
    return fmt::format("{} then {}", first_->info(), then_->name());
  }
  Status supports(const Problem& problem) const override {
    if (Status s = first_->supports(problem); !s) return s;
    return then_->supports(problem);
  }
  Status compile(const Backend& backend) override {
    if (Status s = first_->compile(backend); !s) return s;
    return then_->compile(backend);
  }
  double compile_s() const override { return first_->compile_s() + then_->compile_s(); }
  Result<KernelFn> load(const Backend& backend, const Problem& problem) override {
    Result<KernelFn> a = first_->load(backend, problem);
    if (!a) return a;
    Result<KernelFn> b = then_->load(backend, problem);
    if (!b) return b;
    return KernelFn([a = std::move(*a), b = std::move(*b)](void* const* args) -> Status {
      if (Status s = a(args); !s) return s;
      return b(args);
    });
  }
  const Artifact* artifact() const override { return then_->artifact(); }
  Result<LaunchSpec> launch_spec(const Problem& problem) const override {
    Result<LaunchSpec> a = first_->launch_spec(problem);
    if (!a) return a;
    Result<LaunchSpec> b = then_->launch_spec(problem);
    if (!b) return b;
    a->then.push_back(std::move(*b));
    return a;
  }

 private:
  std::string name_;
  ChoicePtr first_;
  ChoicePtr then_;
};

}  // namespace

ChoicePtr make_sequence_choice(std::string name, ChoicePtr first, ChoicePtr then) {
  return std::make_unique<SequenceChoice>(std::move(name), std::move(first), std::move(then));
}

}  // namespace ktune
