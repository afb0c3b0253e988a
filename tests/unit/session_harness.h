// SessionHarness: a gateway Session (gateway/session.h) on a fake transport
// that the test drives as a client would: it sends messages, half-closes or
// cancels, takes the answers (or, with TakeWrites(false), leaves them
// unread, as a client that never reads), and waits for answers by
// request_id. No gRPC, no threads of its own, no sleeps: written messages
// are taken by the waiting test thread (Pump), and every wait has a
// generous deadline as a safety net.
//
// It also checks the session keeps the transport's rules (as gRPC's reactor
// needs them): one read at a time, and none asked for by another thread
// while a message is being handled; one write at a time; Finish once, with
// no write in progress, and nothing after it. Each breach is counted in
// ProtocolErrors() (process-wide, so a fixture can check it once per test)
// and printed.
//
// Also builds and decodes the stream's messages for tests that speak to a
// real server (Call(), Encode(), Decode()).
//
// Thread safety: the session may call the transport on the store's writer
// thread; everything else runs on the test thread.
#ifndef FENCEGATE_TESTS_UNIT_SESSION_HARNESS_H_
#define FENCEGATE_TESTS_UNIT_SESSION_HARNESS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "fencegate/v1/gateway.pb.h"
#include "gateway/fenced_store.h"
#include "gateway/session.h"

namespace fencegate::gateway {

// ------------------------------------------------ messages, both ways

// One call of a GatewaySessionRequest.
v1::GatewayCall Call(uint64_t request_id, const v1::WriteRequest& write);
v1::GatewayCall Call(uint64_t request_id, const v1::MultiWriteRequest& write);
v1::GatewayCall Call(uint64_t request_id, const v1::ReadRequest& read);
v1::GatewayCall Call(uint64_t request_id, const v1::FenceRequest& fence);
v1::WriteRequest PutRequest(const std::string& resource, uint64_t token,
                            const std::string& key, const std::string& value);
v1::ReadRequest ReadRequest(const std::string& resource, const std::string& key,
                            uint64_t token = 0);
v1::FenceRequest FenceRequest(const std::string& resource, uint64_t token);

// The bytes of a GatewaySessionRequest carrying `calls` in order.
std::string Encode(const std::vector<v1::GatewayCall>& calls);
// The results of a GatewaySessionResponse; INTERNAL if it does not parse.
absl::StatusOr<std::vector<v1::GatewayResult>> Decode(const std::string& bytes);
// A result's status: OK for a response, else its code, message and detail.
absl::Status StatusOf(const v1::GatewayResult& result);

// ------------------------------------------------------------ harness

class SessionHarness final : public SessionTransport {
 public:
  explicit SessionHarness(FencedStore* store, SessionLimits limits = SessionLimits());
  // Cancels the stream if it is still open, waits for the session to
  // finish, and detaches it.
  ~SessionHarness() override;

  Session& session() { return *session_; }

  // ------------------------------------------------------- the client
  // Delivers one message. REQUIRES: the session asked for it (ReadPending).
  void Send(const std::string& bytes);
  void Send(const std::vector<v1::GatewayCall>& calls) { Send(Encode(calls)); }
  void HalfClose();
  void Cancel();
  // false: written messages stay unread (a client that does not read); the
  // session sees no OnWriteDone. true (the default) takes them again.
  void TakeWrites(bool take);

  // Whether the session has asked for a message and not got one yet.
  bool ReadPending();
  int reads_started();
  int writes_started();
  // Waits until the session has started `n` writes; false after the safety
  // net's deadline.
  bool WaitForWritesStarted(int n);

  // The answer to `request_id` (the first one, if several came); pumps
  // written messages meanwhile. DEADLINE_EXCEEDED if none comes in 60 s.
  absl::StatusOr<v1::GatewayResult> WaitForAnswer(uint64_t request_id);
  // Every answer to `request_id` taken so far, in arrival order.
  std::vector<v1::GatewayResult> AnswersTo(uint64_t request_id);
  // Answers taken so far, in arrival order.
  std::vector<v1::GatewayResult> answers();
  // The status the session finished with; pumps meanwhile.
  absl::StatusOr<absl::Status> WaitForFinish();
  std::optional<absl::Status> finished();
  // Messages taken so far (each one write of the session).
  int messages_taken();

  // Breaches of the transport's rules seen by every harness of the process.
  static int ProtocolErrors();

  // SessionTransport (called by the session, under its lock).
  void StartRead() override;
  void StartWrite(std::string bytes) override;
  void Finish(const absl::Status& status) override;

 private:
  // Takes pending writes until `done` holds or the deadline passes.
  bool PumpUntil(absl::FunctionRef<bool()> done) ABSL_LOCKS_EXCLUDED(mu_);

  void Breach(const char* what) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Session* session_ = nullptr;
  absl::Mutex mu_;
  // The thread inside Send(), if any.
  std::optional<std::thread::id> sending_ ABSL_GUARDED_BY(mu_);
  bool read_pending_ ABSL_GUARDED_BY(mu_) = false;
  int reads_started_ ABSL_GUARDED_BY(mu_) = 0;
  int writes_started_ ABSL_GUARDED_BY(mu_) = 0;
  bool take_writes_ ABSL_GUARDED_BY(mu_) = true;
  std::optional<std::string> pending_write_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::GatewayResult> answers_ ABSL_GUARDED_BY(mu_);
  int messages_taken_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<absl::Status> finished_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_TESTS_UNIT_SESSION_HARNESS_H_
