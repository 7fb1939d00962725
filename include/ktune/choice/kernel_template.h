// KernelTemplate: a kernel source with tuning parameters (Inductor's TritonTemplate). Each config
// of its SearchSpace becomes one TemplateChoice. Parameters reach the source as #defines; with
// `mustache` on, the source is first rendered by kainjow mustache with the parameters as
// variables ({{TILE_M}}).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ktune/backend/backend.h"
#include "ktune/choice/choice.h"
#include "ktune/core/launch_spec.h"
#include "ktune/space/search_space.h"

namespace ktune {

struct KernelTemplateDesc {
  std::string name;    // prefix of every choice's name
  std::string source;  // the source text
  std::string entry;
  Signature signature;
  bool mustache = false;
  std::vector<std::string> extra_flags;
  // Device templates (CUDA): the launch geometry for a config on a problem. Required for
  // templates compiled by a device backend; unused on the CPU.
  std::function<Result<LaunchGeometry>(const Config&, const Problem&)> launch;
  // A condition on the problem beyond the signature (divisibility, alignment, shared memory);
  // empty: every problem with the signature. Its failure makes the choice kUnsupported.
  std::function<Status(const Config&, const Problem&)> supports;
  // The template's family, for callers that treat families apart (the CUDA GEMM's "simt"
  // fallback); not part of the digest. Last, so that positional initialisers stay valid.
  std::string kind;
  // The file `source` was read from, if any (see KernelSource::source_path). Not part of the
  // digest, so that a moved project keeps its tuning records; the contents of the headers it
  // includes from the user's folders are.
  std::filesystem::path source_path;
  // Flags of the backend that compiles the template (`--cxxflags -I...`): their include folders
  // are searched for the user's headers too, so that an edited header found only through them
  // changes the digest. Not hashed themselves (the backend's flags are in the tuning key's
  // toolchain) and not passed to the compiler (the backend adds its own).
  std::vector<std::string> header_search_flags;
  // A user's device kernel (a spec with language cuda or opencl): its launch as steps run in
  // order as one candidate, each an entry rendered for the config and a geometry for the problem.
  // Set, it replaces `entry` and `launch` (`entry` stays the first step's unrendered text, for
  // messages). With `lower_entries` (CUDA), the entries are C++ name expressions that NVRTC
  // lowers (templates instantiated with the config's values); `launch_text` is the steps' text,
  // hashed into the digest so that a changed geometry is another candidate.
  std::function<std::vector<std::string>(const Config&)> step_entries;
  std::function<Result<std::vector<LaunchGeometry>>(const Config&, const Problem&)> step_launch;
  bool lower_entries = false;
  std::string launch_text;
  // A line appended to this template's compile errors, after the compiler's message (a spec's
  // reference that shares the kernel's file is told that the tuning parameters are not defined
  // for it). Not part of the digest: it changes what is said, not what is compiled.
  std::string compile_error_note;
  // false: no #define per parameter in the rendered source (a spec's `render: none`). The fields
  // from `kind` on come after the first six, so that positional initialisers stay valid.
  bool defines = true;
};

class KernelTemplate : public std::enable_shared_from_this<KernelTemplate> {
 public:
  [[nodiscard]] static std::shared_ptr<KernelTemplate> create(KernelTemplateDesc desc,
                                                              SearchSpace space);

  [[nodiscard]] const KernelTemplateDesc& desc() const { return desc_; }
  [[nodiscard]] const SearchSpace& space() const { return space_; }
  // Identity of everything but the config (source, entry, signature, flags): part of every
  // choice's hash_key, computed once.
  [[nodiscard]] const std::string& digest() const { return digest_; }
  // Fails (kInvalidArgument) when mustache rendering fails.
  [[nodiscard]] Result<KernelSource> render(const Config& config) const;
  // One choice per valid config, in enumeration order.
  // One choice per valid config of the space; fails when the space cannot be enumerated within
  // SearchSpace::Limits (a space too large to tune every config of).
  [[nodiscard]] Result<std::vector<ChoicePtr>> choices() const;
  // One choice for a single config (a reference kernel with no parameters uses Config{}).
  [[nodiscard]] ChoicePtr choice(Config config) const;

 private:
  KernelTemplate(KernelTemplateDesc desc, SearchSpace space);
  KernelTemplateDesc desc_;
  SearchSpace space_;
  std::string digest_;
};

}  // namespace ktune
