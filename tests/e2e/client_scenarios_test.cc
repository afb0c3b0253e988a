// The shared client scenarios, run by the C++ client.
//
// tests/scenarios/client_scenarios.json holds behaviours the C++ and the
// Python clients must agree on, written once as data; this runner plays
// each scenario, one test per scenario name, with LockClient, Lease,
// MultiLease and GatewayClient against the real servers (both sign tokens,
// as the Python tests' servers do), and clients/python/tests/test_scenarios.py
// plays the same file with the Python client. The file's "about" and
// docs/testing.md ("Client scenarios") state the vocabulary; this runner maps
// it onto the C++ API. A step whose op, argument or expectation it does not
// know fails the test (never skipped), so an op added to the file must be
// implemented here and in the Python runner alike.
//
// The file is read by scenario_file.h (its path, and FENCEGATE_CLIENT_SCENARIOS
// to run a mutant instead). The test names are read from the file when the
// binary starts, so a scenario added to the file runs without a rebuild;
// ctest runs them all as e2e.client_scenarios, in one process with one pair
// of servers (tests/e2e_tests.cmake).
//
// Expectations are compared by meaning: the error's kind from its code and
// ErrorInfo (client/errors.h, common/base/errors.h), tokens by relation to
// named leases.
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/random/random.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/base/errors.h"
#include "fencegate/client/errors.h"
#include "fencegate/client/fencing.h"
#include "fencegate/client/gateway_client.h"
#include "fencegate/client/lease.h"
#include "fencegate/client/lock_client.h"
#include "fencegate/client/multi_lease.h"
#include "google/protobuf/struct.pb.h"
#include "gtest/gtest.h"
#include "harness/server_process.h"
#include "harness/temp_dir.h"
#include "tests/e2e/scenario_file.h"

namespace fencegate::e2e {
namespace {

using ::google::protobuf::ListValue;
using ::google::protobuf::Struct;
using ::google::protobuf::Value;
using scenario_file::Arg;
using scenario_file::Bool;
using scenario_file::Number;
using scenario_file::String;

// What an op's call gave, for the expectations of a success.
struct Got {
  std::optional<uint64_t> token, max_token, version, hold_count, holders, permits,
      holds_left;
  std::optional<bool> found, held, lost;
  std::optional<std::string> value, mode;
  std::optional<std::vector<uint64_t>> versions;
};

// The scenario file's name for an error: by code and ErrorInfo, never by
// message. ABORTED LEASE_LOST is not_holder from a plain Renew or Release
// (the service said so of a token) and lease_lost from a Lease.
std::string KindOf(const absl::Status& status, bool plain_lock_call) {
  if (client::IsStaleToken(status)) return "stale_token";
  if (client::IsVersionMismatch(status)) return "version_mismatch";
  if (client::IsLeaseLost(status)) return plain_lock_call ? "not_holder" : "lease_lost";
  if (client::IsNotAcquired(status)) return "not_acquired";
  switch (status.code()) {
    case absl::StatusCode::kPermissionDenied:
      return "permission_denied";
    case absl::StatusCode::kInvalidArgument:
      return "invalid_argument";
    case absl::StatusCode::kResourceExhausted:
      return "resource_exhausted";
    default:
      return absl::StrCat("(none of the file's kinds: ", status.ToString(), ")");
  }
}

class ClientScenarioTest : public ::testing::TestWithParam<std::string> {
 protected:
  // One pair of servers for the process; each scenario uses resources of
  // its own. The key file is the Python tests' (clients/python/tests/harness.py).
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    std::string hex;
    for (int i = 0; i < 32; ++i) hex += "ab";
    std::ofstream(dir_->File("keys.txt")) << "k1 " << hex << " sign\n";
    auto locks = testing::ServerProcess::Start(
        FENCEGATE_LOCKSERVICE_BIN,
        {"--db=" + dir_->File("locks.db"), "--signing_keys=" + dir_->File("keys.txt")},
        dir_->path(), "lockservice");
    ASSERT_TRUE(locks.ok()) << locks.status();
    lockservice_ = locks->release();
    auto gateway = testing::ServerProcess::Start(
        FENCEGATE_GATEWAY_BIN,
        {"--db=" + dir_->File("gateway.db"), "--signing_keys=" + dir_->File("keys.txt")},
        dir_->path(), "gateway");
    ASSERT_TRUE(gateway.ok()) << gateway.status();
    gateway_ = gateway->release();
  }
  static void TearDownTestSuite() {
    delete gateway_;
    delete lockservice_;
    delete dir_;
    gateway_ = nullptr;
    lockservice_ = nullptr;
    dir_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(lockservice_, nullptr);
    ASSERT_NE(gateway_, nullptr);
    auto lock = client::LockClient::Connect(lockservice_->address());
    ASSERT_TRUE(lock.ok()) << lock.status();
    clients_["main"] = *std::move(lock);
    auto gateway = client::GatewayClient::Connect(gateway_->address());
    ASSERT_TRUE(gateway.ok()) << gateway.status();
    gateway_client_ = *std::move(gateway);
    run_ = absl::StrCat(absl::Hex(absl::Uniform<uint32_t>(bitgen_), absl::kZeroPad8));
  }

  void TearDown() override {
    multis_.clear();  // releases the leases before their clients go
    owned_.clear();
    if (!HasFailure()) return;
    std::cerr << "--- lock service log:\n" << lockservice_->LogTail() << "\n";
    std::cerr << "--- gateway log:\n" << gateway_->LogTail() << "\n";
  }

  void Run(const Struct& scenario);
  void RunStep(const Struct& step);

  // Names (the file's logical names, mapped to this run's).
  std::string Resource(const std::string& name) const {
    return name.empty() ? "" : absl::StrCat("scn-cc-", run_, "/", GetParam(), "/", name);
  }
  client::Lease* LeaseNamed(const std::string& name) {
    auto it = leases_.find(name);
    if (it == leases_.end()) {
      ADD_FAILURE() << "no lease named '" << name << "' was granted before this step";
      return nullptr;
    }
    return it->second;
  }
  uint64_t TokenOf(const Value& name) {
    client::Lease* lease = LeaseNamed(name.string_value());
    return lease == nullptr ? 0 : lease->token();
  }

  client::LockClient& ClientOf(const Struct& step) {
    const std::string which = String(step, "client", "main");
    if (which != "main" && which != "other") ADD_FAILURE() << "unknown client " << which;
    std::unique_ptr<client::LockClient>& c = clients_[which];
    if (c == nullptr) {
      auto connected = client::LockClient::Connect(lockservice_->address());
      EXPECT_TRUE(connected.ok()) << connected.status();
      if (connected.ok()) c = *std::move(connected);
    }
    return *c;
  }
  client::AcquireOptions AcquireOptionsOf(const Struct& step) {
    client::AcquireOptions options;
    options.ttl = absl::Milliseconds(Number(step, "ttl_ms", 10000));
    options.wait = absl::Milliseconds(Number(step, "wait_ms", 0));
    const std::string mode = String(step, "mode", "exclusive");
    if (mode == "shared") {
      options.mode = LeaseMode::kShared;
    } else if (mode == "permit") {
      options.mode = LeaseMode::kPermit;
    } else if (mode != "exclusive") {
      ADD_FAILURE() << "unknown mode " << mode;
    }
    options.permits = static_cast<uint32_t>(Number(step, "permits", 0));
    return options;
  }
  std::string HolderOf(const Struct& step) {
    if (Arg(step, "holder") == nullptr)
      return Resource(absl::StrCat("anonymous-", ++holders_));
    return Resource(String(step, "holder"));
  }
  client::Fencing FencingOfStep(const Struct& step) {
    client::Lease* lease = LeaseNamed(String(step, "lease"));
    if (lease == nullptr) return {};
    client::Fencing fencing = client::FencingOf(*lease);
    if (Bool(step, "unsigned")) fencing.signature = {};
    return fencing;
  }

  // The ops (one member each, named after the file's op): make the call,
  // fill `got` on success, return the call's status.
  absl::Status Acquire(const Struct& step, Got& got);
  absl::Status AcquireMany(const Struct& step, Got& got);
  absl::Status Release(const Struct& step, Got& got);
  absl::Status Renew(const Struct& step, Got& got);
  absl::Status Check(const Struct& step, Got& got);
  absl::Status Lost(const Struct& step, Got& got);
  absl::Status WaitLost(const Struct& step, Got& got);
  absl::Status ReleaseToken(const Struct& step, Got& got);
  absl::Status RenewToken(const Struct& step, Got& got);
  absl::Status Describe(const Struct& step, Got& got);
  absl::Status Put(const Struct& step, Got& got);
  absl::Status Delete(const Struct& step, Got& got);
  absl::Status MultiWrite(const Struct& step, Got& got);
  absl::Status Get(const Struct& step, Got& got);
  absl::Status GetUnfenced(const Struct& step, Got& got);
  absl::Status Fence(const Struct& step, Got& got);

  struct Op {
    std::set<std::string> args;     // besides op, expect and note
    std::set<std::string> success;  // what a success's expectation may check
    bool plain_lock_call = false;   // LEASE_LOST means not_holder
    absl::Status (ClientScenarioTest::*call)(const Struct&, Got&);
  };
  static const std::map<std::string, Op>& Ops();

  static testing::TempDir* dir_;
  static testing::ServerProcess* lockservice_;
  static testing::ServerProcess* gateway_;

  absl::BitGen bitgen_;
  std::string run_;
  int holders_ = 0;
  std::map<std::string, std::unique_ptr<client::LockClient>> clients_;
  std::unique_ptr<client::GatewayClient> gateway_client_;
  // After the clients: destroyed (released) first.
  std::vector<std::unique_ptr<client::Lease>> owned_;
  std::vector<std::unique_ptr<client::MultiLease>> multis_;
  std::map<std::string, client::Lease*> leases_;
};

testing::TempDir* ClientScenarioTest::dir_ = nullptr;
testing::ServerProcess* ClientScenarioTest::lockservice_ = nullptr;
testing::ServerProcess* ClientScenarioTest::gateway_ = nullptr;

// What a successful call gave, into `got`.
void Fill(Got& got, const client::ReadResult& r) {
  got.found = r.found;
  got.value = r.value;
  got.version = r.version;
  got.max_token = r.max_token;
}
void Fill(Got& got, const client::WriteResult& w) {
  got.version = w.version;
  got.max_token = w.max_token;
}
void Fill(Got& got, const client::MultiWriteResult& w) {
  got.versions = w.versions;
  got.max_token = w.max_token;
}
void Fill(Got& got, const client::LockState& s) {
  got.held = s.held;
  got.token = s.token;
  got.mode = LeaseModeName(s.mode);
  got.hold_count = s.hold_count;
  got.holders = s.holders;
  got.permits = s.permits;
}
template <typename T>
absl::Status Into(Got& got, const absl::StatusOr<T>& result) {
  if (result.ok()) Fill(got, *result);
  return result.status();
}

absl::Status ClientScenarioTest::Acquire(const Struct& step, Got& got) {
  auto lease = ClientOf(step).AcquireLease(Resource(String(step, "resource")),
                                           HolderOf(step), AcquireOptionsOf(step));
  if (!lease.ok()) return lease.status();
  got.token = (*lease)->token();
  if (Arg(step, "as") != nullptr) leases_[String(step, "as")] = lease->get();
  owned_.push_back(*std::move(lease));
  return absl::OkStatus();
}

absl::Status ClientScenarioTest::AcquireMany(const Struct& step, Got&) {
  std::vector<std::string> resources;
  for (const Value& r : step.fields().at("resources").list_value().values()) {
    resources.push_back(Resource(r.string_value()));
  }
  auto multi =
      ClientOf(step).AcquireMultiLease(resources, HolderOf(step), AcquireOptionsOf(step));
  if (!multi.ok()) return multi.status();
  if (const Value* as = Arg(step, "as"); as != nullptr) {
    const ListValue& names = as->list_value();
    EXPECT_EQ(static_cast<size_t>(names.values_size()), (*multi)->size())
        << "'as' must name every lease of the set";
    for (size_t i = 0; i < std::min<size_t>(names.values_size(), (*multi)->size()); ++i) {
      leases_[names.values(i).string_value()] = &(*multi)->lease(i);
    }
  }
  multis_.push_back(*std::move(multi));
  return absl::OkStatus();
}

absl::Status ClientScenarioTest::Release(const Struct& step, Got&) {
  client::Lease* lease = LeaseNamed(String(step, "lease"));
  return lease == nullptr ? absl::OkStatus() : lease->Release();
}

absl::Status ClientScenarioTest::Renew(const Struct& step, Got&) {
  client::Lease* lease = LeaseNamed(String(step, "lease"));
  return lease == nullptr ? absl::OkStatus() : lease->Renew();
}

absl::Status ClientScenarioTest::Check(const Struct& step, Got&) {
  client::Lease* lease = LeaseNamed(String(step, "lease"));
  return lease == nullptr ? absl::OkStatus() : lease->Check();
}

absl::Status ClientScenarioTest::Lost(const Struct& step, Got& got) {
  client::Lease* lease = LeaseNamed(String(step, "lease"));
  if (lease != nullptr) got.lost = lease->lost();
  return absl::OkStatus();
}

absl::Status ClientScenarioTest::WaitLost(const Struct& step, Got& got) {
  client::Lease* lease = LeaseNamed(String(step, "lease"));
  const absl::Duration timeout = absl::Milliseconds(Number(step, "timeout_ms", 0));
  if (lease != nullptr) got.lost = lease->WaitLost(timeout);
  return absl::OkStatus();
}

absl::Status ClientScenarioTest::ReleaseToken(const Struct& step, Got& got) {
  client::Fencing f = FencingOfStep(step);
  absl::StatusOr<uint32_t> left =
      ClientOf(step).Release(f.resource, f.token, "", f.signature, f.mode);
  if (left.ok()) got.holds_left = *left;
  return left.status();
}

absl::Status ClientScenarioTest::RenewToken(const Struct& step, Got&) {
  client::Fencing f = FencingOfStep(step);
  const absl::Duration ttl = absl::Milliseconds(Number(step, "ttl_ms", 10000));
  return ClientOf(step)
      .Renew(f.resource, f.token, ttl, absl::InfiniteDuration(), f.signature, f.mode)
      .status();
}

absl::Status ClientScenarioTest::Describe(const Struct& step, Got& got) {
  return Into(got, ClientOf(step).Describe(Resource(String(step, "resource"))));
}

absl::Status ClientScenarioTest::Put(const Struct& step, Got& got) {
  return Into(
      got, gateway_client_->Put(FencingOfStep(step), String(step, "key"),
                                String(step, "value"), Number(step, "expected_version")));
}

absl::Status ClientScenarioTest::Delete(const Struct& step, Got& got) {
  return Into(got, gateway_client_->Delete(FencingOfStep(step), String(step, "key"),
                                           Number(step, "expected_version")));
}

absl::Status ClientScenarioTest::MultiWrite(const Struct& step, Got& got) {
  std::vector<client::Mutation> mutations;
  for (const Value& v : step.fields().at("mutations").list_value().values()) {
    const Struct& m = v.struct_value();
    for (const auto& [key, unused] : m.fields()) {
      EXPECT_TRUE(key == "key" || key == "value" || key == "delete" ||
                  key == "expected_version")
          << "this runner does not know the mutation key '" << key << "'";
    }
    EXPECT_NE(Arg(m, "value") != nullptr, Bool(m, "delete"))
        << "a mutation puts a value or deletes";
    client::Mutation mutation;
    mutation.key = String(m, "key");
    if (Arg(m, "value") != nullptr) mutation.value = String(m, "value");
    mutation.expected_version = Number(m, "expected_version");
    mutations.push_back(std::move(mutation));
  }
  return Into(got, gateway_client_->MultiWrite(FencingOfStep(step), mutations));
}

absl::Status ClientScenarioTest::Get(const Struct& step, Got& got) {
  return Into(got, gateway_client_->Read(FencingOfStep(step), String(step, "key")));
}

absl::Status ClientScenarioTest::GetUnfenced(const Struct& step, Got& got) {
  return Into(got, gateway_client_->ReadUnfenced(Resource(String(step, "resource")),
                                                 String(step, "key")));
}

absl::Status ClientScenarioTest::Fence(const Struct& step, Got& got) {
  absl::StatusOr<uint64_t> max_token = gateway_client_->Fence(FencingOfStep(step));
  if (max_token.ok()) got.max_token = *max_token;
  return max_token.status();
}

// The file's ops: their arguments, what a success's expectation may check,
// and the member that makes the call.
const std::map<std::string, ClientScenarioTest::Op>& ClientScenarioTest::Ops() {
  using T = ClientScenarioTest;
  const std::set<std::string> read = {"found", "value", "version", "max_token_of"};
  const std::set<std::string> write = {"version", "max_token_of"};
  static const auto* ops = new std::map<std::string, Op>{
      {"acquire",
       {{"resource", "holder", "ttl_ms", "wait_ms", "mode", "permits", "as", "client"},
        {"token_above", "token_same_as"},
        false,
        &T::Acquire}},
      {"acquire_many",
       {{"resources", "holder", "ttl_ms", "wait_ms", "mode", "as", "client"},
        {},
        false,
        &T::AcquireMany}},
      {"release", {{"lease"}, {}, false, &T::Release}},
      {"renew", {{"lease"}, {}, false, &T::Renew}},
      {"check", {{"lease"}, {}, false, &T::Check}},
      {"lost", {{"lease"}, {"lost"}, false, &T::Lost}},
      {"wait_lost", {{"lease", "timeout_ms"}, {"lost"}, false, &T::WaitLost}},
      {"release_token",
       {{"lease", "unsigned", "client"}, {"holds_left"}, true, &T::ReleaseToken}},
      {"renew_token",
       {{"lease", "unsigned", "ttl_ms", "client"}, {}, true, &T::RenewToken}},
      {"describe",
       {{"resource", "client"},
        {"held", "token_of", "mode", "hold_count", "holders", "permits"},
        false,
        &T::Describe}},
      {"put",
       {{"lease", "unsigned", "key", "value", "expected_version"},
        write,
        false,
        &T::Put}},
      {"delete",
       {{"lease", "unsigned", "key", "expected_version"}, write, false, &T::Delete}},
      {"multi_write",
       {{"lease", "unsigned", "mutations"},
        {"versions", "max_token_of"},
        false,
        &T::MultiWrite}},
      {"get", {{"lease", "unsigned", "key"}, read, false, &T::Get}},
      {"get_unfenced", {{"resource", "key"}, read, false, &T::GetUnfenced}},
      {"fence", {{"lease", "unsigned"}, {"max_token_of"}, false, &T::Fence}},
  };
  return *ops;
}

// Per error kind: what its expectation may check.
const std::map<std::string, std::set<std::string>>& ErrorKeys() {
  static const auto* keys = new std::map<std::string, std::set<std::string>>{
      {"stale_token", {"current_token_of"}},
      {"version_mismatch", {"current_version"}},
      {"not_holder", {"current_token_of", "current_token"}},
      {"lease_lost", {}},
      {"not_acquired", {"holder_token_of"}},
      {"permission_denied", {}},
      {"invalid_argument", {"field"}},
      {"resource_exhausted", {}},
  };
  return *keys;
}

void ClientScenarioTest::Run(const Struct& scenario) {
  for (const auto& [key, unused] : scenario.fields()) {
    ASSERT_TRUE(key == "name" || key == "description" || key == "steps")
        << "unknown scenario key '" << key << "'";
  }
  ASSERT_FALSE(String(scenario, "description").empty())
      << "every scenario says what it shows";
  const ListValue& steps = scenario.fields().at("steps").list_value();
  for (int i = 0; i < steps.values_size(); ++i) {
    SCOPED_TRACE(absl::StrCat("scenario ", GetParam(), ", step ", i + 1, " ",
                              scenario_file::ToJson(steps.values(i).struct_value())));
    RunStep(steps.values(i).struct_value());
    if (HasFailure()) return;  // later steps build on this one
  }
}

void ClientScenarioTest::RunStep(const Struct& step) {
  const std::string op_name = String(step, "op");
  auto op = Ops().find(op_name);
  ASSERT_TRUE(op != Ops().end())
      << "this runner does not know the op '" << op_name << "'";
  for (const auto& [key, unused] : step.fields()) {
    ASSERT_TRUE(op->second.args.count(key) > 0 || key == "op" || key == "expect" ||
                key == "note")
        << "this runner does not know the argument '" << key << "' of " << op_name;
  }
  Struct expect;
  if (const Value* e = Arg(step, "expect"); e != nullptr) expect = e->struct_value();
  const std::string kind = String(expect, "error");
  expect.mutable_fields()->erase("error");
  if (!kind.empty()) {
    ASSERT_TRUE(ErrorKeys().count(kind) > 0) << "unknown error kind " << kind;
  }
  const std::set<std::string>& allowed =
      kind.empty() ? op->second.success : ErrorKeys().at(kind);
  for (const auto& [key, unused] : expect.fields()) {
    ASSERT_TRUE(allowed.count(key) > 0)
        << "this runner does not know the expectation '" << key << "' of " << op_name
        << (kind.empty() ? " succeeding" : " failing with " + kind);
  }

  Got got;
  const absl::Status status = (this->*op->second.call)(step, got);
  if (HasFailure()) return;
  if (!status.ok()) {
    ASSERT_FALSE(kind.empty()) << "expected success, got " << status;
    ASSERT_EQ(KindOf(status, op->second.plain_lock_call), kind) << status;
    std::optional<ErrorInfo> info = GetErrorInfo(status);
    for (const auto& [key, want] : expect.fields()) {
      if (key == "field") {
        EXPECT_EQ(info.has_value() ? info->field : "", want.string_value()) << status;
      } else if (key == "current_token_of" || key == "holder_token_of") {
        EXPECT_EQ(client::CurrentToken(status), TokenOf(want))
            << key << ": " << want.string_value() << "'s token; " << status;
      } else if (key == "current_token") {
        EXPECT_EQ(client::CurrentToken(status), Number(want)) << status;
      } else if (key == "current_version") {
        EXPECT_EQ(client::CurrentVersion(status), Number(want)) << status;
      } else {
        ADD_FAILURE() << "unhandled expectation " << key;
      }
    }
    return;
  }
  ASSERT_TRUE(kind.empty()) << "expected the error " << kind
                            << ", but the call succeeded";
  for (const auto& [key, want] : expect.fields()) {
    auto check = [&, key = key](const auto& field, const auto& expected) {
      ASSERT_TRUE(field.has_value()) << op_name << " gave no " << key;
      EXPECT_EQ(*field, expected) << key;
    };
    if (key == "token_above") {
      ASSERT_TRUE(got.token.has_value());
      EXPECT_GT(*got.token, TokenOf(want))
          << "token above " << want.string_value() << "'s";
    } else if (key == "token_same_as" || key == "token_of") {
      check(got.token, TokenOf(want));
    } else if (key == "max_token_of") {
      check(got.max_token, TokenOf(want));
    } else if (key == "mode" || key == "value") {
      check(key == "mode" ? got.mode : got.value, want.string_value());
    } else if (key == "held" || key == "found" || key == "lost") {
      check(key == "held"    ? got.held
            : key == "found" ? got.found
                             : got.lost,
            want.bool_value());
    } else if (key == "versions") {
      std::vector<uint64_t> versions;
      for (const Value& v : want.list_value().values())
        versions.push_back(Number(v).value_or(0));
      check(got.versions, versions);
    } else if (key == "version" || key == "hold_count" || key == "holders" ||
               key == "permits" || key == "holds_left") {
      const std::optional<uint64_t>& field = key == "version"      ? got.version
                                             : key == "hold_count" ? got.hold_count
                                             : key == "holders"    ? got.holders
                                             : key == "permits"    ? got.permits
                                                                   : got.holds_left;
      check(field, Number(want));
    } else {
      ADD_FAILURE() << "unhandled expectation " << key;
    }
  }
}

TEST_P(ClientScenarioTest, Run) {
  absl::StatusOr<std::vector<Struct>> all = scenario_file::LoadScenarios();
  ASSERT_TRUE(all.ok()) << all.status();
  for (const Struct& scenario : *all) {
    if (scenario.fields().at("name").string_value() == GetParam()) {
      Run(scenario);
      return;
    }
  }
  FAIL() << "no scenario named " << GetParam() << " in " << scenario_file::ScenarioFile()
         << " (rebuild e2e_tests to follow the file)";
}

INSTANTIATE_TEST_SUITE_P(scenarios, ClientScenarioTest,
                         ::testing::ValuesIn(scenario_file::ScenarioNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace fencegate::e2e
