// References that run on the host for any problem: a device kernel's c++ reference (compiled by
// a CPU backend of its own) and expected outputs read from .npy files. Both are
// Choice::runs_on_host(): ktune runs them in its own process, on host copies of the problem's
// data, and the outputs reach a device's worker as a reference file. Private to the spec module.
#pragma once

#include <memory>

#include "ktune/backend/backend.h"
#include "ktune/choice/choice.h"
#include "ktune/core/status.h"
#include "ktune/spec/spec.h"

namespace ktune::spec_detail {

// `inner` (a c++ kernel template's choice) compiled and loaded by `host` whatever backend the
// selection passes: the selection's backend is the device's.
[[nodiscard]] ChoicePtr make_host_reference(ChoicePtr inner, std::shared_ptr<const Backend> host);

// reference.expected: a "kernel" that writes each named output's file into its view. Each file is
// read and parsed once, now: its digest is the choice's identity and its elements are what the
// kernel writes; supports() checks each file's dtype and shape against the problem's argument.
[[nodiscard]] Result<ChoicePtr> make_expected_reference(const Spec& spec);

}  // namespace ktune::spec_detail
