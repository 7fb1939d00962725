// TempDir: a fresh folder under $TMPDIR (or /tmp) for one test, removed with everything in it.
// The one scratch-folder helper of the test suite.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace ktune::test {

class TempDir {
 public:
  // `name` shows in the folder's name, to tell tests' leftovers apart.
  explicit TempDir(std::string_view name = "test") {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base != nullptr && *base ? base : "/tmp") + "/ktune-" +
                        std::string(name) + "-XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) std::abort();
    path_ = templ;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace ktune::test
