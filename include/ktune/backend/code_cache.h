// CodeCache: compiled artifacts on disk, content-addressed, so nothing is compiled twice.
// Layout: <dir>/code/<key[0:2]>/<key>.<ext>. Writers write a temporary name and rename.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "ktune/core/status.h"

namespace ktune {

class CodeCache {
 public:
  explicit CodeCache(std::filesystem::path dir);

  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  [[nodiscard]] std::filesystem::path path_for(std::string_view key, std::string_view ext) const;
  [[nodiscard]] std::optional<std::filesystem::path> find(std::string_view key,
                                                          std::string_view ext) const;
  // A fresh, unique path in the same folder as path_for(key, ext), for a writer to fill.
  [[nodiscard]] Result<std::filesystem::path> temp_path_for(std::string_view key,
                                                            std::string_view ext) const;
  // Renames `temp` onto path_for(key, ext) atomically; returns the final path.
  [[nodiscard]] Result<std::filesystem::path> commit(const std::filesystem::path& temp,
                                                     std::string_view key,
                                                     std::string_view ext) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace ktune
