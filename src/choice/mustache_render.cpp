// render_mustache: kainjow mustache with an identity escape, so {{X}} and {{{X}}} both insert the
// value as is. Parse and render errors are reported through is_valid()/error_message(); anything
// the library throws is caught here as well.
#include "choice/mustache_render.h"

#include <fmt/format.h>

#include <exception>
#include <kainjow/mustache.hpp>

namespace ktune {

Result<std::string> render_mustache(
    std::string_view where, const std::string& text,
    const std::vector<std::pair<std::string, std::string>>& variables) {
  namespace km = kainjow::mustache;
  try {
    km::mustache tmpl{text};
    if (!tmpl.is_valid()) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: mustache: {}", where, tmpl.error_message()));
    }
    tmpl.set_custom_escape([](const std::string& s) { return s; });
    km::data data{km::data::type::object};
    for (const auto& [name, value] : variables) data.set(name, value);
    std::string out = tmpl.render(data);
    if (!tmpl.is_valid()) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: mustache: {}", where, tmpl.error_message()));
    }
    return out;
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: mustache: {}", where, e.what()));
  }
}

}  // namespace ktune
