// The policy file (common/authz/policy.h): its parser, every kind of bad
// line with the error naming the line, Allows() over patterns, prefixes
// and several rules; and the Authorizer (authorizer.h): refusals, their
// metric, and reloads that keep the old policy when the new file is bad.
#include "common/authz/policy.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "common/authz/authorizer.h"
#include "common/authz/permission.h"
#include "common/metrics/registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/temp_dir.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::authz {
namespace {

using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

Policy MustParse(const std::string& text) {
  absl::StatusOr<Policy> policy = Policy::Parse(text, "p.policy");
  EXPECT_THAT(policy, IsOk());
  return policy.ok() ? *std::move(policy) : Policy();
}

TEST(PolicyPermissionTest, TheTableNamesEveryPermissionOnceInEnumOrder) {
  ASSERT_EQ(AllPermissions().size(), kPermissionCount);
  for (size_t i = 0; i < kPermissionCount; ++i) {
    const PermissionInfo& info = AllPermissions()[i];
    EXPECT_EQ(static_cast<size_t>(info.permission), i);
    EXPECT_EQ(PermissionNamed(info.name), info.permission);
  }
  EXPECT_EQ(PermissionNamed("Acquire"), std::nullopt);
  EXPECT_STREQ(PermissionNames(),
               "acquire, describe, read, write, fence, admin, campaign");
}

TEST(PolicyParseTest, AGoodFileGivesItsRulesWithTheirLines) {
  Policy policy = MustParse(
      "# the orders service\n"
      "\n"
      "allow CN=orders-*,O=acme acquire,read,write orders/   # its own\n"
      "  allow \"CN=ops team,O=acme\" describe,admin *\n"
      "allow CN=gw all \"\"\r\n"
      "allow * fence fences/*\n");
  ASSERT_EQ(policy.rules().size(), 4u);
  const PolicyRule& first = policy.rules()[0];
  EXPECT_EQ(first.line, 3);
  EXPECT_EQ(first.identity, "CN=orders-*,O=acme");
  EXPECT_EQ(first.prefix, "orders/");
  EXPECT_TRUE(first.permissions.test(static_cast<size_t>(Permission::kAcquire)));
  EXPECT_TRUE(first.permissions.test(static_cast<size_t>(Permission::kWrite)));
  EXPECT_FALSE(first.permissions.test(static_cast<size_t>(Permission::kFence)));
  EXPECT_EQ(policy.rules()[1].identity, "CN=ops team,O=acme");
  EXPECT_EQ(policy.rules()[1].prefix, "");
  EXPECT_EQ(policy.rules()[1].line, 4);
  EXPECT_TRUE(policy.rules()[2].permissions.all());
  EXPECT_EQ(policy.rules()[2].prefix, "");
  EXPECT_EQ(policy.rules()[3].prefix, "fences/");
}

TEST(PolicyParseTest, AnEmptyFileAllowsNothing) {
  Policy policy = MustParse("# nobody\n\n");
  EXPECT_TRUE(policy.rules().empty());
  EXPECT_FALSE(policy.Allows("CN=a", Permission::kAcquire, "r"));
}

TEST(PolicyParseTest, EveryKindOfBadLineIsNamedWithItsLine) {
  const struct {
    std::string line;
    std::string error;
  } cases[] = {
      {"deny CN=a acquire *", "unknown rule 'deny'"},
      {"allow CN=a acquire", "'allow' takes 3 words"},
      {"allow CN=a acquire * extra", "this line has 4"},
      {"allow CN=a lock *", "unknown permission 'lock' (known: acquire, describe"},
      {"allow CN=a acquire,,read *", "unknown permission ''"},
      {"allow CN=a acquire or*ders/", "`*` may only end it"},
      {"allow CN=a admin orders/", "permission 'admin' concerns no resource"},
      {"allow \"CN=a acquire *", "a quote (\") is not closed"},
      {"allow \"CN=a\"x acquire *", "a closing quote (\") must end its word"},
      {"allow CN=\"a\" acquire *", "a quote (\") may only start a word"},
      {"allow \"\" acquire *", "the identity is empty"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<Policy> policy =
        Policy::Parse("# first\nallow * describe *\n" + c.line + "\n", "/etc/p.policy");
    EXPECT_THAT(policy,
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr("/etc/p.policy:3: "), HasSubstr(c.error))))
        << c.line;
  }
}

TEST(PolicyAllowsTest, PatternsMatchTheWholeSubject) {
  EXPECT_TRUE(GlobMatches("CN=a", "CN=a"));
  EXPECT_FALSE(GlobMatches("CN=a", "CN=ab"));
  EXPECT_FALSE(GlobMatches("CN=a", "xCN=a"));
  EXPECT_TRUE(GlobMatches("*", ""));
  EXPECT_TRUE(GlobMatches("*", "CN=anyone,O=x"));
  EXPECT_TRUE(GlobMatches("CN=w-*,O=acme", "CN=w-1,O=acme"));
  EXPECT_TRUE(GlobMatches("CN=w-*,O=acme", "CN=w-,O=acme"));
  EXPECT_FALSE(GlobMatches("CN=w-*,O=acme", "CN=w-1,O=acme,C=x"));
  EXPECT_TRUE(GlobMatches("*,O=acme", "CN=x,O=y,O=acme"));
  EXPECT_TRUE(GlobMatches("a*b*c", "aXbYbZc"));
  EXPECT_FALSE(GlobMatches("a*b*c", "aXbYbZ"));
  EXPECT_FALSE(GlobMatches("CN=?", "CN=a"));  // only * is special
}

TEST(PolicyAllowsTest, PrefixesPermissionsAndSeveralRules) {
  Policy policy = MustParse(
      "allow CN=w-*,O=acme acquire,write orders/\n"
      "allow CN=w-1,O=acme read *\n"
      "allow CN=ops admin,describe *\n");
  EXPECT_TRUE(policy.Allows("CN=w-7,O=acme", Permission::kAcquire, "orders/1"));
  EXPECT_TRUE(policy.Allows("CN=w-7,O=acme", Permission::kWrite, "orders/"));
  EXPECT_FALSE(policy.Allows("CN=w-7,O=acme", Permission::kWrite, "orders"));
  EXPECT_FALSE(policy.Allows("CN=w-7,O=acme", Permission::kWrite, "billing/1"));
  EXPECT_FALSE(policy.Allows("CN=w-7,O=acme", Permission::kFence, "orders/1"));
  EXPECT_FALSE(policy.Allows("CN=w-7,O=acme", Permission::kRead, "orders/1"));
  // A second rule adds to the first.
  EXPECT_TRUE(policy.Allows("CN=w-1,O=acme", Permission::kRead, "billing/1"));
  EXPECT_TRUE(policy.Allows("CN=w-1,O=acme", Permission::kAcquire, "orders/1"));
  EXPECT_TRUE(policy.Allows("CN=ops", Permission::kAdmin, ""));
  EXPECT_TRUE(policy.Allows("CN=ops", Permission::kDescribe, ""));
  EXPECT_FALSE(policy.Allows("CN=w-1,O=acme", Permission::kAdmin, ""));
  EXPECT_FALSE(policy.Allows("", Permission::kDescribe, "orders/1"));
  // A call that names no resource ("") is covered by rules for all only.
  EXPECT_FALSE(policy.Allows("CN=w-7,O=acme", Permission::kAcquire, ""));
}

// The example the packages ship (packaging/policy.example) parses, and
// means what its comments say.
TEST(PolicyParseTest, ThePackagedExampleParses) {
  ASSERT_OK_AND_ASSIGN(Policy policy, Policy::Load(FENCEGATE_POLICY_EXAMPLE));
  EXPECT_EQ(policy.rules().size(), 3u);
  EXPECT_TRUE(
      policy.Allows("CN=orders-worker-3,O=example", Permission::kWrite, "orders/7"));
  EXPECT_FALSE(
      policy.Allows("CN=orders-worker-3,O=example", Permission::kFence, "orders/7"));
  EXPECT_TRUE(policy.Allows("CN=gateway-1,O=example", Permission::kDescribe, ""));
  EXPECT_TRUE(policy.Allows("CN=ops,O=example", Permission::kAdmin, ""));
}

class PolicyAuthorizerTest : public ::testing::Test {
 protected:
  void Write(const std::string& text) { std::ofstream(path_, std::ios::trunc) << text; }
  // Each test its own directory: ctest runs these tests side by side, and
  // the tiers' test runs may overlap too.
  fencegate::testing::TempDir dir_;
  const std::string path_ = dir_.File("authorizer_test.policy");
  metrics::Registry registry_;
};

TEST_F(PolicyAuthorizerTest, RefusesNamingIdentityPermissionAndResourceAndCounts) {
  Write("allow CN=a acquire orders/\n");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Authorizer> authz,
                       Authorizer::Load(path_, &registry_));
  EXPECT_EQ(authz->Describe(), path_ + " (1 rule)");
  EXPECT_THAT(authz->Check("CN=a", Permission::kAcquire, "orders/1"), IsOk());
  EXPECT_THAT(authz->Check("CN=a", Permission::kAcquire, "billing/1"),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       AllOf(HasSubstr("identity 'CN=a'"), HasSubstr("'acquire'"),
                             HasSubstr("resource 'billing/1'"))));
  EXPECT_THAT(authz->Check("CN=b", Permission::kAdmin, ""),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       AllOf(HasSubstr("'CN=b'"), HasSubstr("'admin'"),
                             ::testing::Not(HasSubstr("resource")))));
  const std::vector<std::string> both = {"orders/1", "billing/1"};
  EXPECT_THAT(authz->CheckEach("CN=a", Permission::kAcquire, both),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("'billing/1'")));
  EXPECT_EQ(authz->refusals(), 3u);
  const std::string text = registry_.Render();
  EXPECT_THAT(text,
              HasSubstr("fencegate_authz_refusals_total{permission=\"acquire\"} 2"));
  EXPECT_THAT(text, HasSubstr("fencegate_authz_refusals_total{permission=\"admin\"} 1"));
  EXPECT_THAT(text, HasSubstr("fencegate_authz_refusals_total{permission=\"write\"} 0"));
  EXPECT_THAT(Authorize(nullptr, "", Permission::kWrite, "x"), IsOk());
}

TEST_F(PolicyAuthorizerTest, ReloadReplacesAGoodPolicyAndKeepsTheOldOnABadOne) {
  Write("allow CN=a read *\n");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Authorizer> authz,
                       Authorizer::Load(path_, &registry_));
  EXPECT_THAT(authz->Check("CN=b", Permission::kRead, "r"),
              StatusIs(absl::StatusCode::kPermissionDenied));
  Write("allow CN=b read *\nallow CN=b write *\n");
  ASSERT_THAT(authz->Reload(), IsOk());
  EXPECT_THAT(authz->Check("CN=b", Permission::kRead, "r"), IsOk());
  EXPECT_THAT(authz->Check("CN=a", Permission::kRead, "r"),
              StatusIs(absl::StatusCode::kPermissionDenied));
  Write("allow CN=a read *\nallow CN=a scribble *\n");
  EXPECT_THAT(authz->Reload(), StatusIs(absl::StatusCode::kInvalidArgument,
                                        HasSubstr(path_ + ":2: unknown permission")));
  EXPECT_THAT(authz->Check("CN=b", Permission::kRead, "r"), IsOk());  // kept
  EXPECT_EQ(authz->reload_failures(), 1u);
  EXPECT_THAT(registry_.Render(),
              HasSubstr("fencegate_authz_policy_reload_failures_total 1"));
  EXPECT_EQ(authz->Describe(), path_ + " (2 rules)");
}

TEST_F(PolicyAuthorizerTest, AMissingOrBadFileIsRefusedAtLoad) {
  EXPECT_THAT(Authorizer::Load(path_ + ".absent", nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("cannot read the policy file")));
  Write("allow CN=a\n");
  EXPECT_THAT(Authorizer::Load(path_, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(path_ + ":1: ")));
}

}  // namespace
}  // namespace fencegate::authz
