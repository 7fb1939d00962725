// The KernelLoader of a Dispatcher opened from a spec (spec_dispatcher.cpp), shared by kernel
// specs and op: cuda.gemm specs (cuda_op_dispatch.cpp): what differs between them is in the hooks.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "ktune/tuning/spec_dispatcher.h"

namespace ktune {

struct SpecLoaderHooks {
  // The problem of one shape (a decl with the spec's size names, in the first problem's order).
  std::function<Result<Problem>(const ProblemDecl&)> problem;
  // A choice's KernelFn for one problem: Choice::load on the CPU; on a device, its launch spec
  // made runnable on the caller's stream (cuda_launch_fns.h).
  std::function<Result<KernelFn>(Choice&, const Backend&, const Problem&)> make_fn;
  // Set: the choices are built per shape (a cuda kernel spec's launch is bound to the problem
  // its choices were built for); the served one is the choice of the same name among them.
  std::function<Result<SpecChoices>(const ProblemDecl&)> choices_for;
  // Every KernelFn is made per shape, also a template's (a device launch's grid follows the
  // sizes); otherwise only library calls are (they bind the sizes), generated code once.
  bool launch_per_problem = false;
  // Background tuning of one shape (tune_unseen): the winner's name, stored in the tuning cache
  // under the key the dispatcher reads. Unset: tune_unseen tunes nothing.
  std::function<Result<std::string>(const Backend&, const Problem&, const ProblemDecl&)> tune;
};

// `choices`: the served candidates, in the table's order (DispatchTable::candidates).
[[nodiscard]] std::unique_ptr<KernelLoader> make_spec_loader(Spec spec, SpecChoices choices,
                                                             std::unique_ptr<Backend> backend,
                                                             SpecLoaderHooks hooks,
                                                             bool tune_unseen);

}  // namespace ktune
