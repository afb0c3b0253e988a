#include "harness/server_process.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "harness/free_port.h"
#include "harness/log_file.h"
#include "harness/poll.h"

namespace fencegate::testing {
namespace {

size_t FileSize(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<size_t>(st.st_size) : 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ServerProcess>> ServerProcess::Start(
    ServerProcessOptions options) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = Launch(std::move(options));
  if (!server.ok()) return server.status();
  absl::Status ready = (*server)->AwaitReady();
  if (!ready.ok()) return ready;
  return server;
}

absl::StatusOr<std::unique_ptr<ServerProcess>> ServerProcess::Start(
    const std::string& binary, std::vector<std::string> args, const std::string& work_dir,
    const std::string& name, int port, absl::Duration deadline) {
  ServerProcessOptions options;
  options.process.argv = std::move(args);
  options.process.argv.insert(options.process.argv.begin(), binary);
  options.dir = work_dir;
  options.name = name;
  options.port = port;
  options.start_timeout = deadline;
  if (port != 0) return Start(std::move(options));
  // Port 0: a port below the ephemeral range (free_port.h), so that a test
  // restarting the server on its port cannot find it taken meanwhile by
  // another process's port-0 listener or outgoing connection. One taken
  // between the pick and the bind is picked again.
  absl::Status taken;
  for (int attempt = 0; attempt < kPortPicks; ++attempt) {
    absl::StatusOr<int> picked = PickFreePort(options.host);
    if (!picked.ok()) return picked.status();
    options.port = *picked;
    absl::StatusOr<std::unique_ptr<ServerProcess>> server = Start(options);
    if (server.ok() || !absl::StrContains(server.status().message(), "cannot listen on")) {
      return server;
    }
    taken = server.status();
  }
  return taken;
}

absl::StatusOr<std::unique_ptr<ServerProcess>> ServerProcess::Launch(
    ServerProcessOptions options) {
  std::unique_ptr<ServerProcess> server(new ServerProcess(std::move(options)));
  const ServerProcessOptions& o = server->options_;
  server->log_path_ = absl::StrCat(o.dir, "/", o.name, ".log");
  server->log_offset_ = FileSize(server->log_path_);
  server->port_ = o.port;
  ChildProcess::Options child = o.process;
  child.stderr_path = server->log_path_;
  child.pipe_stdin = false;
  child.pipe_stdout = false;
  if (std::holds_alternative<PortFile>(o.readiness)) {
    unlink(server->PortFilePath().c_str());
    const bool metrics_given = std::any_of(
        child.argv.begin(), child.argv.end(),
        [](const std::string& a) { return absl::StartsWith(a, "--metrics_listen"); });
    unlink(server->MetricsPortFilePath().c_str());
    child.argv.push_back(absl::StrCat("--listen=", o.host, ":", o.port));
    child.argv.push_back(absl::StrCat("--port_file=", server->PortFilePath()));
    child.argv.push_back(
        absl::StrCat("--metrics_port_file=", server->MetricsPortFilePath()));
    if (!metrics_given)
      child.argv.push_back(absl::StrCat("--metrics_listen=", o.host, ":0"));
  }
  absl::StatusOr<std::unique_ptr<ChildProcess>> process = ChildProcess::Start(child);
  if (!process.ok()) return process.status();
  server->process_ = *std::move(process);
  return server;
}

absl::Status ServerProcess::AwaitReady() {
  const absl::Time give_up = absl::Now() + options_.start_timeout;
  absl::Status last = absl::UnavailableError("not asked yet");
  for (;;) {
    if (options_.check_cancelled) {
      if (absl::Status cancelled = options_.check_cancelled(); !cancelled.ok()) {
        process_->Kill();
        return cancelled;
      }
    }
    if (!process_->Running()) {
      absl::StatusOr<int> status = process_->Wait(absl::ZeroDuration());
      return absl::InternalError(absl::StrCat(
          options_.name, " ", status.ok() ? DescribeWaitStatus(*status) : "exited",
          " during start-up; its log:\n", LogTail()));
    }
    last = CheckReady();
    if (last.ok()) return last;
    if (absl::Now() > give_up) break;
    absl::SleepFor(absl::Milliseconds(20));  // poll interval, under a deadline
  }
  process_->Kill();
  return absl::DeadlineExceededError(
      absl::StrCat(options_.name, " did not start serving within ",
                   absl::FormatDuration(options_.start_timeout), " (", last.message(),
                   "); its log:\n", LogTail()));
}

absl::Status ServerProcess::CheckReady() {
  if (const Probe* probe = std::get_if<Probe>(&options_.readiness)) {
    return probe->ready(*this);
  }
  int bound = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadWholeFile(PortFilePath())),
                        &bound) ||
      bound <= 0) {
    return absl::UnavailableError("no port in its port file yet");
  }
  if (options_.port != 0 && bound != options_.port) {
    return absl::InternalError(
        absl::StrCat("it serves on port ", bound, ", not ", options_.port));
  }
  port_ = bound;
  return absl::OkStatus();
}

ServerProcess::~ServerProcess() {
  if (process_ != nullptr) process_->Kill();
}

std::string ServerProcess::PortFilePath() const {
  return absl::StrCat(options_.dir, "/", options_.name, ".port");
}

std::string ServerProcess::MetricsPortFilePath() const {
  return absl::StrCat(options_.dir, "/", options_.name, ".metrics_port");
}

absl::StatusOr<int> ServerProcess::MetricsPort(absl::Duration timeout) const {
  const absl::Time give_up = absl::Now() + timeout;
  for (;;) {
    int port = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadWholeFile(MetricsPortFilePath())),
                         &port) &&
        port > 0) {
      return port;
    }
    if (absl::Now() > give_up) {
      return absl::NotFoundError(absl::StrCat(options_.name, " wrote no metrics port to ",
                                              MetricsPortFilePath(), " within ",
                                              absl::FormatDuration(timeout)));
    }
    absl::SleepFor(absl::Milliseconds(20));  // poll interval, under a deadline
  }
}

absl::StatusOr<std::string> ServerProcess::MetricsUrl() const {
  absl::StatusOr<int> port = MetricsPort();
  if (!port.ok()) return port.status();
  return absl::StrCat("http://", options_.host, ":", *port);
}

std::string ServerProcess::address() const {
  return absl::StrCat(options_.host, ":", port_);
}

absl::Status ServerProcess::Terminate(absl::Duration deadline) {
  if (!process_->Running()) {
    return absl::FailedPreconditionError(absl::StrCat(options_.name, " is not running"));
  }
  process_->Signal(SIGCONT);
  process_->Signal(options_.stop_signal);
  absl::StatusOr<int> status = process_->Wait(deadline);
  if (!status.ok()) {
    process_->Kill();
    return absl::DeadlineExceededError(absl::StrCat(
        options_.name, " did not exit within ", absl::FormatDuration(deadline),
        " of signal ", options_.stop_signal, "; killed it. Its log:\n", LogTail()));
  }
  if (ExitedCleanly(*status)) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(
      options_.name, " did not shut down cleanly: ", DescribeWaitStatus(*status),
      "; its log:\n", LogTail()));
}

absl::StatusOr<int> ServerProcess::ThreadCount() const {
  std::ifstream in(absl::StrCat("/proc/", pid(), "/status"));
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view rest = line;
    if (absl::ConsumePrefix(&rest, "Threads:")) {
      int threads = 0;
      if (absl::SimpleAtoi(absl::StripAsciiWhitespace(rest), &threads)) return threads;
    }
  }
  return absl::NotFoundError("no Threads: line");
}

std::string ServerProcess::LogTail(size_t bytes) const {
  return FileTail(log_path_, bytes);
}

std::string ServerProcess::LogSinceStart() const {
  std::string log = ReadWholeFile(log_path_);
  return log.size() > log_offset_ ? log.substr(log_offset_) : "";
}

absl::Status ServerProcess::WaitForLog(absl::string_view text, absl::Duration timeout) const {
  absl::Status status =
      PollUntil([&] { return absl::StrContains(LogSinceStart(), text); }, timeout,
                absl::StrCat("'", text, "' in the log of ", options_.name));
  if (!status.ok()) {
    return absl::DeadlineExceededError(absl::StrCat(status.message(), "; log:\n", LogTail()));
  }
  return status;
}

}  // namespace fencegate::testing
