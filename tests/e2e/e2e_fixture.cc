#include "tests/e2e/e2e_fixture.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace fencegate::e2e {

void E2eTest::SetUp() {
  auto locks = testing::ServerProcess::Start(FENCEGATE_LOCKSERVICE_BIN,
                                             {"--db=" + dir_.File("locks.db")},
                                             dir_.path(), "lockservice");
  ASSERT_TRUE(locks.ok()) << locks.status();
  lockservice_ = *std::move(locks);
  auto gateway = testing::ServerProcess::Start(
      FENCEGATE_GATEWAY_BIN, {"--db=" + dir_.File("gateway.db")}, dir_.path(), "gateway");
  ASSERT_TRUE(gateway.ok()) << gateway.status();
  gateway_ = *std::move(gateway);
  auto lock = client::LockClient::Connect(lockservice_->address());
  ASSERT_TRUE(lock.ok()) << lock.status();
  lock_ = *std::move(lock);
  auto gateway_client = client::GatewayClient::Connect(gateway_->address());
  ASSERT_TRUE(gateway_client.ok()) << gateway_client.status();
  gateway_client_ = *std::move(gateway_client);
}

void E2eTest::TearDown() {
  if (!HasFailure()) return;
  if (lockservice_ != nullptr) {
    std::cerr << "--- lock service log:\n" << lockservice_->LogTail() << "\n";
  }
  if (gateway_ != nullptr)
    std::cerr << "--- gateway log:\n" << gateway_->LogTail() << "\n";
  for (const std::string& path : client_logs_) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::cerr << "--- " << path << ":\n" << text.str() << "\n";
  }
}

absl::StatusOr<std::unique_ptr<demo::ClientProcess>> E2eTest::StartClient(
    const std::string& name, const std::string& resource, bool plain,
    const std::string& lockservice) {
  demo::ClientProcessOptions options;
  options.binary = FENCEGATE_DEMO_CLIENT_BIN;
  options.name = name;
  options.lockservice = lockservice.empty() ? lockservice_->address() : lockservice;
  if (plain) {
    options.plain_db = dir_.File("plain.db");
  } else {
    options.gateway = gateway_->address();
  }
  options.resource = resource;
  options.stderr_path = dir_.File(absl::StrCat(name, ".log"));
  client_logs_.push_back(options.stderr_path);
  return demo::ClientProcess::Start(options);
}

absl::StatusOr<demo::Message> E2eTest::Call(demo::ClientProcess& client,
                                            absl::string_view word) {
  absl::StatusOr<demo::Message> reply = client.Call(word);
  if (reply.ok() && reply->status() == "error") {
    return absl::InternalError(
        absl::StrCat(client.name(), " ", word, ": ", reply->Get("msg")));
  }
  return reply;
}

absl::StatusOr<demo::Message> E2eTest::Acquire(demo::ClientProcess& client) {
  demo::Message command;
  command.word = "acquire";
  command.Set("ttl_ms", absl::ToInt64Milliseconds(kTtl));
  absl::StatusOr<demo::Message> reply = client.Call(command);
  if (reply.ok() && !reply->ok()) {
    return absl::InternalError(
        absl::StrCat(client.name(), " did not acquire: ", demo::FormatMessage(*reply)));
  }
  return reply;
}

absl::StatusOr<E2eTest::PausedHolder> E2eTest::PauseHolderUntilSuperseded(
    const std::string& resource) {
  PausedHolder p;
  absl::StatusOr<std::unique_ptr<demo::ClientProcess>> c1 =
      StartClient("client 1", resource);
  if (!c1.ok()) return c1.status();
  p.client1 = *std::move(c1);
  absl::StatusOr<std::unique_ptr<demo::ClientProcess>> c2 =
      StartClient("client 2", resource);
  if (!c2.ok()) return c2.status();
  p.client2 = *std::move(c2);
  auto step = [](absl::StatusOr<demo::Message> reply,
                 const char* what) -> absl::StatusOr<demo::Message> {
    if (reply.ok() && !reply->ok()) {
      return absl::InternalError(absl::StrCat(what, ": ", demo::FormatMessage(*reply)));
    }
    return reply;
  };
  absl::StatusOr<demo::Message> grant1 = step(Acquire(*p.client1), "client 1's acquire");
  if (!grant1.ok()) return grant1.status();
  p.token1 = grant1->GetUint("token");
  absl::StatusOr<demo::Message> check1 =
      step(Call(*p.client1, "check"), "client 1's lease before the pause");
  if (!check1.ok()) return check1.status();
  absl::StatusOr<demo::Message> read1 = step(Call(*p.client1, "read"), "client 1's read");
  if (!read1.ok()) return read1.status();
  if (read1->GetInt("value") != 0) {
    return absl::InternalError(
        absl::StrCat("client 1 read ", read1->GetInt("value"), " from a fresh counter"));
  }
  // The pause: the whole process, its renewal thread included.
  if (absl::Status frozen = p.client1->Freeze(); !frozen.ok()) return frozen;
  if (testing::ProcessState(p.client1->pid()) != 'T') {
    return absl::InternalError("client 1 is not stopped");
  }
  if (absl::Status gone = WaitUntilLeaseGone(resource, p.token1); !gone.ok()) return gone;
  if (testing::ProcessState(p.client1->pid()) != 'T') {
    return absl::InternalError("client 1 ran during the pause");
  }
  absl::StatusOr<demo::Message> grant2 = step(Acquire(*p.client2), "client 2's acquire");
  if (!grant2.ok()) return grant2.status();
  p.token2 = grant2->GetUint("token");
  absl::StatusOr<demo::Message> read2 = step(Call(*p.client2, "read"), "client 2's read");
  if (!read2.ok()) return read2.status();
  absl::StatusOr<demo::Message> write2 =
      step(Call(*p.client2, "write"), "client 2's write");
  if (!write2.ok()) return write2.status();
  if (absl::Status thawed = p.client1->Thaw(); !thawed.ok()) return thawed;
  return p;
}

absl::Status E2eTest::WaitUntilLeaseGone(const std::string& resource, uint64_t token,
                                         absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;
  for (;;) {
    absl::StatusOr<client::LockState> state = lock_->Describe(resource);
    if (!state.ok()) return state.status();
    if (!state->held || state->token != token) return absl::OkStatus();
    if (absl::Now() > give_up) {
      return absl::DeadlineExceededError(
          absl::StrCat("lease ", token, " on ", resource, " still held"));
    }
    absl::SleepFor(absl::Milliseconds(20));  // poll interval, under a deadline
  }
}

absl::StatusOr<testing::ProgramResult> E2eTest::Cli(std::vector<std::string> args,
                                                 bool connect) {
  args.insert(args.begin(), FENCEGATE_CLI_BIN);
  if (!connect) return testing::RunProgram(args, absl::Seconds(60));
  args.push_back("--timeout=10s");
  const std::string& command = args[1];
  const bool lock_command = command == "acquire" || command == "renew" ||
                            command == "release" || command == "describe" ||
                            command == "leader" || command == "observe" ||
                            command == "proclaim" || command == "resign";
  const bool has_address = [&] {
    for (const std::string& a : args) {
      if (a.rfind("--lockservice", 0) == 0 || a.rfind("--gateway", 0) == 0) return true;
    }
    return false;
  }();
  if (!has_address) {
    args.push_back(lock_command ? "--lockservice=" + lockservice_->address()
                                : "--gateway=" + gateway_->address());
  }
  return testing::RunProgram(args, absl::Seconds(60));
}

uint64_t JsonUint(const std::string& json, const std::string& key) {
  const std::string needle = absl::StrCat("\"", key, "\":");
  const size_t at = json.find(needle);
  if (at == std::string::npos) return 0;
  const size_t begin = at + needle.size();
  size_t end = begin;
  while (end < json.size() && isdigit(static_cast<unsigned char>(json[end]))) ++end;
  uint64_t value = 0;
  return absl::SimpleAtoi(json.substr(begin, end - begin), &value) ? value : 0;
}

}  // namespace fencegate::e2e
