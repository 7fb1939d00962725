// make_tuning_key: the one derivation of tuning-cache keys. Pinned to the layouts that stored
// caches were written with (Selector::key_for and MultiKernel's key before the derivation moved
// here), so that existing records keep hitting; and every input that can change a tuning's answer
// changes the digest.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/hash.h"
#include "ktune/cache/tuning_cache.h"

namespace ktune {
namespace {

KeyInputs checked() {
  return KeyInputs{"matmul",
                   "matmul/f32[64,64]x[64,64]",
                   {"key-b", "key-a", "key-c"},
                   KeyVerification{"ref-key", Tolerance{1e-3, 1e-4, 1e-3}, 7},
                   "cpu:Xeon x16",
                   "g++ 12.2 -O3"};
}

KeyInputs unchecked() {
  return KeyInputs{"multi_kernel:row_sum", "1024x256x0x0", {"looped", "persistent"},
                   std::nullopt,           "cpu:Xeon x16", "in-process"};
}

// The Selector's layout as it was written before make_tuning_key.
std::string selector_layout(const std::vector<std::string>& sorted_keys, const char* reference,
                            const char* tolerance, std::int64_t seed) {
  Hasher h;
  for (const std::string& k : sorted_keys) h.add(k);
  h.add(reference);
  if (tolerance != nullptr) h.add(std::string_view(tolerance));
  h.add(seed);
  return h.hex();
}

TEST(TuningKey, SelectorKeysKeepTheirStoredLayout) {
  const TuningKey key = make_tuning_key(checked());
  EXPECT_EQ(key.op, "matmul");
  EXPECT_EQ(key.problem, "matmul/f32[64,64]x[64,64]");
  EXPECT_EQ(key.device, "cpu:Xeon x16");
  EXPECT_EQ(key.toolchain, "g++ 12.2 -O3");
  EXPECT_FALSE(key.version.empty());  // ktune's, added inside
  EXPECT_EQ(key.candidate_set, selector_layout({"key-a", "key-b", "key-c"}, "reference:ref-key",
                                               "tolerance 0.001 0.0001 0.001", 7));
  // The literal pins the hash function itself too.
  EXPECT_EQ(key.candidate_set, "7d38f2457834c586303641401a622cb3");

  KeyInputs plain = checked();
  plain.verification->reference.reset();
  plain.verification->tolerance.reset();
  EXPECT_EQ(make_tuning_key(plain).candidate_set,
            selector_layout({"key-a", "key-b", "key-c"}, "no reference", nullptr, 7));
}

TEST(TuningKey, MultiKernelKeysKeepTheirStoredLayout) {
  const TuningKey key = make_tuning_key(unchecked());
  Hasher h;
  h.add("looped").add("persistent");  // sorted variant names, nothing else
  EXPECT_EQ(key.candidate_set, h.hex());
  EXPECT_EQ(key.candidate_set, "c2027bb7ecf9ad0723beeae50c3d007c");
  EXPECT_EQ(key.op, "multi_kernel:row_sum");
  EXPECT_EQ(key.problem, "1024x256x0x0");
  EXPECT_EQ(key.toolchain, "in-process");
}

TEST(TuningKey, CandidateOrderDoesNotMatterButEveryInputDoes) {
  const std::string base = make_tuning_key(checked()).digest();
  KeyInputs reordered = checked();
  std::swap(reordered.candidates.front(), reordered.candidates.back());
  EXPECT_EQ(make_tuning_key(reordered).digest(), base);

  std::vector<KeyInputs> changed(10, checked());
  changed[0].op = "matmul2";
  changed[1].problem = "matmul/f32[64,64]x[64,65]";
  changed[2].candidates.pop_back();
  changed[3].verification->reference = "ref-key2";
  changed[4].verification->tolerance->atol = 2e-4;
  changed[5].verification->seed = 8;
  changed[6].device = "cpu:Xeon x8";
  changed[7].toolchain = "g++ 12.2 -O2";
  changed[8].verification.reset();
  changed[9].verification->tolerance->rms_atol = 0x1p-5;  // in the key only where set
  for (std::size_t i = 0; i < changed.size(); ++i) {
    EXPECT_NE(make_tuning_key(changed[i]).digest(), base) << "input " << i;
  }
  // No reference and an unchecked tuning are different keys too.
  KeyInputs no_reference = unchecked();
  no_reference.verification = KeyVerification{};
  EXPECT_NE(make_tuning_key(no_reference).digest(), make_tuning_key(unchecked()).digest());
}

}  // namespace
}  // namespace ktune
