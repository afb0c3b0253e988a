// StreamHarness: a server's stream session (common/core/stream_session.h) on a
// fake transport that a test drives as a client would: it sends messages,
// half-closes or cancels, takes the written messages (or, with
// TakeWrites(false), leaves them unread, as a client that never reads), and
// waits for what it expects in them. No gRPC, no threads of its own, no
// sleeps: written messages are taken by the waiting test thread (PumpUntil),
// and every wait has a generous deadline as a safety net.
//
// It also checks the session keeps the transport's rules
// (common/core/stream_transport.h): one read at a time, and none asked for by
// another thread while a message is being handled; one write at a time;
// Finish once, with no write in progress, and nothing after it. Each breach
// is counted in ProtocolErrors() (process-wide, so a fixture can check it
// once per test) and printed.
//
// A derived class starts the session (Attach), decodes what it takes
// (Take) and calls Stop() in its destructor.
//
// Thread safety: the session may call the transport on other threads (a
// store's writer, a lock manager's commit thread); everything else runs on
// the test thread.
#ifndef FENCEGATE_TESTS_TESTING_STREAM_HARNESS_H_
#define FENCEGATE_TESTS_TESTING_STREAM_HARNESS_H_

#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/core/stream_session.h"
#include "common/core/stream_transport.h"

namespace fencegate::testing {

class StreamHarness : public StreamTransport {
 public:
  // REQUIRES: Stop() ran (the derived class's destructor calls it).
  ~StreamHarness() override;

  StreamSession& session() { return *session_; }

  // ------------------------------------------------------- the client
  // Delivers one message. REQUIRES: the session asked for it (ReadPending).
  void Send(const std::string& bytes);
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
  // The status the session finished with; takes messages meanwhile.
  absl::StatusOr<absl::Status> WaitForFinish();
  std::optional<absl::Status> finished();
  // Messages taken so far (each one write of the session).
  int messages_taken();
  // Takes every message the session has written so far (and those it
  // writes as each is taken), unless writes are left unread.
  void TakeAll();

  // Breaches of the transport's rules seen by every harness of the process.
  static int ProtocolErrors();

  // StreamTransport (called by the session, under its lock).
  void StartRead() override;
  void StartWrite(std::string bytes) override;
  void Finish(const absl::Status& status) override;

 protected:
  StreamHarness() = default;
  // The session the derived class started on this transport.
  void Attach(StreamSession* session) { session_ = session; }
  // Cancels the stream if it is still open, waits for the session to
  // finish, and detaches it. Idempotent.
  void Stop();

  // Decodes one taken message; false if it does not parse (the pump then
  // gives up).
  virtual bool Take(const std::string& bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) = 0;
  // Takes written messages until `done` (evaluated with mu_ held) holds;
  // false after the safety net's deadline.
  bool PumpUntil(absl::FunctionRef<bool()> done) ABSL_LOCKS_EXCLUDED(mu_);

  absl::Mutex mu_;

 private:
  void Breach(const char* what) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  StreamSession* session_ = nullptr;
  bool stopped_ = false;
  // The thread inside Send(), if any.
  std::optional<std::thread::id> sending_ ABSL_GUARDED_BY(mu_);
  bool read_pending_ ABSL_GUARDED_BY(mu_) = false;
  int reads_started_ ABSL_GUARDED_BY(mu_) = 0;
  int writes_started_ ABSL_GUARDED_BY(mu_) = 0;
  bool take_writes_ ABSL_GUARDED_BY(mu_) = true;
  std::optional<std::string> pending_write_ ABSL_GUARDED_BY(mu_);
  int messages_taken_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<absl::Status> finished_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_TESTING_STREAM_HARNESS_H_
