#include "bench/loadgen/park_waiters.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/loadgen/grpc_util.h"

namespace fencegate::bench {
namespace {

constexpr absl::Duration kConnectTimeout = absl::Seconds(10);

// The waiter's request id: 32 hex digits, as the client library makes them
// (client/retry.cc), unique in the run.
std::string RequestId(int k) {
  return absl::StrFormat("%016x%016x", static_cast<uint64_t>(getpid()),
                         static_cast<uint64_t>(k));
}

sigset_t StopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

}  // namespace

absl::Status ValidateParkConfig(const ParkConfig& config) {
  if (config.target.empty()) return absl::InvalidArgumentError("--target is required");
  if (config.resources < 1 || config.resources > 1000000) {
    return absl::InvalidArgumentError("--resources must be in [1, 1000000]");
  }
  if (config.waiters < 1 || config.waiters > 1000000) {
    return absl::InvalidArgumentError("--waiters must be in [1, 1000000]");
  }
  if (config.streams < 1 || config.streams > 256) {
    return absl::InvalidArgumentError("--clients (park: streams) must be in [1, 256]");
  }
  if (config.batch < 1 || config.batch > 4096) {
    return absl::InvalidArgumentError(
        "--depth (park: calls per message) must be in [1, 4096]");
  }
  if (config.wait < absl::Seconds(1)) {
    return absl::InvalidArgumentError("--park_wait must be at least 1s");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ParkedWaiters>> ParkedWaiters::Park(
    const ParkConfig& config) {
  if (absl::Status valid = ValidateParkConfig(config); !valid.ok()) return valid;
  std::unique_ptr<ParkedWaiters> parked(new ParkedWaiters());
  for (int s = 0; s < config.streams; ++s) {
    auto channel = ConnectOwnChannel(config.target, kConnectTimeout);
    if (!channel.ok()) return channel.status();
    auto stream = std::make_unique<Stream>();
    stream->stub = v1::LockService::NewStub(*channel);
    stream->stream = stream->stub->Session(&stream->context);
    if (stream->stream == nullptr)
      return absl::UnavailableError("lock Session: no stream");
    Stream* raw = stream.get();
    parked->streams_.push_back(std::move(stream));
    raw->reader = std::thread([p = parked.get(), raw] { p->Read(*raw); });
  }
  const int64_t wait_ms = absl::ToInt64Milliseconds(config.wait);
  const int64_t ttl_ms = absl::ToInt64Milliseconds(config.ttl);
  // Stream s sends waiters s, s + streams, ...: a hot resource's queue
  // fills from every stream, and with one waiter per resource each stream
  // parks on its own share of them.
  std::vector<std::thread> senders;
  std::vector<absl::Status> sent(config.streams);
  for (int s = 0; s < config.streams; ++s) {
    senders.emplace_back([&, s] {
      Stream& stream = *parked->streams_[s];
      const std::string holder = absl::StrCat("loadgen-", getpid(), "-", s);
      v1::LockSessionRequest message;
      uint64_t request_id = 1;
      for (int k = s; k < config.waiters; k += config.streams) {
        v1::LockCall* call = message.add_calls();
        call->set_request_id(request_id++);
        v1::AcquireRequest* acquire = call->mutable_acquire();
        acquire->set_resource(absl::StrCat(config.run_id, "-r", k % config.resources));
        acquire->set_holder(holder);
        acquire->set_ttl_ms(ttl_ms);
        acquire->set_wait_ms(wait_ms);
        acquire->set_request_id(RequestId(k));
        const bool last = k + config.streams >= config.waiters;
        if (message.calls_size() == config.batch || last) {
          if (!stream.stream->Write(message)) {
            sent[s] =
                absl::UnavailableError("lock Session: the stream ended while sending");
            return;
          }
          message.clear_calls();
        }
      }
    });
  }
  for (std::thread& sender : senders) sender.join();
  for (const absl::Status& status : sent) {
    if (!status.ok()) return status;  // the destructor stops the streams
  }
  return parked;
}

ParkedWaiters::~ParkedWaiters() { Stop(); }

void ParkedWaiters::Read(Stream& stream) {
  v1::LockSessionResponse response;
  while (stream.stream->Read(&response)) {
    if (stopping_.load()) continue;
    for (const v1::LockResult& result : response.results()) {
      if (result.result_case() == v1::LockResult::kError) {
        RecordAnswer(absl::StrCat("a waiter was refused: code ", result.error().code(),
                                  ": ", result.error().message()));
      } else if (result.result_case() == v1::LockResult::kAcquire) {
        RecordAnswer(result.acquire().acquired() ? "a waiter was granted the lock"
                                                 : "a waiter's wait ran out");
      } else {
        RecordAnswer("a waiter got an answer of another kind");
      }
    }
  }
  if (!stopping_.load()) RecordAnswer("the stream ended while its waiters were parked");
}

void ParkedWaiters::RecordAnswer(const std::string& what) {
  answered_.fetch_add(1);
  absl::MutexLock lock(&mu_);
  if (!first_answer_.empty()) return;
  first_answer_ = what;
  // Said at once, so a caller polling for the waiters need not wait for
  // a count that will never come.
  std::printf("{\"phase\": \"answered\", \"first\": \"%s\"}\n",
              absl::CHexEscape(what).c_str());
  std::fflush(stdout);
}

std::string ParkedWaiters::first_answer() const {
  absl::MutexLock lock(&mu_);
  return first_answer_;
}

void ParkedWaiters::Stop() {
  if (stopping_.exchange(true)) return;
  for (auto& stream : streams_) stream->context.TryCancel();
  for (auto& stream : streams_) {
    if (stream->reader.joinable()) stream->reader.join();
    stream->stream->Finish().IgnoreError();  // CANCELLED, as asked
  }
}

void BlockStopSignals() {
  sigset_t set = StopSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void WaitForStdinEndOrStopSignal() {
  sigset_t set = StopSignals();
  const int signals = signalfd(-1, &set, SFD_CLOEXEC);
  pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {signals, POLLIN, 0}};
  char buffer[256];
  for (;;) {
    if (poll(fds, signals >= 0 ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents != 0) break;  // SIGTERM or SIGINT
    if (fds[0].revents != 0) {
      const ssize_t n = read(STDIN_FILENO, buffer, sizeof(buffer));
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) break;  // end of input
    }
  }
  if (signals >= 0) close(signals);
}

}  // namespace fencegate::bench
