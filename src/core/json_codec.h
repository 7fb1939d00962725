// The JSON codec of the core types that cross process and file boundaries (the worker protocol,
// the tuning-cache export): each type's encoding and decoding, once. bench/bench_json.h adds
// the bench and tensor types on the same pattern.
//
// encode_json builds an OrderedJson whose members stay in the order written here (the cache
// export's layout; the protocol's nlohmann::json sorts them). decode_json reads through a
// JsonReader, naming the path of a bad field, and leaves defaults after a failure.
//
// Formats: a TensorSpec is {"dtype","device":{"kind","index"},"sizes","strides","offset"}; a
// Problem {"op","name","args"}, each argument {"name","role","dtype"} plus "tensor" for buffers
// or "scalar" for scalars, a scalar keeping its variant alternative as {"i64": N} or {"f64": X};
// a LaunchSpec every field of launch_spec.h by name, "then" nesting; an Outcome its name; a
// Tolerance {"rtol","atol","max_rel_l2"}, and "rms_atol" where it is not 0 (so that requests and
// records without it read as before), each a number >= 0.
#pragma once

#include <string>

#include "core/json_reader.h"
#include "ktune/core/launch_spec.h"
#include "ktune/core/outcome.h"
#include "ktune/core/problem.h"
#include "ktune/core/tensor_spec.h"
#include "ktune/core/tolerance.h"

namespace ktune {

[[nodiscard]] OrderedJson encode_json(const TensorSpec& t);
[[nodiscard]] OrderedJson encode_json(const Problem& p);
[[nodiscard]] OrderedJson encode_json(const LaunchSpec& l);
[[nodiscard]] OrderedJson encode_json(Outcome o);
[[nodiscard]] OrderedJson encode_json(const Tolerance& t);

// `j` is the value itself, `at` its path. Beyond the types: sizes >= 0, one stride per size,
// offset >= 0; grid and block of 3 dimensions >= 1.
void decode_json(JsonReader& r, const Json& j, const std::string& at, TensorSpec& t);
void decode_json(JsonReader& r, const Json& j, const std::string& at, Problem& p);
void decode_json(JsonReader& r, const Json& j, const std::string& at, LaunchSpec& l);
void decode_json(JsonReader& r, const Json& j, const std::string& at, Tolerance& t);
// An Outcome is read from the member `key` of `obj` (unknown names fail naming it).
[[nodiscard]] Outcome decode_outcome(JsonReader& r, const Json& obj, const std::string& at,
                                     std::string_view key);

}  // namespace ktune
