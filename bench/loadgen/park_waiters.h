// The park workload (./scripts/bench --scale): state, not speed. It parks
// `waiters` Acquire calls on the lock service and keeps them parked until
// told to stop, so the caller can read the service's memory meanwhile.
//
// The resources "<run_id>-r0" .. "-r<resources-1>" must be held already by
// another holder (the hold workload with the same --run_id and
// --resources): then every Acquire parks in its resource's FIFO queue.
// Waiter k goes to resource k % resources, so resources = waiters is one
// waiter per resource and resources = 1 is every waiter on one hot resource.
//
// Each waiter is what the client library sends: an Acquire with a wait
// (`wait`), a TTL and a request id of 32 hex digits (so the service gives
// it a persisted place in the queue); the holder is its stream's,
// "loadgen-<pid>-<stream>". The calls go over `streams` Session streams to
// the lock service (one connection each), waiters / streams per stream,
// pipelined: messages of up to `batch` calls, none waiting for an answer.
// So the service's --max_stream_in_flight must be at least waiters /
// streams (rounded up), and --max_waiters_per_resource and
// --max_waiters_total must leave room for them; otherwise the calls past
// the limits are answered RESOURCE_EXHAUSTED and counted in answered().
//
// A parked call is not answered until granted or its wait runs out, so
// the workload cannot see that a call parked: the caller polls the
// service's fencegate_lock_waiters gauge (or Describe). What it can see is
// an answer that came early (a refusal, a grant, a wait that ran out):
// answered() counts them, and the first one prints a line {"phase":
// "answered", "first": "<what>"} on stdout at once; a run where one came
// did not park them all.
//
// Thread safety: Park() and Stop() from one thread; answered() and
// first_error() from any. One reader thread per stream runs meanwhile.
#ifndef FENCEGATE_BENCH_LOADGEN_PARK_WAITERS_H_
#define FENCEGATE_BENCH_LOADGEN_PARK_WAITERS_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "fencegate/v1/lock.grpc.pb.h"

namespace fencegate::bench {

struct ParkConfig {
  std::string target;  // the lock service, host:port
  std::string run_id;
  int resources = 1;
  int waiters = 1000;
  int streams = 16;
  int batch = 256;  // calls per stream message
  absl::Duration wait = absl::Minutes(20);
  absl::Duration ttl = absl::Seconds(10);  // of the lease, if ever granted
};

// INVALID_ARGUMENT naming the flag when a bound is broken.
absl::Status ValidateParkConfig(const ParkConfig& config);

class ParkedWaiters {
 public:
  // Connects, opens the streams and sends every call; returns once all are
  // written (not yet known to be parked: see the header). An error if a
  // connection or a stream failed before that; the streams are stopped.
  static absl::StatusOr<std::unique_ptr<ParkedWaiters>> Park(const ParkConfig& config);
  ~ParkedWaiters();  // Stop()

  // Calls answered since Park() began (each is a waiter that did not stay
  // parked), and the first one's message (a status or "acquired" etc.).
  int64_t answered() const { return answered_.load(); }
  std::string first_answer() const;

  // Cancels the streams (the service drops their parked calls) and joins
  // the readers. Idempotent.
  void Stop();

 private:
  struct Stream {
    std::unique_ptr<v1::LockService::Stub> stub;
    grpc::ClientContext context;
    std::unique_ptr<
        grpc::ClientReaderWriter<v1::LockSessionRequest, v1::LockSessionResponse>>
        stream;
    std::thread reader;
  };

  ParkedWaiters() = default;
  void Read(Stream& stream);
  void RecordAnswer(const std::string& what);

  std::vector<std::unique_ptr<Stream>> streams_;
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> answered_{0};
  mutable absl::Mutex mu_;
  std::string first_answer_ ABSL_GUARDED_BY(mu_);
};

// Blocks until standard input reaches end of file or SIGTERM or SIGINT
// arrives. REQUIRES: BlockStopSignals() was called first, before any thread
// was started, so no other thread takes the signal.
void BlockStopSignals();
void WaitForStdinEndOrStopSignal();

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_PARK_WAITERS_H_
