// CpuBackend::translation_unit: what the compiler sees for one KernelSource: a banner, the
// defines, the user's code under its file's name (#line), then the extern "C" entry shim that
// unpacks `void* const* args` into the entry's parameters.
#include <fmt/format.h>

#include <string>
#include <string_view>

#include "backend/translation_unit_head.h"
#include "ktune/backend/cpu_backend.h"
#include "ktune/core/dtype.h"

namespace ktune {
namespace {

// A C string literal body: the name is procedural, but a quote must never end the directive.
std::string c_string_literal(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') c = ' ';
    out += c;
  }
  out += '"';
  return out;
}

// The shim converts a buffer to whatever pointer type the entry declares (const or not) through
// a templated conversion operator; a scalar is read as its dtype's C++ type and then converted
// implicitly to the declared parameter type.
constexpr std::string_view kShimHead = R"(#include <cstdint>
namespace ktune_shim {
struct Buffer {
  void* p;
  template <class T>
  operator T*() const { return static_cast<T*>(p); }
};
}  // namespace ktune_shim
extern "C" void ktune_entry(void* const* args) {
  (void)args;
)";

}  // namespace

std::string CpuBackend::translation_unit(const KernelSource& source) {
  std::string tu = translation_unit_head(source);
  // The user's file by its absolute name: `file:line:col: error` is where an editor jumps.
  const std::string origin = source.source_path.empty() ? source.name : source.source_path.string();
  tu += fmt::format("#line 1 {}\n", c_string_literal(origin));
  tu += source.code;
  if (!source.code.empty() && source.code.back() != '\n') tu += '\n';
  tu += fmt::format("#line 1 {}\n", c_string_literal("ktune_entry_shim"));
  tu += kShimHead;
  tu += fmt::format("  {}(", source.entry);
  for (std::size_t i = 0; i < source.signature.size(); ++i) {
    const KernelParam& p = source.signature[i];
    if (i > 0) tu += ",";
    tu += "\n      ";
    if (p.role == ArgRole::kScalar) {
      tu += fmt::format("*static_cast<const {}*>(args[{}])", dtype_cpp_scalar_type(p.dtype), i);
    } else {
      tu += fmt::format("ktune_shim::Buffer{{args[{}]}}", i);
    }
  }
  tu += ");\n}\n";
  return tu;
}

}  // namespace ktune
