// The TuningCache contract (unit/cache/cache_contract.h), the same tests the SQLite and memory
// stores pass, against a real redis-server started on loopback for this test process.
#include <gtest/gtest.h>

#include <memory>

#include "ktune/cache/cache_url.h"
#include "ktune/cache_redis/redis_cache.h"
#include "support/redis_server.h"
#include "unit/cache/cache_contract.h"

namespace ktune::testing_cache {
namespace {

struct RedisFactory {
  std::unique_ptr<TuningCache> make() {
    test::RedisServer& server = test::shared_redis_server();
    test::require_redis(server);
    if (!server.started()) return nullptr;
    auto url = parse_cache_url(server.url());
    EXPECT_TRUE(url.has_value());
    if (!url) return nullptr;
    auto cache = open_redis_cache(*url);
    EXPECT_TRUE(cache.has_value()) << cache.error().message;
    if (!cache) return nullptr;
    // Tests of one process share the server: each starts from an empty store.
    auto cleared = (*cache)->clear();
    EXPECT_TRUE(cleared.has_value()) << cleared.error().message;
    return std::move(*cache);
  }
};

using Stores = ::testing::Types<RedisFactory>;
INSTANTIATE_TYPED_TEST_SUITE_P(Redis, TuningCacheContract, Stores);
INSTANTIATE_TYPED_TEST_SUITE_P(Redis, PartialsContract, Stores);

}  // namespace
}  // namespace ktune::testing_cache
