// export_json / import_json: a lossless round trip, and bad input rejected with the JSON path of
// the offending field.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cache_fixtures.h"
#include "ktune/cache/tuning_cache.h"

namespace ktune {
namespace {

using nlohmann::json;
using testing_cache::same_record;
using testing_cache::sample_record;

std::vector<TuningRecord> sample_records() {
  std::vector<TuningRecord> records;
  for (int i = 0; i < 3; ++i) records.push_back(sample_record(i, 1000 - i));
  records[2].candidates.clear();
  records[1].candidates[0].outcome = Outcome::kWrongResult;
  records[1].candidates[0].message = "max abs error 0.5 at [3, 4]; tolerance 1e-05";
  records[0].settings = MeasureSettings{12.5, 4, 77, 3, false, 10, 9, 0.25};
  // No reference: who stood in, and the spec's metrics of the measured candidates.
  records[0].stand_in = records[0].candidates[0].name;
  records[0].candidates[0].metrics = {{"GFLOP/s", 1234.5}, {"GB/s", 0.125}};
  records[0].candidates[0].params = {{"BM", "64"}, {"VEC", "true"}, {"A", "-1"}};
  return records;
}

TEST(CacheJson, RoundTripKeepsEveryField) {
  const auto records = sample_records();
  auto back = import_json(export_json(records));
  ASSERT_TRUE(back.has_value()) << back.error().message;
  ASSERT_EQ(back->size(), records.size());
  for (std::size_t i = 0; i < records.size(); ++i) EXPECT_TRUE(same_record((*back)[i], records[i]));
}

TEST(CacheJson, EmptyRoundTrip) {
  auto back = import_json(export_json({}));
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_TRUE(back->empty());
}

TEST(CacheJson, DocumentShape) {
  const json doc = json::parse(export_json(sample_records()));
  EXPECT_EQ(doc["format"], "ktune-tuning-cache");
  EXPECT_EQ(doc["version"], 2);
  ASSERT_EQ(doc["records"].size(), 3u);
  const json& r = doc["records"][0];
  EXPECT_EQ(r["digest"], sample_record(0).key.digest());
  EXPECT_EQ(r["key"]["op"], "mm");
  EXPECT_EQ(r["spec"], "mm_spec");
  EXPECT_EQ(r["problem_name"], "p0");
  EXPECT_EQ(r["candidates"][0]["artifact"], sample_record(0).candidates[0].artifact);
  EXPECT_TRUE(r["candidates"][1]["artifact"].is_null());
  // Parameters as an object, numbers as numbers.
  EXPECT_EQ(r["candidates"][0]["params"], json({{"BM", 64}, {"VEC", "true"}, {"A", -1}}));
  EXPECT_EQ(r["candidates"][1]["params"], json::object());
  EXPECT_EQ(r["candidate_count"], 2);
  EXPECT_EQ(r["candidates"][0]["outcome"], "ok");
  EXPECT_EQ(r["candidates"][0]["stats"]["runs"], 57);
  EXPECT_TRUE(r["candidates"][1]["stats"].is_null());
  EXPECT_EQ(r["candidates"][1]["outcome"], "compile_error");
  EXPECT_EQ(r["settings"]["budget_ms"], 12.5);
  EXPECT_EQ(r["settings"]["flush_cache"], false);
  EXPECT_TRUE(doc["records"][1]["settings"].is_null());
}

TEST(CacheJson, InvalidUtf8IsReplacedNotThrown) {
  auto records = sample_records();
  records[0].candidates[1].message = "bad byte \xff here";
  const std::string text = export_json(records);
  auto back = import_json(text);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_NE((*back)[0].candidates[1].message.find("bad byte"), std::string::npos);
}

struct BadCase {
  const char* what;
  void (*mutate)(json&);
  const char* message;
};

const BadCase kBadCases[] = {
    {"unknown outcome", [](json& d) { d["records"][1]["candidates"][0]["outcome"] = "okk"; },
     "records[1].candidates[0].outcome: unknown outcome 'okk'"},
    {"missing key field", [](json& d) { d["records"][0]["key"].erase("op"); },
     "records[0].key.op: missing"},
    {"key not object", [](json& d) { d["records"][0]["key"] = json::array(); },
     "records[0].key: expected object, got array"},
    {"string for integer", [](json& d) { d["records"][2]["created_unix"] = "yesterday"; },
     "records[2].created_unix: expected integer, got string"},
    {"float for integer", [](json& d) { d["records"][0]["created_unix"] = 1.5; },
     "records[0].created_unix: expected integer, got number"},
    {"string for number", [](json& d) { d["records"][0]["candidates"][1]["compile_s"] = "2"; },
     "records[0].candidates[1].compile_s: expected number, got string"},
    {"negative runs", [](json& d) { d["records"][0]["candidates"][0]["stats"]["runs"] = -1; },
     "records[0].candidates[0].stats.runs: -1 out of range; expected 0 to 2147483647"},
    {"stats missing", [](json& d) { d["records"][0]["candidates"][0].erase("stats"); },
     "records[0].candidates[0].stats: missing"},
    {"stats wrong type", [](json& d) { d["records"][0]["candidates"][0]["stats"] = 3; },
     "records[0].candidates[0].stats: expected object or null, got number"},
    {"stats field missing",
     [](json& d) { d["records"][0]["candidates"][0]["stats"].erase("mad_ns"); },
     "records[0].candidates[0].stats.mad_ns: missing"},
    {"candidate not object", [](json& d) { d["records"][1]["candidates"][1] = "x"; },
     "records[1].candidates[1]: expected object, got string"},
    {"record not object", [](json& d) { d["records"][2] = nullptr; },
     "records[2]: expected object, got null"},
    {"records not array", [](json& d) { d["records"] = json::object(); },
     "records: expected array, got object"},
    {"wrong format", [](json& d) { d["format"] = "something-else"; },
     "format: expected 'ktune-tuning-cache', got 'something-else'"},
    {"newer version", [](json& d) { d["version"] = 3; },
     "version: unsupported version 3; expected 1 to 2"},
    {"param a boolean", [](json& d) { d["records"][0]["candidates"][0]["params"]["VEC"] = true; },
     "records[0].candidates[0].params.VEC: expected a string or a number, got boolean"},
    {"params an array of numbers",
     [](json& d) { d["records"][0]["candidates"][0]["params"] = json::array({1}); },
     "records[0].candidates[0].params[0]: expected object, got number"},
    {"params a string", [](json& d) { d["records"][0]["candidates"][0]["params"] = "BM=64"; },
     "records[0].candidates[0].params: expected an object, got string"},
    {"spec a number", [](json& d) { d["records"][0]["spec"] = 3; },
     "records[0].spec: expected string, got number"},
    {"missing format", [](json& d) { d.erase("format"); }, "format: missing"},
    {"rows cut", [](json& d) { d["records"][0]["candidates"].erase(1); },
     "records[0].candidates: 1 rows; candidate_count says 2"},
    {"negative count", [](json& d) { d["records"][0]["candidate_count"] = -1; },
     "records[0].candidate_count: -1 out of range; expected 0 to 1073741824"},
    {"not an object", [](json& d) { d = json::array(); },
     "tuning cache JSON: expected an object, got array"},
};

class CacheJsonBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(CacheJsonBad, NamesThePathOfTheBadField) {
  json doc = json::parse(export_json(sample_records()));
  GetParam().mutate(doc);
  auto result = import_json(doc.dump());
  ASSERT_FALSE(result.has_value()) << GetParam().what;
  EXPECT_EQ(result.error().code, ErrorCode::kParse);
  EXPECT_EQ(result.error().message, GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(Cases, CacheJsonBad, ::testing::ValuesIn(kBadCases),
                         [](const ::testing::TestParamInfo<BadCase>& info) {
                           std::string name = info.param.what;
                           for (char& c : name)
                             c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

TEST(CacheJson, SyntaxErrorIsParseError) {
  for (std::string_view text : {"", "{", "{\"format\": }", "[1, 2"}) {
    auto result = import_json(text);
    ASSERT_FALSE(result.has_value()) << text;
    EXPECT_EQ(result.error().code, ErrorCode::kParse);
    EXPECT_TRUE(result.error().message.starts_with("tuning cache JSON: "))
        << result.error().message;
  }
}

// A parameter becomes a JSON number only where the number reads back as the same text; the
// others stay strings, and the object keeps the space's order (not nlohmann's sorted one).
TEST(CacheJson, ParamsAreNumbersOnlyWhereLossless) {
  auto records = sample_records();
  records[0].candidates[0].params = {
      {"ZED", "128"}, {"ALPHA", "0.5"}, {"MID", "007"}, {"E", "1e3"},
      {"NEG", "-3"},  {"FL", "1.0"},    {"SP", " 4"},   {"BIG", "99999999999999999999"}};
  const std::string text = export_json(records);
  const json doc = json::parse(text);
  const json& p = doc["records"][0]["candidates"][0]["params"];
  EXPECT_TRUE(p["ZED"].is_number_integer());
  EXPECT_EQ(p["ZED"], 128);
  EXPECT_TRUE(p["ALPHA"].is_number_float());
  EXPECT_EQ(p["MID"], "007");
  EXPECT_EQ(p["E"], "1e3");
  EXPECT_EQ(p["NEG"], -3);
  EXPECT_TRUE(p["FL"].is_number_float());
  EXPECT_EQ(p["SP"], " 4");
  EXPECT_EQ(p["BIG"], "99999999999999999999");
  // Written in the space's order.
  EXPECT_LT(text.find("\"ZED\""), text.find("\"ALPHA\""));
  auto back = import_json(text);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ((*back)[0].candidates[0].params, records[0].candidates[0].params);
}

// Documents of version 1 (params as [{"name", "value"}], no labels or artifacts) still import.
TEST(CacheJson, VersionOneDocumentStillImports) {
  json doc = json::parse(export_json(sample_records()));
  doc["version"] = 1;
  for (json& r : doc["records"]) {
    r.erase("spec");
    r.erase("problem_name");
    for (json& c : r["candidates"]) {
      c.erase("artifact");
      json list = json::array();
      for (const auto& [name, value] : c["params"].items()) {
        list.push_back({{"name", name},
                        {"value", value.is_string() ? value.get<std::string>() : value.dump()}});
      }
      if (list.empty()) {
        c.erase("params");
      } else {
        c["params"] = list;
      }
    }
  }
  auto back = import_json(doc.dump());
  ASSERT_TRUE(back.has_value()) << back.error().message;
  // json (sorted) reordered the list's source object: compare as sets of pairs.
  auto params = (*back)[0].candidates[0].params;
  auto want = sample_records()[0].candidates[0].params;
  std::sort(params.begin(), params.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(params, want);
  EXPECT_TRUE((*back)[0].spec.empty());
  EXPECT_TRUE((*back)[0].candidates[0].artifact.empty());
}

TEST(CacheJson, ExtraFieldsAndStaleDigestAreIgnored) {
  // ordered_json: nlohmann::json would sort the params object's members as it writes it back.
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(export_json(sample_records()));
  doc["records"][0]["digest"] = "0000";  // import recomputes digests from the key
  doc["records"][0]["note"] = "added by hand";
  auto result = import_json(doc.dump());
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_TRUE(same_record((*result)[0], sample_records()[0]));
}

}  // namespace
}  // namespace ktune
