// EchoLoop: gRPC's streaming echo (fencegate-echo-server's Echo.Stream)
// driven by event-loop clients in the shape of the Session streams' calls:
// each client one stream on a connection of its own, one message in flight,
// the next written from the callback that read the last one's echo, on
// gRPC's callback API. No work behind it: the floor of a Session call on
// this machine (issue 32's streaming-echo ceiling).
//
// Thread safety: as loop_driver.h.
#ifndef FENCEGATE_BENCH_LOADGEN_ECHO_LOOP_H_
#define FENCEGATE_BENCH_LOADGEN_ECHO_LOOP_H_

#include <memory>
#include <string>
#include <vector>

#include "bench/loadgen/loop_driver.h"

namespace fencegate::bench {

class EchoLoop final : public LoopDriver {
 public:
  explicit EchoLoop(std::string target);
  ~EchoLoop() override;

  absl::Status Open(int clients) override;
  void Start(std::function<void(int)> kick) override;
  void Stop() override;
  void Echo(int client, size_t bytes, Done done) override;

  // One client's stream (echo_loop.cc).
  class Stream;

 private:
  const std::string target_;
  std::vector<std::unique_ptr<Stream>> streams_;
};

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_ECHO_LOOP_H_
