#include "tests/torture/server_node.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "examples/demo/server_launcher.h"

namespace fencegate::torture {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Replaces `path` atomically (temp file + rename), so a reader never sees a
// half-written file.
void WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::trunc);
    out << text;
  }
  rename(temp.c_str(), path.c_str());
}

// The lowest port the kernel hands out for port 0 and outgoing connections.
int EphemeralLow() {
  int low = 32768;
  std::istringstream in(ReadFile("/proc/sys/net/ipv4/ip_local_port_range"));
  in >> low;
  return low;
}

bool PortIsFree(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool free = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return free;
}

// A free port below the ephemeral range: nobody's port-0 listener or
// outgoing connection takes it while our server restarts.
int PickPort() {
  static std::mt19937 random{std::random_device{}()};
  static absl::Mutex mu(absl::kConstInit);
  absl::MutexLock lock(&mu);
  const int high = std::max(EphemeralLow() - 1, 20000);
  std::uniform_int_distribution<int> ports(std::max(10000, high - 15000), high);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int port = ports(random);
    if (PortIsFree(port)) return port;
  }
  return 0;
}

}  // namespace

ServerNode::ServerNode(ServerNodeOptions options) : options_(std::move(options)) {
  WriteFileAtomically(File(".faketime"), "+0\n");
  WriteFileAtomically(File(".failpoint"), "\n");
  starter_ = std::thread([this] { StarterLoop(); });
}

ServerNode::~ServerNode() {
  Kill();
  {
    absl::MutexLock lock(&starter_mu_);
    stopping_ = true;
  }
  starter_.join();
}

void ServerNode::StarterLoop() {
  absl::MutexLock lock(&starter_mu_);
  for (;;) {
    auto has_work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(starter_mu_) {
      return stopping_ || job_ != nullptr;
    };
    starter_mu_.Await(absl::Condition(&has_work));
    if (job_ == nullptr) return;  // stopping
    std::function<void()> job = std::move(job_);
    job_ = nullptr;
    starter_mu_.Unlock();
    job();
    starter_mu_.Lock();
  }
}

void ServerNode::OnStarterThread(std::function<void()> job) {
  absl::Notification done;
  absl::MutexLock lock(&starter_mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(starter_mu_) { return job_ == nullptr; };
  starter_mu_.Await(absl::Condition(&idle));
  job_ = [&] {
    job();
    done.Notify();
  };
  starter_mu_.Unlock();
  done.WaitForNotification();
  starter_mu_.Lock();
}

std::string ServerNode::File(const std::string& suffix) const {
  return absl::StrCat(options_.run_dir, "/", options_.name, suffix);
}

std::string ServerNode::address() const {
  absl::MutexLock lock(&mu_);
  return absl::StrCat("127.0.0.1:", port_);
}

absl::Status ServerNode::Start() {
  absl::Status status;
  OnStarterThread([&] {
    absl::MutexLock lock(&mu_);
    status = StartLocked();
  });
  return status;
}

absl::Status ServerNode::StartLocked() {
  if (process_ != nullptr && process_->Running()) return absl::OkStatus();
  if (port_ == 0) {
    // A port that looked free may be taken by the time the server binds it.
    absl::Status status;
    for (int attempt = 0; attempt < 5; ++attempt) {
      port_ = PickPort();
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
  const std::string port_file = File(".port");
  unlink(port_file.c_str());
  demo::ChildProcess::Options child;
  if (!options_.faketime_library.empty()) {
    child.argv = {"/usr/bin/env",
                  absl::StrCat("LD_PRELOAD=", options_.faketime_library),
                  absl::StrCat("FAKETIME_TIMESTAMP_FILE=", File(".faketime")),
                  "FAKETIME_NO_CACHE=1", "FAKETIME_DONT_FAKE_MONOTONIC=1"};
  }
  child.argv.push_back(options_.binary);
  child.argv.push_back(absl::StrCat("--listen=127.0.0.1:", port_));
  child.argv.push_back(absl::StrCat("--port_file=", port_file));
  child.argv.push_back(absl::StrCat("--failpoint_file=", File(".failpoint")));
  for (const std::string& arg : options_.extra_args) child.argv.push_back(arg);
  child.stderr_path = File(".log");
  absl::StatusOr<std::unique_ptr<demo::ChildProcess>> process =
      demo::ChildProcess::Start(child);
  if (!process.ok()) return process.status();
  process_ = *std::move(process);
  killed_ = false;

  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (absl::Now() < give_up) {
    if (!process_->Running()) {
      return absl::UnavailableError(absl::StrCat(options_.name, " exited during start-up:\n",
                                                 demo::FileTail(File(".log"))));
    }
    int bound = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFile(port_file)), &bound) &&
        bound == port_) {
      return absl::OkStatus();
    }
    absl::SleepFor(absl::Milliseconds(10));  // poll interval, under a deadline
  }
  process_->Signal(SIGKILL);
  return absl::DeadlineExceededError(absl::StrCat(options_.name, " did not start serving:\n",
                                                  demo::FileTail(File(".log"))));
}

void ServerNode::Kill() {
  absl::MutexLock lock(&mu_);
  if (process_ == nullptr) return;
  killed_ = true;
  process_->Signal(SIGKILL);
  (void)process_->Wait(absl::InfiniteDuration());
}

absl::Status ServerNode::Stop() {
  absl::MutexLock lock(&mu_);
  if (process_ == nullptr) return absl::FailedPreconditionError("not started");
  return process_->StopAndWait(absl::Seconds(30));
}

void ServerNode::Continue() {
  absl::MutexLock lock(&mu_);
  if (process_ != nullptr) process_->Signal(SIGCONT);
}

absl::Status ServerNode::Terminate(absl::Duration grace) {
  absl::MutexLock lock(&mu_);
  if (process_ == nullptr || !process_->Running()) {
    return absl::FailedPreconditionError(absl::StrCat(options_.name, " is not running"));
  }
  killed_ = true;
  const int status = process_->Terminate(grace);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(options_.name, " did not shut down cleanly on SIGTERM: ",
                                          demo::DescribeWaitStatus(status), "\n",
                                          demo::FileTail(File(".log"))));
}

void ServerNode::Arm(const std::string& action, const std::string& failpoint) {
  unlink(File(".failpoint.hit").c_str());
  WriteFileAtomically(File(".failpoint"), absl::StrCat(action, " ", failpoint, "\n"));
}

void ServerNode::Disarm() { WriteFileAtomically(File(".failpoint"), "\n"); }

bool ServerNode::StallReached() const {
  struct stat st;
  return stat(File(".failpoint.hit").c_str(), &st) == 0;
}

absl::StatusOr<int> ServerNode::WaitForExit(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  if (process_ == nullptr) return absl::FailedPreconditionError("not started");
  absl::StatusOr<int> status = process_->Wait(timeout);
  if (status.ok()) killed_ = true;  // the caller waited for it: expected
  return status;
}

void ServerNode::SetClockOffset(absl::Duration offset) {
  // libfaketime reads "+N" / "-N" as an offset in seconds.
  WriteFileAtomically(File(".faketime"),
                      absl::StrCat(offset < absl::ZeroDuration() ? "" : "+",
                                   absl::ToInt64Seconds(offset), "\n"));
}

std::string ServerNode::UnexpectedExit() {
  absl::MutexLock lock(&mu_);
  if (process_ == nullptr || killed_ || process_->Running()) return "";
  killed_ = true;  // report it once
  absl::StatusOr<int> status = process_->Wait(absl::ZeroDuration());
  return absl::StrCat(options_.name, " ",
                      status.ok() ? demo::DescribeWaitStatus(*status) : "exited", ":\n",
                      demo::FileTail(File(".log")));
}

bool ServerNode::Running() {
  absl::MutexLock lock(&mu_);
  return process_ != nullptr && process_->Running();
}

pid_t ServerNode::pid() {
  absl::MutexLock lock(&mu_);
  return process_ == nullptr ? -1 : process_->pid();
}

std::string ServerNode::LogTail(size_t bytes) const {
  return demo::FileTail(File(".log"), bytes);
}

}  // namespace fencegate::torture
