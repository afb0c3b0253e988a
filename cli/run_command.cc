// `fencegate run`: holds a lock while a command runs (cli/README.md,
// "Holding a lock while a command runs").
//
// It blocks the signals it handles before the client library starts any
// thread (blocked_signals.h), acquires a Lease (on a thread of its own,
// while this one watches the signals, so that a Ctrl-C ends a --wait), and
// starts the command in its own process group (child_process.h) with the
// lease's token in its environment. Then one poll loop on this thread
// waits for the command, the signals (SIGCHLD, and SIGTERM, SIGINT, SIGHUP
// to forward to the group) and the lease's loss (its on_lost callback
// writes to an eventfd); no sleep, no work in a signal handler.
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "cli/blocked_signals.h"
#include "cli/child_process.h"
#include "cli/cli_flags.h"
#include "cli/command.h"
#include "cli/exit_codes.h"
#include "fencegate/client/errors.h"
#include "fencegate/client/fencing_token.h"
#include "fencegate/client/lock_client.h"
#include "fencegate/clock.h"

namespace fencegate::cli {
namespace {

using client::Lease;
using client::LockClient;

// Signals forwarded to the command's process group.
constexpr int kForwarded[] = {SIGTERM, SIGINT, SIGHUP};

// Wakes this thread's poll from any thread: an eventfd.
class Wakeup {
 public:
  Wakeup() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  ~Wakeup() {
    if (fd_ >= 0) close(fd_);
  }
  Wakeup(const Wakeup&) = delete;
  Wakeup& operator=(const Wakeup&) = delete;

  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  void Notify() {
    const uint64_t one = 1;
    (void)!write(fd_, &one, sizeof(one));
  }
  void Clear() {
    uint64_t count;
    (void)!read(fd_, &count, sizeof(count));
  }

 private:
  const int fd_;
};

// Polls `fds` until one is ready or `timeout` passes (InfiniteDuration():
// no limit); EINTR is a return like any other.
void PollFor(std::vector<pollfd>& fds, absl::Duration timeout) {
  for (pollfd& fd : fds) fd.revents = 0;
  int ms = -1;
  if (timeout != absl::InfiniteDuration()) {
    ms = static_cast<int>(
        absl::ToInt64Milliseconds(absl::Ceil(timeout, absl::Milliseconds(1))));
    if (ms < 0) ms = 0;
  }
  poll(fds.data(), fds.size(), ms);
}

const char* SignalName(int signal) {
  switch (signal) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "a signal";
  }
}

// `acquire` (AcquireLease, or a Campaign) on a thread of its own while
// this one watches `signals`: a forwarded signal during the wait ends this
// process by that signal (nothing was started; a lease granted meanwhile
// runs out by its TTL).
template <typename Held>
absl::StatusOr<std::unique_ptr<Held>> AcquireWatchingSignals(
    const std::string& resource,
    absl::AnyInvocable<absl::StatusOr<std::unique_ptr<Held>>()> acquire,
    BlockedSignals& signals) {
  Wakeup done;
  if (!done.ok()) return absl::InternalError(absl::StrCat("eventfd: ", strerror(errno)));
  absl::StatusOr<std::unique_ptr<Held>> lease;
  std::thread acquirer([&] {
    lease = acquire();
    done.Notify();
  });
  std::vector<pollfd> fds = {{signals.fd(), POLLIN, 0}, {done.fd(), POLLIN, 0}};
  for (;;) {
    PollFor(fds, absl::InfiniteDuration());
    if (fds[1].revents != 0) break;
    for (int signal : signals.Take()) {
      if (signal == SIGCHLD) continue;
      std::cerr << "fencegate run: " << SignalName(signal) << " while acquiring '"
                << resource << "'; the command was not started\n";
      DieOf(signal);
    }
  }
  acquirer.join();
  return lease;
}

// FENCEGATE_* for the command: the lease, and where and how this process
// connected (kFlagsFromEnvironment), so that a `fencegate` inside it
// connects the same way.
std::vector<std::string> CommandEnvironment(const std::string& resource, Lease& lease,
                                            bool elected) {
  std::vector<std::string> env = {
      absl::StrCat("FENCEGATE_RESOURCE=", resource),
      absl::StrCat(
          "FENCEGATE_TOKEN=",
          client::FormatFencingToken(lease.token(), lease.signature(), lease.mode())),
  };
  // A leader's term is its token; the election is the resource.
  if (elected) env.push_back(absl::StrCat("FENCEGATE_ELECTION=", resource));
  for (const FlagFromEnvironment& entry : kFlagsFromEnvironment) {
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(entry.flag);
    if (flag == nullptr) continue;
    const std::string value = flag->CurrentValue();
    if (!value.empty()) env.push_back(absl::StrCat(entry.variable, "=", value));
  }
  return env;
}

// How the command ended.
struct Outcome {
  int exit_code = 0;
  // OK unless the lease was lost while the command ran: then why.
  absl::Status lost;
  bool killed = false;  // SIGKILL was sent after --kill_after
};

// Waits for the command to end, forwarding signals to its group, and
// stops it when the lease is lost: SIGTERM, then SIGKILL after
// `kill_after`. Leaves the command unreaped.
Outcome Supervise(ChildProcess& child, BlockedSignals& signals, Wakeup& lost,
                  Lease& lease, absl::Duration kill_after) {
  Clock& clock = SteadyClock();
  Outcome outcome;
  std::optional<absl::Time> kill_at;
  std::vector<pollfd> fds = {{signals.fd(), POLLIN, 0}, {lost.fd(), POLLIN, 0}};
  for (;;) {
    if (std::optional<int> code = child.ExitCode()) {
      outcome.exit_code = *code;
      return outcome;
    }
    PollFor(fds, kill_at.has_value() && !outcome.killed ? *kill_at - clock.Now()
                                                        : absl::InfiniteDuration());
    for (int signal : signals.Take()) {
      if (signal != SIGCHLD) child.SignalGroup(signal);
    }
    if (fds[1].revents != 0) lost.Clear();
    if (outcome.lost.ok()) {
      // Also notices a lapse that on_lost has not reported yet.
      if (absl::Status valid = lease.Check(); !valid.ok()) {
        outcome.lost = valid;
        child.SignalGroup(SIGTERM);
        child.SignalGroup(SIGCONT);  // a stopped command handles it too
        kill_at = clock.Now() + kill_after;
      }
    }
    if (kill_at.has_value() && !outcome.killed && clock.Now() >= *kill_at) {
      child.SignalGroup(SIGKILL);
      outcome.killed = true;
    }
  }
}

absl::Status RunRun(CommandContext& ctx) {
  const std::string elect = absl::GetFlag(FLAGS_elect);
  if (!ctx.Given("resource") && elect.empty()) {
    return UsageError(
        "missing --resource=NAME (or --elect=NAME --value=V to lead an election while "
        "the command runs)");
  }
  if (ctx.Given("resource") && !elect.empty()) {
    return UsageError(
        "pass --resource=NAME to hold a lock or --elect=NAME to lead an election, not "
        "both");
  }
  if (ctx.Given("value") && elect.empty()) {
    return UsageError("--value is what --elect's leader says; pass it with --elect");
  }
  const std::string resource = elect.empty() ? absl::GetFlag(FLAGS_resource) : elect;
  // By default each run is a holder of its own: two runs on one host must
  // not share one lock (or one term) as one holder's re-entries.
  std::string holder = absl::GetFlag(FLAGS_holder);
  if (holder.empty()) holder = absl::StrCat(DefaultHolder(), "/run-", getpid());
  client::AcquireOptions options;
  options.ttl = absl::GetFlag(FLAGS_ttl);
  options.wait = absl::GetFlag(FLAGS_wait);
  const absl::Duration kill_after = absl::GetFlag(FLAGS_kill_after);
  if (options.ttl <= absl::ZeroDuration()) return UsageError("--ttl must be above 0");
  if (options.wait < absl::ZeroDuration()) {
    return UsageError("--wait must not be negative");
  }
  if (kill_after < absl::ZeroDuration()) {
    return UsageError("--kill_after must not be negative");
  }

  // What SIGPIPE was when we started, for the command; then block the
  // signals before the client starts its threads.
  struct sigaction sigpipe = {};
  sigaction(SIGPIPE, nullptr, &sigpipe);
  absl::StatusOr<std::unique_ptr<BlockedSignals>> signals =
      BlockedSignals::Block({SIGCHLD, SIGTERM, SIGINT, SIGHUP});
  if (!signals.ok()) return signals.status();
  Wakeup lost;  // outlives the lease, whose on_lost writes to it
  if (!lost.ok()) return absl::InternalError(absl::StrCat("eventfd: ", strerror(errno)));

  const std::string address = absl::GetFlag(FLAGS_lockservice);
  absl::StatusOr<std::unique_ptr<LockClient>> client =
      LockClient::Connect(address, ctx.client_options);
  if (!client.ok()) return UsageError(client.status().message());
  client::LeaseOptions lease_options;
  lease_options.on_lost = [&lost](const absl::Status&) { lost.Notify(); };
  // The lease held while the command runs: a lock's, or a term's.
  std::unique_ptr<Lease> held;
  std::unique_ptr<client::Leadership> leading;
  absl::Status acquired;
  if (elect.empty()) {
    absl::StatusOr<std::unique_ptr<Lease>> lease = AcquireWatchingSignals<Lease>(
        resource,
        [&]() {
          return (*client)->AcquireLease(resource, holder, options,
                                         std::move(lease_options));
        },
        **signals);
    acquired = lease.status();
    if (lease.ok()) held = *std::move(lease);
  } else {
    client::CampaignOptions campaign;
    campaign.ttl = options.ttl;
    campaign.wait = options.wait;
    absl::StatusOr<std::unique_ptr<client::Leadership>> leadership =
        AcquireWatchingSignals<client::Leadership>(
            resource,
            [&]() {
              return (*client)->Campaign(elect, holder, absl::GetFlag(FLAGS_value),
                                         campaign, std::move(lease_options));
            },
            **signals);
    acquired = leadership.status();
    if (leadership.ok()) leading = *std::move(leadership);
  }
  if (!acquired.ok()) {
    if (client::IsNotAcquired(acquired)) {
      return absl::Status(acquired.code(),
                          absl::StrCat(acquired.message(),
                                       "; the command was not started (pass "
                                       "--wait=DURATION to queue for the lock)"));
    }
    return NameServer(acquired, "the lock service", address, "--lockservice",
                      ctx.client_options.tls.enabled());
  }
  Lease* const lease = leading != nullptr ? &leading->lease() : held.get();

  absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(
      ctx.command_args, CommandEnvironment(resource, *lease, !elect.empty()), sigpipe);
  if (!child.ok()) {
    absl::Status released = lease->Release();
    std::cerr << "fencegate run: " << child.status().message() << "; "
              << (released.ok()
                      ? "released the lock"
                      : absl::StrCat("releasing the lock failed: ", released.message()))
              << "\n";
    ctx.exit_code = child.status().code() == absl::StatusCode::kNotFound
                        ? kExitCannotRun
                        : kExitNotExecutable;
    return absl::OkStatus();
  }

  const Outcome outcome = Supervise(**child, **signals, lost, *lease, kill_after);
  if (!outcome.lost.ok()) {
    // What is left of the group runs under a lost lease too.
    (*child)->SignalGroup(SIGKILL);
    (*child)->Reap();
    // Held there still, if it only lapsed here; refused if the service
    // ended it, which is what lost it.
    lease->Release().IgnoreError();
    std::cerr << "fencegate run: lease lost: " << outcome.lost.message()
              << "; stopped the command (SIGTERM to its process group"
              << (outcome.killed
                      ? absl::StrCat(", SIGKILL ", absl::FormatDuration(kill_after),
                                     " later")
                      : "")
              << ")\n";
    ctx.exit_code = kExitLeaseLost;
    return absl::OkStatus();
  }
  (*child)->Reap();
  if (absl::Status released = lease->Release(); !released.ok()) {
    std::cerr << "fencegate run: the command ended (exit " << outcome.exit_code
              << "), but releasing '" << resource << "' failed: " << released.message()
              << "; it is free once its lease runs out (--ttl)\n";
  }
  ctx.exit_code = outcome.exit_code;
  return absl::OkStatus();
}

}  // namespace

const std::vector<Command>& RunCommands() {
  static const auto* const kCommands = new std::vector<Command>{
      {"run",
       "hold a lock while a command runs",
       "fencegate run --resource=NAME | --elect=NAME [--value=V] [--ttl=10s] "
       "[--wait=0s] [--kill_after=10s] [--holder=WHO] -- COMMAND [ARGS...]",
       "Acquires the exclusive lock on --resource (queueing up to --wait), runs\n"
       "COMMAND in a process group of its own while the lease renews itself,\n"
       "then releases the lock and exits with the command's exit code (128+n\n"
       "if a signal n killed it). Not acquired: exit 3, nothing started.\n"
       "\n"
       "--elect=NAME --value=V campaigns for the election NAME instead (with\n"
       "--wait, in line behind the other candidates) and runs the command while\n"
       "it leads: one of N replicas started this way does the job. The term is\n"
       "the lease's token, in FENCEGATE_TOKEN, so a deposed leader's late\n"
       "writes are refused; FENCEGATE_ELECTION names the election, and\n"
       "fencegate leader/observe show who leads (give each replica a --holder\n"
       "that names it). A lost term stops the command as a lost lease does.\n"
       "\n"
       "--holder: the lease's holder, by default <user>@<host>/run-<pid>, so\n"
       "two runs are never one holder re-entering its lock. A wait in line\n"
       "longer than --ttl is fine: the lease counts from its grant.\n"
       "\n"
       "The command's environment has FENCEGATE_RESOURCE, FENCEGATE_TOKEN (the\n"
       "token as acquire prints it, for --token), FENCEGATE_LOCKSERVICE,\n"
       "FENCEGATE_GATEWAY and the FENCEGATE_TLS_* that fencegate reads in place\n"
       "of the flags, so a `fencegate write --token=$FENCEGATE_TOKEN ...`\n"
       "inside it connects as run did.\n"
       "\n"
       "If the lease is lost (the lock service ended it, or renewals went\n"
       "unanswered for a TTL), the command's process group gets SIGTERM, then\n"
       "SIGKILL after --kill_after, and run exits 7. SIGTERM, SIGINT and SIGHUP\n"
       "sent to run are passed to the group; run then waits for the command\n"
       "and releases the lock. If run dies, the command (the process run\n"
       "started, not its children) gets SIGKILL. A command that cannot be\n"
       "started: exit 127 if it was not found, 126 if it could not be run (not\n"
       "executable), as a shell; the lock is released.\n"
       "\n"
       "No --json: stdout is the command's.",
       {"lockservice", "gateway", "resource", "elect", "value", "holder", "ttl", "wait",
        "kill_after"},
       {},
       &RunRun,
       /*takes_command=*/true},
  };
  return *kCommands;
}

}  // namespace fencegate::cli
