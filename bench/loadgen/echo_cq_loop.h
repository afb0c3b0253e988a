// EchoCqLoop: the streaming echo (echo_loop.h's shape: each client one
// stream on a connection of its own, one message in flight, the next
// written from the event that read the last one's echo) on gRPC's
// asynchronous API: every stream's events come from one completion queue,
// taken by one thread, the driver's event thread, which runs every Done.
// Beside EchoLoop (the callback API, whose events gRPC hands to threads of
// its own), it measures which of the two designs a client core costs less
// on (issue 32).
//
// Thread safety: as loop_driver.h; Echo runs on the event thread only.
#ifndef FENCEGATE_BENCH_LOADGEN_ECHO_CQ_LOOP_H_
#define FENCEGATE_BENCH_LOADGEN_ECHO_CQ_LOOP_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/blocking_counter.h"
#include "bench/loadgen/loop_driver.h"
#include "grpcpp/alarm.h"
#include "grpcpp/grpcpp.h"

namespace fencegate::bench {

class EchoCqLoop final : public LoopDriver {
 public:
  explicit EchoCqLoop(std::string target);
  ~EchoCqLoop() override;

  absl::Status Open(int clients) override;
  void Start(std::function<void(int)> kick) override;
  void Stop() override;
  void Echo(int client, size_t bytes, Done done) override;

  // One client's stream (echo_cq_loop.cc).
  class Stream;

 private:
  // Takes events until the queue is shut down and drained.
  void Run();

  const std::string target_;
  grpc::CompletionQueue cq_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::function<void(int)> kick_;
  // Runs the kicks on the event thread.
  grpc::Alarm start_alarm_;
  // Counts the streams' ends once Stop closed them.
  std::unique_ptr<absl::BlockingCounter> ended_;
  std::thread thread_;
};

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_ECHO_CQ_LOOP_H_
