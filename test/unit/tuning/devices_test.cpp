// --devices lists (ktune/tuning/devices.h): parsing, CPU core sets against the cores allowed,
// CUDA ordinals against the GPU count, the worker's CUDA_VISIBLE_DEVICES under ktune's own, and
// the slot environment and cores that a worker of each slot gets (worker_options_for).
#include "ktune/tuning/devices.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

TEST(DeviceList, ParsesAllIndicesAndRanges) {
  auto all = parse_device_list("all");
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->all);
  auto list = parse_device_list("0,2-4,7");
  ASSERT_TRUE(list) << list.error().message;
  EXPECT_FALSE(list->all);
  EXPECT_EQ(list->items, (std::vector<std::vector<int>>{{0}, {2, 3, 4}, {7}}));
}

TEST(DeviceList, RejectsWhatIsNotAList) {
  for (const char* bad : {"", "x", "0,", ",1", "1-0", "-1", "0-", "1.5", "0,,1", "ALL", "0 1"}) {
    auto r = parse_device_list(bad);
    EXPECT_FALSE(r) << "'" << bad << "'";
    if (!r) {
      EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
      EXPECT_THAT(r.error().message, HasSubstr("--devices"));
    }
  }
}

TEST(CpuDeviceSlots, EachItemIsADevicePinnedToItsCores) {
  auto slots = cpu_device_slots(*parse_device_list("0-1,2-3"), {0, 1, 2, 3});
  ASSERT_TRUE(slots) << slots.error().message;
  ASSERT_EQ(slots->size(), 2u);
  EXPECT_EQ((*slots)[0].name, "cpu:0-1");
  EXPECT_EQ((*slots)[0].cpus, (std::vector<int>{0, 1}));
  EXPECT_EQ((*slots)[1].name, "cpu:2-3");
  EXPECT_TRUE((*slots)[1].env.empty());
  auto all = cpu_device_slots(*parse_device_list("all"), {0, 1, 2});
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ(all->front().cpus, (std::vector<int>{0, 1, 2}));
}

TEST(CpuDeviceSlots, RefusesSharedForeignAndUnequalCores) {
  const std::vector<int> allowed = {0, 1, 2, 3};
  auto shared = cpu_device_slots(*parse_device_list("0-1,1-2"), allowed);
  ASSERT_FALSE(shared);
  EXPECT_THAT(shared.error().message, HasSubstr("core 1 is in two devices"));
  auto foreign = cpu_device_slots(*parse_device_list("0,9"), allowed);
  ASSERT_FALSE(foreign);
  EXPECT_THAT(foreign.error().message, HasSubstr("core 9 is not one ktune may run on (0-3)"));
  auto unequal = cpu_device_slots(*parse_device_list("0,1-3"), allowed);
  ASSERT_FALSE(unequal);
  EXPECT_THAT(unequal.error().message, HasSubstr("cpu:0 has 1 core(s), cpu:1-3 has 3"));
}

TEST(CudaDeviceSlots, OrdinalsBelowTheCountEachOnce) {
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  auto two = cuda_device_slots(*parse_device_list("1,0"), 4);
  ASSERT_TRUE(two) << two.error().message;
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0].name, "cuda:1");
  EXPECT_EQ((*two)[0].env,
            (std::vector<std::pair<std::string, std::string>>{{"CUDA_VISIBLE_DEVICES", "1"}}));
  auto all = cuda_device_slots(*parse_device_list("all"), 3);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), 3u);
  auto over = cuda_device_slots(*parse_device_list("0,4"), 4);
  ASSERT_FALSE(over);
  EXPECT_THAT(over.error().message, HasSubstr("4 GPU(s) visible (0-3); there is no GPU 4"));
  auto twice = cuda_device_slots(*parse_device_list("0,1,0"), 4);
  ASSERT_FALSE(twice);
  EXPECT_THAT(twice.error().message, HasSubstr("GPU 0 is listed twice"));
  auto none = cuda_device_slots(*parse_device_list("all"), 0);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::kUnavailable);
}

TEST(CudaVisibleDevice, FollowsKtunesOwnList) {
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(cuda_visible_device(2), "2");
  ::setenv("CUDA_VISIBLE_DEVICES", "3,5,GPU-1234", 1);
  EXPECT_EQ(cuda_visible_device(0), "3");
  EXPECT_EQ(cuda_visible_device(1), "5");
  EXPECT_EQ(cuda_visible_device(2), "GPU-1234");
  auto slots = cuda_device_slots(*parse_device_list("1"), 3);
  ASSERT_TRUE(slots);
  EXPECT_EQ(slots->front().env.front().second, "5");
  ::unsetenv("CUDA_VISIBLE_DEVICES");
}

TEST(FirstListedDevice, TheFirstItemElseTheFallback) {
  EXPECT_EQ(first_listed_device("2,0", 0), 2);
  EXPECT_EQ(first_listed_device("all", 1), 1);
  EXPECT_EQ(first_listed_device("", 3), 3);
  EXPECT_EQ(first_listed_device("x", 0), 0);
}

TEST(WorkerOptionsFor, TheSlotsEnvironmentReplacesAndItsCoresPin) {
  WorkerOptions base;
  base.env = {{"CUDA_VISIBLE_DEVICES", "0"}, {"KEEP", "1"}};
  const DeviceSlot slot{"cuda:1", {{"CUDA_VISIBLE_DEVICES", "1"}}, {}};
  const WorkerOptions w = worker_options_for(base, slot);
  EXPECT_EQ(w.env, (std::vector<std::pair<std::string, std::string>>{
                       {"KEEP", "1"}, {"CUDA_VISIBLE_DEVICES", "1"}}));
  EXPECT_TRUE(w.cpus.empty());
  const WorkerOptions pinned = worker_options_for(base, DeviceSlot{"cpu:2-3", {}, {2, 3}});
  EXPECT_EQ(pinned.cpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(pinned.env, base.env);
}

}  // namespace
}  // namespace ktune::test
