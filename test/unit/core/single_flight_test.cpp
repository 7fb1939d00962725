// SingleFlight: concurrent calls for one key compute once and share the result; other keys and
// later calls compute again.
#include "core/single_flight.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace ktune {
namespace {

TEST(SingleFlight, ConcurrentCallsForOneKeyComputeOnce) {
  SingleFlight<int> flight;
  std::atomic<int> computed{0}, shared{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      while (!go) std::this_thread::yield();
      bool s = false;
      const int v = flight.run(
          "k",
          [&] {
            ++computed;
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            return 42;
          },
          &s);
      EXPECT_EQ(v, 42);
      shared += s ? 1 : 0;
    });
  }
  go = true;
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(computed.load(), 1);
  EXPECT_EQ(shared.load(), 7);
}

TEST(SingleFlight, OtherKeysAndLaterCallsComputeAgain) {
  SingleFlight<int> flight;
  int computed = 0;
  EXPECT_EQ(flight.run("a", [&] { return ++computed; }), 1);
  EXPECT_EQ(flight.run("a", [&] { return ++computed; }), 2);  // nothing under way: again
  EXPECT_EQ(flight.run("b", [&] { return ++computed; }), 3);
}

TEST(SingleFlight, AThrowReachesTheWaitersAndFreesTheKey) {
  SingleFlight<int> flight;
  std::atomic<bool> started{false};
  std::thread first([&] {
    EXPECT_THROW(flight.run("k",
                            [&]() -> int {
                              started = true;
                              std::this_thread::sleep_for(std::chrono::milliseconds(200));
                              throw std::runtime_error("compiler gone");
                            }),
                 std::runtime_error);
  });
  while (!started) std::this_thread::yield();
  bool shared = false;
  EXPECT_THROW(flight.run(
                   "k", [] { return 1; }, &shared),
               std::runtime_error);
  EXPECT_TRUE(shared);
  first.join();
  EXPECT_EQ(flight.run("k", [] { return 2; }), 2);
}

}  // namespace
}  // namespace ktune
