// fencegate-demo-client: one lock holder of the demo, as a real process so
// that it can be frozen with SIGSTOP (a GC pause) or cut off from the lock
// service (a partition) like a real one. It holds a self-renewing Lease and
// keeps a shared counter with read-modify-write increments; a driver (the
// demo, or an end-to-end test) tells it what to do, one command per line on
// stdin (client_protocol.h), and reads its answers on stdout. Diagnostics go
// to stderr. It exits on "quit" or at EOF on stdin.
#include <iostream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/build_info/build_info.h"
#include "common/grpc/channel_credentials.h"
#include "harness/client_protocol.h"
#include "harness/counter_store.h"
#include "fencegate/client/errors.h"
#include "fencegate/client/lock_client.h"
#include "fencegate/clock.h"
#include "fencegate/token_signature.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

ABSL_FLAG(std::string, name, "client", "who this client is (its lock holder name)");
ABSL_FLAG(std::string, lockservice, "", "lock service address, host:port");
ABSL_FLAG(std::string, gateway, "", "gateway address: keep the counter behind the fence");
ABSL_FLAG(std::string, plain_db, "",
          "SQLite file: keep the counter there directly, with no fence (act 3)");
ABSL_FLAG(std::string, postgres, "",
          "PostgreSQL URI: keep the counter in a table there, fenced in SQL (act 4)");
ABSL_FLAG(std::string, resource, "demo", "the lock, and the gateway resource");
ABSL_FLAG(std::string, key, "counter", "the counter's key");
ABSL_FLAG(std::string, tls_ca, "", "CA of the servers' certificates: TLS to both");
ABSL_FLAG(std::string, tls_cert, "", "client certificate for mutual TLS");
ABSL_FLAG(std::string, tls_key, "", "private key of --tls_cert");

namespace fencegate::demo {
namespace {

using client::Fencing;
using client::IsLeaseLost;
using client::IsStaleToken;

// Replies and events share stdout; one line at a time.
absl::Mutex stdout_mu;

void Print(const Message& message) {
  absl::MutexLock lock(&stdout_mu);
  std::cout << FormatMessage(message) << std::endl;  // flush: the driver waits on it
}

Message Reply(absl::string_view status) {
  Message reply;
  reply.word = "reply";
  reply.Set("status", status);
  return reply;
}

Message ErrorReply(const absl::Status& status) {
  return Reply("error").Set("msg", status.ToString());
}

class DemoClient {
 public:
  DemoClient(std::shared_ptr<grpc::Channel> lock_channel,
             std::unique_ptr<CounterStore> store)
      : lock_channel_(lock_channel),
        lock_(std::make_unique<client::LockClient>(lock_channel)),
        store_(std::move(store)),
        name_(absl::GetFlag(FLAGS_name)),
        resource_(absl::GetFlag(FLAGS_resource)) {}

  // Answers one command; false after "quit".
  bool Handle(const Message& command) {
    const std::string& c = command.word;
    if (c == "acquire") {
      Print(Acquire(absl::Milliseconds(command.GetInt("ttl_ms"))));
    } else if (c == "check") {
      Print(Check());
    } else if (c == "read") {
      Print(ReadCounter());
    } else if (c == "write") {
      Print(WriteIncrement());
    } else if (c == "renew") {
      Print(Renew());
    } else if (c == "release") {
      Print(Release());
    } else if (c == "reconnect") {
      const bool up = lock_channel_->WaitForConnected(absl::ToChronoTime(
          absl::Now() + absl::Milliseconds(command.GetInt("timeout_ms"))));
      Print(up ? Reply("ok")
               : Reply("error").Set("msg", "lock service still unreachable"));
    } else if (c == "quit") {
      lease_.reset();  // releases a live lease
      Print(Reply("ok"));
      return false;
    } else {
      Print(Reply("error").Set("msg", absl::StrCat("unknown command '", c, "'")));
    }
    return true;
  }

 private:
  // The lease's signature may change on renewal (a key rotation).
  Fencing fencing() const {
    return Fencing{resource_, token_,
                   lease_ != nullptr ? lease_->signature() : signature_};
  }

  Message Acquire(absl::Duration ttl) {
    lease_.reset();  // a previous, lost lease
    client::AcquireOptions options;
    options.ttl = ttl;
    client::LeaseOptions lease_options;
    lease_options.on_lost = [](const absl::Status& why) {
      Message event;
      event.word = "event";
      event.Set("what", "lease_lost").Set("msg", why.message());
      Print(event);
    };
    absl::StatusOr<std::unique_ptr<client::Lease>> lease =
        lock_->AcquireLease(resource_, name_, options, std::move(lease_options));
    if (client::IsNotAcquired(lease.status())) {
      return Reply("not_acquired")
          .Set("holder_token", client::CurrentToken(lease.status()))
          .Set("msg", lease.status().message());
    }
    if (!lease.ok()) return ErrorReply(lease.status());
    lease_ = *std::move(lease);
    token_ = lease_->token();
    signature_ = lease_->signature();
    return Reply("ok")
        .Set("token", token_)
        .Set("ttl_ms", absl::ToInt64Milliseconds(lease_->ttl()));
  }

  Message Check() {
    if (lease_ == nullptr) return Reply("error").Set("msg", "no lease: acquire first");
    absl::Status status = lease_->Check();
    if (!status.ok()) return Reply("lost").Set("msg", status.message());
    const absl::Duration left = lease_->valid_until() - SteadyClock().Now();
    return Reply("ok").Set("remaining_ms", absl::ToInt64Milliseconds(left));
  }

  static Message CounterReply(const CounterValue& v) {
    return Reply("ok")
        .Set("value", v.value)
        .Set("text", v.text)
        .Set("version", v.version)
        .Set("max_token", v.max_token);
  }

  static Message Refused(const absl::Status& status) {
    if (IsStaleToken(status)) {
      return Reply("stale")
          .Set("max_token", client::CurrentToken(status))
          .Set("msg", status.message());
    }
    return ErrorReply(status);
  }

  Message ReadCounter() {
    if (token_ == 0) return Reply("error").Set("msg", "no token: acquire first");
    absl::StatusOr<CounterValue> read = store_->Read(fencing());
    if (!read.ok()) return Refused(read.status());
    last_read_ = read->value;
    return CounterReply(*read);
  }

  // The write half of the increment: the value read earlier, plus one, with
  // this client's token, whatever happened in between. Checking the lease
  // here would not help: a pause can strike right after the check.
  Message WriteIncrement() {
    if (token_ == 0) return Reply("error").Set("msg", "no token: acquire first");
    const int64_t next = last_read_ + 1;
    absl::StatusOr<CounterValue> written = store_->Write(
        fencing(), absl::StrCat(next, " (by ", name_, ", token ", token_, ")"));
    if (!written.ok()) return Refused(written.status());
    return CounterReply(*written);
  }

  Message Renew() {
    if (token_ == 0) return Reply("error").Set("msg", "no token: acquire first");
    const absl::Duration ttl = lease_ != nullptr ? lease_->ttl() : absl::Seconds(10);
    absl::StatusOr<client::RenewOutcome> renewed =
        lock_->Renew(resource_, token_, ttl, absl::InfiniteDuration(), signature_);
    if (IsLeaseLost(renewed.status())) {
      return Reply("lease_lost")
          .Set("holder_token", client::CurrentToken(renewed.status()))
          .Set("msg", renewed.status().message());
    }
    if (!renewed.ok()) return ErrorReply(renewed.status());
    if (!renewed->signature.empty()) signature_ = renewed->signature;
    return Reply("ok").Set("ttl_ms", absl::ToInt64Milliseconds(renewed->ttl));
  }

  Message Release() {
    if (token_ == 0) return Reply("error").Set("msg", "no token: acquire first");
    if (lease_ != nullptr && !lease_->lost()) {
      absl::Status released = lease_->Release();
      if (!released.ok()) return ErrorReply(released);
      return Reply("ok").Set("holds_left", 0);
    }
    // The lease object knows it is lost; ask the server anyway, as a late
    // release from a client that had not noticed would.
    absl::StatusOr<uint32_t> left = lock_->Release(resource_, token_, "", signature_);
    if (IsLeaseLost(left.status())) {
      return Reply("lease_lost")
          .Set("holder_token", client::CurrentToken(left.status()))
          .Set("msg", left.status().message());
    }
    if (!left.ok()) return ErrorReply(left.status());
    return Reply("ok").Set("holds_left", static_cast<uint64_t>(*left));
  }

  std::shared_ptr<grpc::Channel> lock_channel_;
  std::unique_ptr<client::LockClient> lock_;
  std::unique_ptr<CounterStore> store_;
  const std::string name_;
  const std::string resource_;
  std::unique_ptr<client::Lease> lease_;
  uint64_t token_ = 0;        // the last lease's, kept after it is lost
  TokenSignature signature_;  // and its signature
  int64_t last_read_ = 0;
};

// Reconnects fast once a partition heals (the default backoff is 1 s+).
std::shared_ptr<grpc::Channel> LockChannel(
    const std::string& address, std::shared_ptr<grpc::ChannelCredentials> credentials) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 250);
  return grpc::CreateCustomChannel(address, credentials, args);
}

int Main() {
  const std::string lockservice = absl::GetFlag(FLAGS_lockservice);
  const std::string gateway = absl::GetFlag(FLAGS_gateway);
  const std::string plain_db = absl::GetFlag(FLAGS_plain_db);
  const std::string postgres = absl::GetFlag(FLAGS_postgres);
  if (lockservice.empty() ||
      (!gateway.empty()) + (!plain_db.empty()) + (!postgres.empty()) != 1) {
    std::cerr << "fencegate-demo-client: give --lockservice and exactly one of "
                 "--gateway, --plain_db or --postgres\n";
    return 2;
  }
  client::ClientOptions options;
  options.tls = ClientTlsFiles{absl::GetFlag(FLAGS_tls_ca), absl::GetFlag(FLAGS_tls_cert),
                               absl::GetFlag(FLAGS_tls_key)};
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      MakeChannelCredentials(options.tls);
  if (!credentials.ok()) {
    std::cerr << "fencegate-demo-client: " << credentials.status() << "\n";
    return 2;
  }
  std::unique_ptr<CounterStore> store;
  if (!gateway.empty()) {
    absl::StatusOr<std::unique_ptr<CounterStore>> fenced =
        NewGatewayCounterStore(gateway, absl::GetFlag(FLAGS_key), options);
    if (!fenced.ok()) {
      std::cerr << "fencegate-demo-client: " << fenced.status() << "\n";
      return 2;
    }
    store = *std::move(fenced);
  } else if (!postgres.empty()) {
    absl::StatusOr<std::unique_ptr<CounterStore>> table =
        NewSqlTableCounterStore(postgres, absl::GetFlag(FLAGS_key));
    if (!table.ok()) {
      std::cerr << "fencegate-demo-client: " << table.status() << "\n";
      return 1;
    }
    store = *std::move(table);
  } else {
    absl::StatusOr<std::unique_ptr<CounterStore>> plain =
        NewPlainCounterStore(plain_db, absl::GetFlag(FLAGS_key));
    if (!plain.ok()) {
      std::cerr << "fencegate-demo-client: " << plain.status() << "\n";
      return 1;
    }
    store = *std::move(plain);
  }
  DemoClient client(LockChannel(lockservice, *credentials), std::move(store));
  Print(Reply("ok").Set("ready", 1));
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    if (!client.Handle(ParseMessage(line))) break;
  }
  return 0;
}

}  // namespace
}  // namespace fencegate::demo

int main(int argc, char** argv) {
  fencegate::InitBuildInfo("fencegate-demo-client");
  absl::SetProgramUsageMessage(
      "fencegate-demo-client: a lock holder driven over stdin; see "
      "harness/client_protocol.h");
  absl::ParseCommandLine(argc, argv);
  return fencegate::demo::Main();
}
