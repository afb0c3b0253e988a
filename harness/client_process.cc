#include "harness/client_process.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "harness/interrupt.h"

namespace fencegate::demo {
namespace {

// Waits are sliced so an interrupt is noticed promptly.
constexpr absl::Duration kSlice = absl::Milliseconds(50);

}  // namespace

absl::StatusOr<std::unique_ptr<ClientProcess>> ClientProcess::Start(
    const ClientProcessOptions& options, EventCallback on_event, absl::Duration timeout) {
  std::unique_ptr<ClientProcess> client(new ClientProcess(options, std::move(on_event)));
  testing::ChildProcess::Options child;
  child.argv = {options.binary, "--name=" + options.name,
                "--lockservice=" + options.lockservice, "--resource=" + options.resource};
  if (!options.gateway.empty()) child.argv.push_back("--gateway=" + options.gateway);
  if (!options.plain_db.empty()) child.argv.push_back("--plain_db=" + options.plain_db);
  if (!options.postgres.empty()) child.argv.push_back("--postgres=" + options.postgres);
  if (!options.tls.ca.empty()) child.argv.push_back("--tls_ca=" + options.tls.ca);
  if (!options.tls.cert.empty()) child.argv.push_back("--tls_cert=" + options.tls.cert);
  if (!options.tls.key.empty()) child.argv.push_back("--tls_key=" + options.tls.key);
  child.stderr_path = options.stderr_path;
  child.pipe_stdin = true;
  child.pipe_stdout = true;
  absl::StatusOr<std::unique_ptr<testing::ChildProcess>> process =
      testing::ChildProcess::Start(child);
  if (!process.ok()) return process.status();
  client->child_ = *std::move(process);
  client->reader_ = std::thread([c = client.get()] { c->ReadLoop(); });

  // Its first line says it is ready.
  absl::StatusOr<Message> ready = client->NextReply(absl::Now() + timeout, "start");
  if (!ready.ok()) return ready.status();
  return client;
}

ClientProcess::~ClientProcess() {
  if (child_ != nullptr) {
    child_->Signal(SIGCONT);  // a frozen client cannot quit
    child_->CloseStdin();     // EOF: it releases a live lease and exits
    if (!child_->Wait(absl::Seconds(5)).ok()) child_->Terminate(absl::Seconds(1));
  }
  if (reader_.joinable()) reader_.join();
}

void ClientProcess::ReadLoop() {
  std::string pending;
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(child_->stdout_fd(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buffer, n);
    size_t newline;
    while ((newline = pending.find('\n')) != std::string::npos) {
      Message message = ParseMessage(absl::string_view(pending).substr(0, newline));
      pending.erase(0, newline + 1);
      if (message.word == "event") {
        if (on_event_) on_event_(message);
        absl::MutexLock lock(&mu_);
        events_.push_back(std::move(message));
      } else {
        absl::MutexLock lock(&mu_);
        replies_.push_back(std::move(message));
      }
    }
  }
  absl::MutexLock lock(&mu_);
  stdout_closed_ = true;
}

absl::Status ClientProcess::ExitedError() {
  absl::StatusOr<int> status = child_->Wait(absl::Seconds(2));
  return absl::InternalError(
      absl::StrCat(options_.name, " (pid ", child_->pid(), ") ended unexpectedly",
                   status.ok() ? absl::StrCat(": ", testing::DescribeWaitStatus(*status)) : "",
                   "; its stderr ends with:\n", StderrTail()));
}

absl::StatusOr<Message> ClientProcess::Call(const Message& command,
                                            absl::Duration timeout) {
  const std::string line = FormatMessage(command) + "\n";
  if (write(child_->stdin_fd(), line.data(), line.size()) !=
      static_cast<ssize_t>(line.size())) {
    return ExitedError();
  }
  return NextReply(absl::Now() + timeout, command.word);
}

absl::StatusOr<Message> ClientProcess::NextReply(absl::Time give_up,
                                                 absl::string_view what) {
  {
    absl::MutexLock lock(&mu_);
    auto answered = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !replies_.empty() || stdout_closed_;
    };
    while (!answered()) {
      if (Interrupted()) return CheckInterrupted();
      if (absl::Now() >= give_up) {
        return absl::DeadlineExceededError(
            absl::StrCat(options_.name, " did not answer '", what, "' in time"));
      }
      mu_.AwaitWithTimeout(absl::Condition(&answered), kSlice);
    }
    if (!replies_.empty()) {
      Message reply = std::move(replies_.front());
      replies_.pop_front();
      return reply;
    }
  }
  return ExitedError();  // its stdout closed: it has exited
}

absl::StatusOr<Message> ClientProcess::Call(absl::string_view word,
                                            absl::Duration timeout) {
  Message command;
  command.word = std::string(word);
  return Call(command, timeout);
}

absl::Status ClientProcess::Freeze() {
  if (!child_->Running()) return ExitedError();
  return child_->StopAndWait();
}

absl::Status ClientProcess::Thaw() {
  if (!child_->Signal(SIGCONT)) return ExitedError();
  return absl::OkStatus();
}

absl::StatusOr<Message> ClientProcess::WaitForEvent(absl::string_view what,
                                                    absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;
  absl::MutexLock lock(&mu_);
  for (;;) {
    for (const Message& event : events_) {
      if (event.Get("what") == what) return event;
    }
    if (Interrupted()) return CheckInterrupted();
    if (absl::Now() >= give_up) {
      return absl::DeadlineExceededError(absl::StrCat(options_.name, " reported no ",
                                                      what, " within ",
                                                      absl::FormatDuration(timeout)));
    }
    const size_t seen = events_.size();
    auto more = [&]()
                    ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return events_.size() > seen; };
    mu_.AwaitWithTimeout(absl::Condition(&more), kSlice);
  }
}

std::vector<Message> ClientProcess::events() {
  absl::MutexLock lock(&mu_);
  return events_;
}

std::string ClientProcess::StderrTail(size_t bytes) const {
  std::ifstream in(options_.stderr_path);
  std::stringstream text;
  text << in.rdbuf();
  std::string all = text.str();
  return all.size() > bytes ? all.substr(all.size() - bytes) : all;
}

}  // namespace fencegate::demo
