// ClientProcess: the driver's side of one fencegate-demo-client process
// (client_protocol.h): starts it, sends it commands, waits for replies under
// deadlines, freezes and thaws it, and hands its events to a callback as
// they arrive. Used by the demo and by the end-to-end tests.
//
// Thread safety: Call() from one thread at a time; Freeze(), Thaw(),
// events() and pid() from any thread. The event callback runs on a reader
// thread. The destructor asks the client to quit (it releases a live
// lease), waits a little, and kills it if it does not go.
#ifndef FENCEGATE_HARNESS_CLIENT_PROCESS_H_
#define FENCEGATE_HARNESS_CLIENT_PROCESS_H_

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "harness/client_protocol.h"
#include "fencegate/client_tls_files.h"
#include "harness/child_process.h"

namespace fencegate::demo {

struct ClientProcessOptions {
  std::string binary;       // fencegate-demo-client
  std::string name;         // its holder name, e.g. "client 1"
  std::string lockservice;  // host:port
  std::string gateway;      // host:port: the counter behind the fence, or
  std::string plain_db;     // a SQLite file: the counter with no fence
  std::string postgres;     // a libpq URI: the counter in a table fenced in SQL
  std::string resource;
  std::string stderr_path;  // its diagnostics
  ClientTlsFiles tls;       // to both servers; empty: plaintext
};

class ClientProcess {
 public:
  using EventCallback = std::function<void(const Message& event)>;

  // Starts the client and waits (up to `timeout`) until it is ready.
  static absl::StatusOr<std::unique_ptr<ClientProcess>> Start(
      const ClientProcessOptions& options, EventCallback on_event = nullptr,
      absl::Duration timeout = absl::Seconds(30));
  ~ClientProcess();

  // Sends `command` and returns its reply. Fails if the client exits, the
  // reply does not come within `timeout` (e.g. the client is frozen), or
  // the demo is interrupted.
  absl::StatusOr<Message> Call(const Message& command,
                               absl::Duration timeout = absl::Seconds(30));
  absl::StatusOr<Message> Call(absl::string_view word,
                               absl::Duration timeout = absl::Seconds(30));

  // SIGSTOP: the whole process freezes, its lease-renewal thread included,
  // as in a stop-the-world GC pause; returns once it is stopped. Thaw()
  // sends SIGCONT.
  absl::Status Freeze();
  absl::Status Thaw();

  // Waits up to `timeout` for an event with what=`what`; returns it.
  absl::StatusOr<Message> WaitForEvent(absl::string_view what, absl::Duration timeout);
  std::vector<Message> events();

  pid_t pid() const { return child_->pid(); }
  const std::string& name() const { return options_.name; }
  // The end of its stderr, for failure messages.
  std::string StderrTail(size_t bytes = 2000) const;

 private:
  ClientProcess(ClientProcessOptions options, EventCallback on_event)
      : options_(std::move(options)), on_event_(std::move(on_event)) {}
  void ReadLoop();
  // The next reply, waiting until `give_up`; `what` names it in errors.
  absl::StatusOr<Message> NextReply(absl::Time give_up, absl::string_view what);
  absl::Status ExitedError();

  const ClientProcessOptions options_;
  const EventCallback on_event_;
  std::unique_ptr<testing::ChildProcess> child_;
  std::thread reader_;
  absl::Mutex mu_;
  std::deque<Message> replies_ ABSL_GUARDED_BY(mu_);
  std::vector<Message> events_ ABSL_GUARDED_BY(mu_);
  bool stdout_closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace fencegate::demo

#endif  // FENCEGATE_HARNESS_CLIENT_PROCESS_H_
