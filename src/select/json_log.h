// JsonLog: the optional JSON-lines log of a selection, one object per line, appended.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>

#include "ktune/cache/tuning_cache.h"

namespace ktune {

class JsonLog {
 public:
  // An empty path makes every call a no-op.
  explicit JsonLog(const std::filesystem::path& path);
  ~JsonLog();
  JsonLog(const JsonLog&) = delete;
  JsonLog& operator=(const JsonLog&) = delete;

  // {"event":"candidate","problem":...,"name":...,"outcome":...,"median_ns":...}
  void candidate(const std::string& problem, const CandidateRecord& c);
  // {"event":"selection","problem":...,"winner":...,"from_cache":...,"key":...}
  void selection(const std::string& problem, const TuningRecord& r, bool from_cache,
                 double select_s);

 private:
  std::FILE* f_ = nullptr;
};

}  // namespace ktune
