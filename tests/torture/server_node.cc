#include "tests/torture/server_node.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "harness/free_port.h"
#include "harness/log_file.h"

namespace fencegate::torture {

ServerNode::ServerNode(ServerNodeOptions options) : options_(std::move(options)) {
  testing::WriteFileAtomically(File(".faketime"), "+0\n");
  testing::WriteFileAtomically(File(".failpoint"), "\n");
  if (!options_.disk_database.empty()) {
    absl::StatusOr<std::unique_ptr<disk::DiskFaults>> faults =
        disk::DiskFaults::Create(File(".disk"), {options_.disk_database});
    if (faults.ok()) {
      disk_ = *std::move(faults);
    } else {
      disk_error_ = faults.status();
    }
  }
}

ServerNode::~ServerNode() { Kill(); }

std::string ServerNode::File(const std::string& suffix) const {
  return absl::StrCat(options_.run_dir, "/", options_.name, suffix);
}

std::string ServerNode::address() const {
  absl::MutexLock lock(&mu_);
  return absl::StrCat(options_.host.empty() ? "127.0.0.1" : options_.host, ":", port_);
}

absl::Status ServerNode::Start() {
  absl::MutexLock lock(&mu_);
  return StartLocked();
}

absl::Status ServerNode::StartLocked() {
  if (process_ != nullptr && process_->process().Running()) return absl::OkStatus();
  if (!disk_error_.ok()) return disk_error_;
  if (disk_ != nullptr && process_ != nullptr) {
    absl::Status cut = disk_->PowerCut();
    if (!cut.ok()) return cut;
  }
  if (port_ == 0 && options_.port != 0) port_ = options_.port;
  if (port_ == 0) {
    // A port that looked free may be taken by the time the server binds it.
    absl::Status status;
    for (int attempt = 0; attempt < 5; ++attempt) {
      absl::StatusOr<int> port = testing::PickFreePort();
      if (!port.ok()) return port.status();
      port_ = *port;
      status = StartOnce();
      if (status.ok()) return status;
    }
    return status;
  }
  // The same port again: right after a kill it may take a moment to be free.
  const absl::Time give_up = absl::Now() + absl::Seconds(20);
  for (;;) {
    absl::Status status = StartOnce();
    if (status.ok() || absl::Now() > give_up) return status;
    absl::SleepFor(absl::Milliseconds(100));  // retry interval, under a deadline
  }
}

absl::Status ServerNode::StartOnce() {
  testing::ServerProcessOptions server;
  if (!options_.faketime_library.empty()) {
    server.process.env = {absl::StrCat("LD_PRELOAD=", options_.faketime_library),
                          absl::StrCat("FAKETIME_TIMESTAMP_FILE=", File(".faketime")),
                          "FAKETIME_NO_CACHE=1", "FAKETIME_DONT_FAKE_MONOTONIC=1"};
  }
  if (disk_ != nullptr) {
    // LD_PRELOAD holds both libraries, faketime's first.
    for (std::string entry : disk_->Env()) {
      constexpr absl::string_view kPreload = "LD_PRELOAD=";
      if (absl::StartsWith(entry, kPreload) && !options_.faketime_library.empty()) {
        entry = absl::StrCat(kPreload, options_.faketime_library, ":",
                             entry.substr(kPreload.size()));
        server.process.env.front() = entry;
        continue;
      }
      server.process.env.push_back(entry);
    }
  }
  server.process.argv = {options_.binary,
                         absl::StrCat("--failpoint_file=", File(".failpoint"))};
  for (const std::string& arg : options_.extra_args) server.process.argv.push_back(arg);
  server.process.network_namespace = options_.network_namespace;
  server.dir = options_.run_dir;
  server.name = options_.name;
  if (!options_.host.empty()) server.host = options_.host;
  server.port = port_;
  absl::StatusOr<std::unique_ptr<testing::ServerProcess>> process =
      testing::ServerProcess::Start(std::move(server));
  if (!process.ok()) return process.status();
  process_ = *std::move(process);
  killed_ = false;
  return absl::OkStatus();
}

void ServerNode::Kill() {
  absl::MutexLock lock(&mu_);
  if (process_ == nullptr) return;
  killed_ = true;
  process_->Kill();
}

absl::Status ServerNode::Stop() {
  absl::MutexLock lock(&mu_);
  if (process_ == nullptr) return absl::FailedPreconditionError("not started");
  return process_->process().StopAndWait(absl::Seconds(30));
}

void ServerNode::Continue() {
  absl::MutexLock lock(&mu_);
  if (process_ != nullptr) process_->Resume();
}

absl::Status ServerNode::Terminate(absl::Duration grace) {
  absl::MutexLock lock(&mu_);
  if (process_ == nullptr || !process_->process().Running()) {
    return absl::FailedPreconditionError(absl::StrCat(options_.name, " is not running"));
  }
  killed_ = true;
  return process_->Terminate(grace);
}

void ServerNode::Arm(const std::string& action, const std::string& failpoint,
                     const std::string& subject) {
  unlink(File(".failpoint.hit").c_str());
  testing::WriteFileAtomically(
      File(".failpoint"),
      absl::StrCat(action, " ", failpoint, subject.empty() ? "" : " ", subject, "\n"));
}

void ServerNode::Disarm() {
  testing::WriteFileAtomically(File(".failpoint"), "\n");
  if (disk_ == nullptr) return;
  disk_->SetFull(false);
  disk_->FailNextFsyncs(0);
  disk_->FailNextWrites(0);
}

bool ServerNode::FailpointReached() const {
  struct stat st;
  return stat(File(".failpoint.hit").c_str(), &st) == 0;
}

absl::StatusOr<int> ServerNode::WaitForExit(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  if (process_ == nullptr) return absl::FailedPreconditionError("not started");
  absl::StatusOr<int> status = process_->process().Wait(timeout);
  if (status.ok()) killed_ = true;  // the caller waited for it: expected
  return status;
}

void ServerNode::SetClockOffset(absl::Duration offset) {
  // libfaketime reads "+N" / "-N" as an offset in seconds.
  testing::WriteFileAtomically(File(".faketime"),
                               absl::StrCat(offset < absl::ZeroDuration() ? "" : "+",
                                            absl::ToInt64Seconds(offset), "\n"));
}

std::string ServerNode::UnexpectedExit() {
  absl::MutexLock lock(&mu_);
  if (process_ == nullptr || killed_ || process_->process().Running()) return "";
  killed_ = true;  // report it once
  absl::StatusOr<int> status = process_->process().Wait(absl::ZeroDuration());
  return absl::StrCat(options_.name, " ",
                      status.ok() ? testing::DescribeWaitStatus(*status) : "exited",
                      ":\n", LogTail());
}

bool ServerNode::Running() {
  absl::MutexLock lock(&mu_);
  return process_ != nullptr && process_->process().Running();
}

pid_t ServerNode::pid() {
  absl::MutexLock lock(&mu_);
  return process_ == nullptr ? -1 : process_->pid();
}

std::string ServerNode::LogTail(size_t bytes) const {
  return testing::FileTail(File(".log"), bytes);
}

std::string ServerNode::ReadLog() const { return testing::ReadWholeFile(File(".log")); }

}  // namespace fencegate::torture
