// One tuning record as one JSON value, for stores that keep a record as a single value (Redis:
// one SET, so that a reader sees the whole record or none of it). The layout is an element of
// export_json's "records" (tuning_cache.h), written and read by the same codec.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "ktune/cache/tuning_cache.h"
#include "ktune/core/status.h"

namespace ktune {

// A record as read back, with the row count it was stored with (its candidate_count), which
// check_record compares with its rows.
struct StoredRecord {
  TuningRecord record;
  std::optional<std::size_t> stored_count;
};

// Compact JSON (one line); bytes that are not UTF-8 in messages are replaced, as in export_json.
[[nodiscard]] std::string record_to_json_text(const TuningRecord& record);
// kParse with the offending path ("record.candidates[0].outcome") on anything that is not a
// record: the text comes from a store that others can write, so nothing in it is trusted.
[[nodiscard]] Result<StoredRecord> record_from_json_text(std::string_view text);

}  // namespace ktune
