// scan_include_deps: a textual walk over `#include` lines (see include_deps.h for why not the
// preprocessor).
#include "backend/include_deps.h"

#include <deque>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

#include "core/file_util.h"
#include "core/hash.h"

namespace ktune {
namespace {

// A bound on the walk, so that a -I folder with a large library cannot make every compile read
// thousands of files; past it the identity covers the first ones only.
constexpr std::size_t kMaxHeaders = 512;

bool is_system_folder(const std::filesystem::path& dir) {
  const std::string text = dir.string();
  return text == "/usr" || text.starts_with("/usr/");
}

std::filesystem::path absolute_folder(const std::string& text) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(text, ec);
  return (ec ? std::filesystem::path(text) : p).lexically_normal();
}

struct Include {
  std::string name;
  bool quoted = false;
};

// `#include "x"` and `#include <x>` lines, with spaces anywhere the preprocessor allows them.
std::vector<Include> includes_of(std::string_view code) {
  std::vector<Include> out;
  std::size_t pos = 0;
  while (pos < code.size()) {
    std::size_t end = code.find('\n', pos);
    if (end == std::string_view::npos) end = code.size();
    std::string_view line = code.substr(pos, end - pos);
    pos = end + 1;
    auto skip_space = [&line] {
      while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    };
    skip_space();
    if (!line.starts_with('#')) continue;
    line.remove_prefix(1);
    skip_space();
    if (!line.starts_with("include")) continue;
    line.remove_prefix(7);
    skip_space();
    if (line.empty() || (line.front() != '"' && line.front() != '<')) continue;
    const char close = line.front() == '"' ? '"' : '>';
    std::size_t stop = line.find(close, 1);
    if (stop == std::string_view::npos || stop == 1) continue;
    out.push_back({std::string(line.substr(1, stop - 1)), close == '"'});
  }
  return out;
}

std::optional<std::filesystem::path> find_header(const Include& inc,
                                                 const std::filesystem::path& dir,
                                                 const IncludeDirs& dirs) {
  std::vector<std::filesystem::path> search;
  if (inc.quoted) {
    if (!dir.empty()) search.push_back(dir);
    search.insert(search.end(), dirs.quote.begin(), dirs.quote.end());
  }
  search.insert(search.end(), dirs.both.begin(), dirs.both.end());
  for (const std::filesystem::path& d : search) {
    std::error_code ec;
    std::filesystem::path candidate = (d / inc.name).lexically_normal();
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
  }
  return std::nullopt;  // a system header, or one the compiler will report as missing
}

}  // namespace

IncludeDirs user_include_dirs(const std::vector<std::string>& flags) {
  IncludeDirs out;
  auto add = [](std::vector<std::filesystem::path>& to, const std::string& text) {
    if (text.empty()) return;
    std::filesystem::path dir = absolute_folder(text);
    if (!is_system_folder(dir)) to.push_back(std::move(dir));
  };
  for (std::size_t i = 0; i < flags.size(); ++i) {
    const std::string& f = flags[i];
    const std::string next = i + 1 < flags.size() ? flags[i + 1] : std::string();
    if (f == "-I") {
      add(out.both, next);
      ++i;
    } else if (f.starts_with("-I")) {
      add(out.both, f.substr(2));
    } else if (f == "-iquote") {
      add(out.quote, next);
      ++i;
    } else if (f.starts_with("-iquote")) {
      add(out.quote, f.substr(7));
    }
  }
  return out;
}

std::vector<IncludeDep> scan_include_deps(std::string_view code, const std::filesystem::path& dir,
                                          const IncludeDirs& dirs) {
  std::vector<IncludeDep> deps;
  std::set<std::filesystem::path> seen;
  // Depth first over an explicit stack of (text, its folder); the texts live in `contents`, a
  // deque so that growing it never moves them.
  std::deque<std::string> contents;
  std::vector<std::pair<std::string_view, std::filesystem::path>> stack = {{code, dir}};
  while (!stack.empty() && deps.size() < kMaxHeaders) {
    auto [text, folder] = std::move(stack.back());
    stack.pop_back();
    std::vector<Include> found = includes_of(text);
    for (const Include& inc : found) {
      std::optional<std::filesystem::path> path = find_header(inc, folder, dirs);
      if (!path || !seen.insert(*path).second) continue;
      Result<std::string> bytes = read_file(*path);
      if (!bytes) continue;  // unreadable: the compiler says so
      if (deps.size() >= kMaxHeaders) break;
      deps.push_back({inc.name, *path, hash_hex(*bytes)});
      contents.push_back(std::move(*bytes));
      stack.emplace_back(contents.back(), path->parent_path());
    }
  }
  return deps;
}

std::vector<std::string> source_include_flags(const std::filesystem::path& source_path) {
  if (source_path.empty() || source_path.parent_path().empty()) return {};
  return {"-I" + source_path.parent_path().string()};
}

std::string include_deps_digest(std::string_view code, const std::vector<std::string>& flags) {
  std::vector<IncludeDep> deps = scan_include_deps(code, {}, user_include_dirs(flags));
  if (deps.empty()) return {};
  Hasher h;
  h.add("ktune.include_deps.v1").add(static_cast<std::int64_t>(deps.size()));
  for (const IncludeDep& d : deps) h.add(d.name).add(d.content_hash);
  return h.hex();
}

}  // namespace ktune
