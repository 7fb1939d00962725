// DispatchTable as JSON (dispatch_table.h), and the loader that serves it with dlopen alone.
#include "ktune/runtime/dispatch_table.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "ktune/backend/cpu_backend.h"
#include "ktune/runtime/dispatcher.h"

namespace ktune {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "ktune-dispatch-table";
constexpr int kVersion = 1;

std::optional<std::size_t> index_of(const DispatchTable& t, const std::string& name) {
  for (std::size_t i = 0; i < t.candidates.size(); ++i) {
    if (t.candidates[i].name == name) return i;
  }
  return std::nullopt;
}

// Each candidate's shared object, opened once on first use; kept for the loader's life, so that
// the served entry points stay valid.
class SharedObjectLoader final : public KernelLoader {
 public:
  explicit SharedObjectLoader(DispatchTable table)
      : table_(std::move(table)), modules_(table_.candidates.size()) {}

  Status check(std::span<const std::int64_t> sizes) const override {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] < 0) {
        return make_error(ErrorCode::kInvalidArgument,
                          fmt::format("dispatcher {}: '{}' is {}; expected a size >= 0", table_.op,
                                      table_.size_names[i], sizes[i]));
      }
    }
    return {};
  }

  Result<KernelFn> load(std::size_t choice, std::span<const std::int64_t>) override {
    const DispatchTable::Candidate& c = table_.candidates[choice];
    if (c.artifact.empty()) {
      return make_error(ErrorCode::kUnavailable,
                        fmt::format("dispatcher {}: '{}' has no shared object (a library call); "
                                    "a dispatch table serves generated code only",
                                    table_.op, c.name));
    }
    if (!modules_[choice]) {
      Result<std::unique_ptr<Module>> m = load_cpu_module(c.artifact);
      if (!m) return std::unexpected(m.error());
      modules_[choice] = std::move(*m);
    }
    Module* m = modules_[choice].get();
    return KernelFn([m](void* const* args) { return m->launch(args); });
  }

 private:
  DispatchTable table_;
  std::vector<std::unique_ptr<Module>> modules_;
};

Error parse_error(const std::filesystem::path& file, const std::string& what) {
  return Error{ErrorCode::kParse, fmt::format("{}: {}", file.string(), what)};
}

}  // namespace

std::unique_ptr<KernelLoader> make_shared_object_loader(DispatchTable table) {
  return std::make_unique<SharedObjectLoader>(std::move(table));
}

std::string dispatch_table_json(const DispatchTable& t) {
  json candidates = json::array();
  for (const DispatchTable::Candidate& c : t.candidates) {
    std::error_code ec;
    const std::filesystem::path full =
        c.artifact.empty() ? c.artifact : std::filesystem::absolute(c.artifact, ec);
    candidates.push_back({{"name", c.name}, {"artifact", (ec ? c.artifact : full).string()}});
  }
  json tuned = json::array();
  for (const DispatchTable::Tuned& s : t.tuned) {
    tuned.push_back({{"sizes", s.sizes}, {"pick", t.candidates.at(s.choice).name}});
  }
  const json doc = {{"format", kFormat},
                    {"version", kVersion},
                    {"op", t.op},
                    {"sizes", t.size_names},
                    {"candidates", candidates},
                    {"default", t.candidates.at(t.default_choice).name},
                    {"tuned", tuned}};
  return doc.dump(2) + "\n";
}

Status write_dispatch_table(const std::filesystem::path& file, const DispatchTable& table) {
  return write_file_atomic(file, dispatch_table_json(table));
}

Result<DispatchTable> parse_dispatch_table(std::string_view text,
                                           const std::filesystem::path& file) {
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return std::unexpected(parse_error(file, "not JSON"));
  if (doc.value("format", "") != kFormat || doc.value("version", 0) != kVersion) {
    return std::unexpected(
        parse_error(file, fmt::format("expected format \"{}\" version {}", kFormat, kVersion)));
  }
  // The schema is small: a wrong type anywhere is one error naming the field.
  DispatchTable t;
  std::string field = "op";
  try {
    t.op = doc.at("op").get<std::string>();
    field = "sizes";
    t.size_names = doc.at("sizes").get<std::vector<std::string>>();
    field = "candidates";
    for (const json& c : doc.at("candidates")) {
      std::filesystem::path artifact = c.at("artifact").get<std::string>();
      if (!artifact.empty() && artifact.is_relative()) artifact = file.parent_path() / artifact;
      t.candidates.push_back({c.at("name").get<std::string>(), std::move(artifact)});
    }
    field = "default";
    const std::string def = doc.at("default").get<std::string>();
    auto d = index_of(t, def);
    if (!d) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: default: '{}' is no candidate", file.string(), def));
    }
    t.default_choice = *d;
    field = "tuned";
    for (const json& s : doc.at("tuned")) {
      const std::string pick = s.at("pick").get<std::string>();
      auto i = index_of(t, pick);
      auto sizes = s.at("sizes").get<std::vector<std::int64_t>>();
      if (!i || sizes.size() != t.size_names.size()) {
        return make_error(ErrorCode::kInvalidArgument,
                          fmt::format("{}: tuned: pick '{}' with {} sizes; expected a candidate "
                                      "and {} sizes",
                                      file.string(), pick, sizes.size(), t.size_names.size()));
      }
      t.tuned.push_back({std::move(sizes), *i});
    }
  } catch (const json::exception& e) {
    return std::unexpected(parse_error(file, fmt::format("{}: {}", field, e.what())));
  }
  return t;
}

Result<DispatchTable> read_dispatch_table(const std::filesystem::path& file) {
  Result<std::string> text = read_file(file);
  if (!text) return std::unexpected(text.error());
  return parse_dispatch_table(*text, file);
}

}  // namespace ktune
