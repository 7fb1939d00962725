// Host references (spec_reference.h): a c++ kernel beside a device kernel, and expected outputs
// from .npy files.
#include "spec/spec_reference.h"

#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/file_util.h"
#include "core/hash.h"
#include "tensor/npy.h"

namespace ktune::spec_detail {
namespace {

Result<LaunchSpec> host_only(const std::string& name) {
  return make_error(ErrorCode::kInvalidArgument,
                    fmt::format("{} runs on the host (in ktune's own process)", name));
}

class HostReference final : public Choice {
 public:
  HostReference(ChoicePtr inner, std::shared_ptr<const Backend> host)
      : inner_(std::move(inner)), host_(std::move(host)) {}
  Kind kind() const override { return inner_->kind(); }
  const std::string& name() const override { return inner_->name(); }
  std::string hash_key() const override {
    return Hasher().add("host-reference").add(inner_->hash_key()).hex();
  }
  std::string info() const override { return inner_->info() + " (on the host)"; }
  Status supports(const Problem& problem) const override { return inner_->supports(problem); }
  Status compile(const Backend&) override { return inner_->compile(*host_); }
  double compile_s() const override { return inner_->compile_s(); }
  Result<KernelFn> load(const Backend&, const Problem& problem) override {
    return inner_->load(*host_, problem);
  }
  Result<LaunchSpec> launch_spec(const Problem&) const override { return host_only(name()); }
  bool runs_on_host() const override { return true; }

 private:
  ChoicePtr inner_;
  std::shared_ptr<const Backend> host_;
};

// One file, read and parsed once when the reference is made: its digest keys the choice and its
// elements are what the reference writes, so the two cannot disagree (reading it again would
// mean checking that it did not change in between).
struct ExpectedFile {
  std::size_t arg = 0;  // index into the problem's arguments
  std::filesystem::path path;
  std::string digest;                        // of the file's bytes
  std::shared_ptr<const std::string> bytes;  // the whole file
  NpyArray array;                            // its views point into *bytes
};

class ExpectedOutputs final : public Choice {
 public:
  explicit ExpectedOutputs(std::vector<ExpectedFile> files) : files_(std::move(files)) {}
  Kind kind() const override { return Kind::kExtern; }
  const std::string& name() const override { return name_; }
  std::string hash_key() const override {
    Hasher h;
    h.add("expected-npy").add("v1");
    for (const ExpectedFile& f : files_) h.add(static_cast<std::int64_t>(f.arg)).add(f.digest);
    return h.hex();
  }
  std::string info() const override {
    std::vector<std::string> names;
    for (const ExpectedFile& f : files_) names.push_back(f.path.filename().string());
    return fmt::format("expected outputs from {}", fmt::join(names, ", "));
  }
  Status supports(const Problem& problem) const override {
    for (const ExpectedFile& f : files_) {
      if (f.arg >= problem.args.size()) {
        return make_error(ErrorCode::kInvalidArgument, "reference.expected: no such argument");
      }
      const TensorSpec& t = problem.args[f.arg].tensor;
      if (Status s = npy_fits(f.array, f.path, t.dtype, t.sizes); !s) return s;
    }
    return {};
  }
  Status compile(const Backend&) override { return {}; }
  Result<KernelFn> load(const Backend&, const Problem& problem) override {
    if (Status s = supports(problem); !s) return std::unexpected(s.error());
    // The files' elements, in C order, with the views they go to (the files stay shared).
    struct Output {
      TensorSpec spec;
      std::size_t arg = 0;
      std::shared_ptr<const std::string> bytes;
      std::string_view data;
    };
    std::vector<Output> outputs;
    for (const ExpectedFile& f : files_) {
      outputs.push_back({problem.args[f.arg].tensor, f.arg, f.bytes, f.array.data});
    }
    return KernelFn([outputs = std::move(outputs)](void* const* args) -> Status {
      for (const Output& o : outputs) {
        // args[i] points at the view's first element (storage + offset).
        char* base = static_cast<char*>(args[o.arg]);
        const std::size_t size = dtype_size(o.spec.dtype);
        for (std::int64_t i = 0; i < o.spec.numel(); ++i) {
          const std::int64_t at = o.spec.storage_index(i) - o.spec.offset;
          std::memcpy(base + at * static_cast<std::int64_t>(size),
                      o.data.data() + static_cast<std::size_t>(i) * size, size);
        }
      }
      return Status{};
    });
  }
  Result<LaunchSpec> launch_spec(const Problem&) const override { return host_only(name_); }
  bool runs_on_host() const override { return true; }

 private:
  std::string name_ = "reference:expected";
  std::vector<ExpectedFile> files_;
};

}  // namespace

ChoicePtr make_host_reference(ChoicePtr inner, std::shared_ptr<const Backend> host) {
  return std::make_unique<HostReference>(std::move(inner), std::move(host));
}

Result<ChoicePtr> make_expected_reference(const Spec& spec) {
  std::vector<ExpectedFile> files;
  for (const auto& [name, path] : spec.reference.expected) {
    std::size_t arg = 0;
    while (arg < spec.args.size() && spec.args[arg].name != name) ++arg;
    if (arg == spec.args.size()) {
      return make_error(
          ErrorCode::kInvalidArgument,
          fmt::format("{}: reference.expected: '{}' is not an argument", spec.file.string(), name));
    }
    auto bytes = read_file(path);
    if (!bytes) return std::unexpected(bytes.error());
    auto shared = std::make_shared<const std::string>(std::move(*bytes));
    auto array = parse_npy(*shared, path.string());
    if (!array) return std::unexpected(array.error());
    files.push_back({arg, path, hash_hex(*shared), shared, *array});
  }
  return ChoicePtr(std::make_unique<ExpectedOutputs>(std::move(files)));
}

}  // namespace ktune::spec_detail
