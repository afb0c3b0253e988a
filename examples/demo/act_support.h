// What the demo's acts (acts.h) share: the setup they run against, their
// result, the runner that plays each (PlayAct), the paused holder three of
// them open with, and an Act helper that starts client processes, sends them
// commands, and records each call and its answer on the timeline in the
// same words, so the acts read as the story they tell.
//
// Thread safety: an Act is used by one thread; the timeline is thread-safe.
#ifndef FENCEGATE_EXAMPLES_DEMO_ACT_SUPPORT_H_
#define FENCEGATE_EXAMPLES_DEMO_ACT_SUPPORT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "examples/demo/timeline.h"
#include "fencegate/client/gateway_client.h"
#include "fencegate/client/lock_client.h"
#include "fencegate/client_tls_files.h"
#include "harness/client_process.h"

// For the acts: `lhs` = the value of a StatusOr expression, or return its
// error; return a non-OK Status expression.
#define DEMO_ASSIGN_OR_RETURN(lhs, expr)        \
  auto lhs##_or = (expr);                       \
  if (!lhs##_or.ok()) return lhs##_or.status(); \
  auto lhs = *std::move(lhs##_or)
#define DEMO_RETURN_IF_ERROR(expr) \
  if (absl::Status demo_status = (expr); !demo_status.ok()) return demo_status

namespace fencegate::demo {

struct DemoSetup {
  std::string client_binary;  // fencegate-demo-client
  std::string work_dir;       // temp dir: client logs, the plain SQLite file
  int lockservice_port = 0;
  std::string lockservice;  // host:port
  std::string gateway;      // host:port
  absl::Duration ttl;       // of every lease in the demo
  // Mutual TLS: each client process's files, by lane (client 1, client 2);
  // empty: plaintext.
  ClientTlsFiles client_tls[2];
  Timeline* timeline = nullptr;
  client::LockClient* lock = nullptr;               // the demo's own view of the locks
  client::GatewayClient* gateway_client = nullptr;  // and of the stored data
  // A schema with the SQL fencing API and the demo_counters table; empty:
  // no PostgreSQL (act 4 is skipped).
  std::string postgres;
};

struct ActResult {
  std::string title;
  std::string summary;                // one line for the end of the demo
  std::vector<std::string> failures;  // expectations that did not hold
  bool as_expected() const { return failures.empty(); }
};

// For summaries: "ACCEPTED" or "REFUSED: <why>" for a reply, and
// "counter = 1 after 2 acknowledged increments: one LOST".
std::string Verdict(const Message& reply);
std::string CounterSummary(int64_t counter, int64_t acknowledged);

// Where a client keeps the counter: behind the gateway's fence, in a plain
// file with no fence, or in a table of the user's own fenced in SQL.
enum class Storage { kGateway, kPlainFile, kSqlTable };

class Act {
 public:
  // `resource` names this act's lock (and gateway resource).
  Act(const DemoSetup& setup, std::string resource, Storage storage, ActResult* result);

  const DemoSetup& setup() const { return setup_; }
  const std::string& resource() const { return resource_; }
  Timeline& timeline() { return *setup_.timeline; }

  // Starts the client on `lane` (client 1 or 2). `lockservice` overrides
  // the address it reaches the lock service at (a TcpProxy, say).
  absl::StatusOr<std::unique_ptr<ClientProcess>> StartClient(
      Lane lane, std::string lockservice = "");

  // Each sends one command to `client` (on `lane`), records the call and
  // its answer, and returns the reply. Errors are failures of the demo
  // itself (a client died, a server is unreachable, an interrupt).
  absl::StatusOr<Message> Acquire(ClientProcess& client, Lane lane);
  absl::StatusOr<Message> Check(ClientProcess& client, Lane lane);
  absl::StatusOr<Message> Read(ClientProcess& client, Lane lane);
  // `stale` marks a write from a client whose lease has expired: accepted,
  // it is drawn as damage.
  absl::StatusOr<Message> Write(ClientProcess& client, Lane lane, bool stale = false);
  absl::StatusOr<Message> Renew(ClientProcess& client, Lane lane);
  absl::StatusOr<Message> Release(ClientProcess& client, Lane lane);

  // SIGSTOP / SIGCONT, recorded as the start and end of a frozen period.
  absl::Status Freeze(ClientProcess& client, Lane lane);
  absl::Status Thaw(ClientProcess& client, Lane lane);

  // Polls the lock service (Describe) until the lease with `token` is gone,
  // under a deadline, and records the expiry.
  absl::Status WaitForExpiry(uint64_t token);

  // The counter as stored now, read by the demo itself without a token.
  absl::StatusOr<int64_t> FinalCounter();
  // Increments whose write was acknowledged (OK) in this act so far: with
  // no update lost, the final counter equals this.
  int acknowledged() const { return acknowledged_; }

  // Records a failed expectation (the act did not come out as it should).
  // Returns `holds`.
  bool Expect(bool holds, const std::string& what);

  // The lane of the store the counter is kept in.
  Lane StoreLane() const {
    switch (storage_) {
      case Storage::kGateway:
        return Lane::kGateway;
      case Storage::kSqlTable:
        return Lane::kSqlTable;
      case Storage::kPlainFile:
        break;
    }
    return Lane::kPlainStore;
  }

 private:
  // What every call above does: sends `command` to `client` (on `lane`;
  // `doing` names it in an error), and records the planned reply as a step
  // from `lane` to `target` carrying the lane's token, which `describe`
  // words (action, result, label, outcome) from the reply. The second
  // sends the bare command `word`.
  absl::StatusOr<Message> Call(ClientProcess& client, Lane lane, const Message& command,
                               absl::string_view doing, Lane target,
                               absl::FunctionRef<void(const Message&, Step&)> describe);
  absl::StatusOr<Message> Call(ClientProcess& client, Lane lane, absl::string_view word,
                               Lane target,
                               absl::FunctionRef<void(const Message&, Step&)> describe);

  bool fenced() const { return storage_ != Storage::kPlainFile; }
  std::string PlainDbPath() const;

  const DemoSetup& setup_;
  const std::string resource_;
  const Storage storage_;
  ActResult* const result_;
  uint64_t token_[2] = {0, 0};     // the last token of client 1 and client 2
  int64_t last_read_[2] = {0, 0};  // the counter as each last read it
  int acknowledged_ = 0;
};

// An act's script: its title (on the timeline and in the summary), the
// lock (and gateway resource) it plays on, where its counter is kept, the
// sentence that opens it, and what it does then. `play` returns OK when it
// ends early on a failed expectation (Act::Expect keeps those); an error
// is a failure of the demo itself.
struct ActScript {
  std::string title;
  std::string resource;
  Storage storage = Storage::kGateway;
  std::string intro;
  absl::Status (*play)(Act& act, ActResult& result) = nullptr;
};

// The one runner of every act: opens the act's section on the timeline,
// hands the script's `play` an Act on its lock and storage, and returns the
// result `play` filled in (its summary, the failed expectations).
absl::StatusOr<ActResult> PlayAct(const DemoSetup& setup, const ActScript& script);

// The opening acts 1, 3 and 4 share (the paused holder): both clients
// start; client 1 acquires the free lock, checks its lease and reads the
// counter; it is frozen (SIGSTOP) until its lease expires; client 2
// acquires the lock after the expiry.
struct PausedHolder {
  std::unique_ptr<ClientProcess> c1, c2;
  uint64_t t1 = 0;  // client 1's token
  uint64_t t2 = 0;  // client 2's token
  // Both grants came; false: an expectation failed and the act ends there.
  bool handed_over = false;
};
absl::StatusOr<PausedHolder> FreezeHolderPastExpiry(Act& act);

}  // namespace fencegate::demo

#endif  // FENCEGATE_EXAMPLES_DEMO_ACT_SUPPORT_H_
