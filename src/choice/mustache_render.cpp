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

namespace {

// Appended to template lines before rendering; no parameter value holds \x1e.
constexpr char kMark = '\x1e';

// A line that is only a section, inverted-section, comment or delimiter tag: mustache removes it
// whole ("standalone"), and a mark would stop that and change the output (a blank line after a
// `\` continuation ends a macro), so such lines carry no mark.
bool standalone_tag(std::string_view line) {
  const std::size_t b = line.find_first_not_of(" \t\r");
  const std::size_t e = line.find_last_not_of(" \t\r");
  if (b == std::string_view::npos) return false;
  line = line.substr(b, e - b + 1);
  if (line.size() < 5 || !line.starts_with("{{") || !line.ends_with("}}")) return false;
  if (line.find("{{", 2) != std::string_view::npos) return false;
  return std::string_view("#^/!=").find(line[2]) != std::string_view::npos;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return lines;
}

// N from a `#line N ...` directive, or 0.
long line_directive(std::string_view line) {
  std::size_t p = line.find_first_not_of(" \t");
  if (p == std::string_view::npos || line[p] != '#') return 0;
  p = line.find_first_not_of(" \t", p + 1);
  if (p == std::string_view::npos || line.substr(p, 4) != "line") return 0;
  p = line.find_first_not_of(" \t", p + 4);
  long n = 0;
  for (; p < line.size() && line[p] >= '0' && line[p] <= '9'; ++p) n = n * 10 + (line[p] - '0');
  return n;
}

}  // namespace

Result<std::string> render_mustache_keeping_lines(
    std::string_view where, const std::string& text,
    const std::vector<std::pair<std::string, std::string>>& variables) {
  // presumed[i]: the line number the compiler gives template line i, #line directives counted.
  const std::vector<std::string_view> lines = split_lines(text);
  std::vector<long> presumed(lines.size());
  std::string marked;
  long next = 1;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    presumed[i] = next;
    const long directive = line_directive(lines[i]);
    next = directive > 0 ? directive : next + 1;
    marked += lines[i];
    if (!standalone_tag(lines[i])) marked += fmt::format("{}{}{}", kMark, i, kMark);
    if (i + 1 < lines.size()) marked += '\n';
  }
  Result<std::string> rendered = render_mustache(where, marked, variables);
  if (!rendered) return rendered;

  std::string out;
  long expected = 1;  // the number the compiler gives the next output line
  bool continued = false;
  for (std::string_view line : split_lines(*rendered)) {
    // The last mark on a line is the template line whose newline ends it.
    std::string plain;
    long origin = -1;
    for (std::size_t p = 0; p < line.size();) {
      std::size_t open = line.find(kMark, p);
      std::size_t close = open == std::string_view::npos ? open : line.find(kMark, open + 1);
      if (close == std::string_view::npos) {
        plain += line.substr(p);
        break;
      }
      plain += line.substr(p, open - p);
      long index = 0;
      for (char c : line.substr(open + 1, close - open - 1)) index = index * 10 + (c - '0');
      origin = presumed[static_cast<std::size_t>(index)];
      p = close + 1;
    }
    const long directive = line_directive(plain);
    if (origin > 0 && origin != expected && !continued && directive == 0) {
      out += fmt::format("#line {}\n", origin);
      expected = origin;
    }
    expected = directive > 0 ? directive : expected + 1;
    continued = !plain.empty() && plain.back() == '\\';
    out += plain;
    out += '\n';
  }
  out.pop_back();  // split_lines saw one more line than there were newlines
  return out;
}

}  // namespace ktune
