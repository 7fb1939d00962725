// The TuningCache contract (unit/cache/cache_contract.h) over the SQLite store and the memory
// store.
#include "unit/cache/cache_contract.h"

#include <gtest/gtest.h>

#include <memory>

#include "ktune/cache_sqlite/sqlite_cache.h"

namespace ktune::testing_cache {
namespace {

struct SqliteFactory {
  TempDir dir;
  std::unique_ptr<TuningCache> make() {
    auto cache = open_sqlite_cache(dir.path());
    EXPECT_TRUE(cache.has_value()) << cache.error().message;
    return cache ? std::move(*cache) : nullptr;
  }
};

struct MemoryFactory {
  std::unique_ptr<TuningCache> make() { return make_memory_cache(); }
};

using Stores = ::testing::Types<SqliteFactory, MemoryFactory>;
INSTANTIATE_TYPED_TEST_SUITE_P(Local, TuningCacheContract, Stores);
INSTANTIATE_TYPED_TEST_SUITE_P(Local, PartialsContract, Stores);

}  // namespace
}  // namespace ktune::testing_cache
