// RememberedIds (lockservice/core/remembered_ids.h): a held lease's last
// request ids in one block; the oldest go first, and what the store persists
// comes back the same.
#include "lockservice/core/remembered_ids.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fencegate::lockservice {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(RememberedIdsTest, KeepsTheNewestUpToTheLimitOldestFirst) {
  RememberedIds ids;
  EXPECT_TRUE(ids.empty());
  EXPECT_FALSE(ids.Contains("a"));
  ids.Remember("a", 3);
  ids.Remember("", 3);  // no id: nothing to remember
  ids.Remember("bb", 3);
  ids.Remember(std::string(128, 'c'), 3);
  EXPECT_THAT(ids.ToVector(), ElementsAre("a", "bb", std::string(128, 'c')));
  ids.Remember("d", 3);
  EXPECT_FALSE(ids.Contains("a"));
  EXPECT_TRUE(ids.Contains("bb"));
  EXPECT_TRUE(ids.Contains("d"));
  EXPECT_FALSE(ids.Contains("b"));  // a prefix is another id
  EXPECT_FALSE(ids.Contains(""));
  EXPECT_THAT(ids.ToVector(), ElementsAre("bb", std::string(128, 'c'), "d"));
}

TEST(RememberedIdsTest, IdsWithAnyBytesRoundTrip) {
  const std::string odd = std::string("\0\n\xff", 3) + "x";
  RememberedIds ids;
  ids.Assign({"first", odd, "", "last"}, 16);
  EXPECT_THAT(ids.ToVector(), ElementsAre("first", odd, "last"));
  EXPECT_TRUE(ids.Contains(odd));
  RememberedIds moved = std::move(ids);
  EXPECT_TRUE(moved.Contains("last"));
  moved.Assign({"a", "b", "c"}, 2);  // a lowered limit keeps the newest
  EXPECT_THAT(moved.ToVector(), ElementsAre("b", "c"));
  moved.Remember("z", 0);
  EXPECT_TRUE(moved.empty());
  EXPECT_THAT(moved.ToVector(), IsEmpty());
}

}  // namespace
}  // namespace fencegate::lockservice
