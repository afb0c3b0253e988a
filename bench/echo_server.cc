// fencegate-echo-server: answers Echo.Call with the request, and every
// message of an Echo.Stream with itself (in order, many in flight), nothing
// else. The benchmark's empty-call ceilings: the unary call (the C++ load
// generator's grpc-empty) and the stream (bench/python/'s python-echo, the
// shape of the Session streams).
//
// --api=callback (the default) serves both on gRPC's callback API, as the
// servers do; --api=cq serves both on the asynchronous API instead, every
// event taken from one completion queue by one thread (echo_cq_server.h),
// to measure which of the two designs a Session transport costs less on
// (issue 32).
#include <chrono>
#include <cstdlib>
#include <deque>
#include <memory>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/synchronization/mutex.h"
#include "bench/echo_cq_server.h"
#include "common/base/log.h"
#include "common/build_info/build_info.h"
#include "common/core/signals.h"
#include "common/server/server_setup.h"
#include "echo.grpc.pb.h"
#include "grpcpp/grpcpp.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:0", "host:port to serve on");
ABSL_FLAG(std::string, port_file, "", "write the bound port here once serving");
ABSL_FLAG(std::string, api, "callback",
          "how calls are served: callback (gRPC's callback API, as the servers) or cq "
          "(the asynchronous API, one thread on one completion queue)");

namespace {

using fencegate::bench::EchoMessage;

// One Echo.Stream: reads go on while answers are written, one write at a
// time (the callback API's rule), oldest first. Finishes once the client
// has ended its side and every answer is written (or a write failed: the
// client is gone). Reactions run on gRPC's threads, so the queue and the
// flags are guarded; deletes itself when gRPC is done with it.
class EchoStream final : public grpc::ServerBidiReactor<EchoMessage, EchoMessage> {
 public:
  EchoStream() { StartRead(&in_); }

  void OnReadDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    if (!ok) {
      reads_done_ = true;
      MaybeFinish();
      return;
    }
    if (!write_failed_) {
      answers_.push_back(std::move(in_));
      if (!writing_) WriteNext();
    }
    in_.Clear();
    StartRead(&in_);
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    answers_.pop_front();
    if (!ok) {
      write_failed_ = true;
      answers_.clear();
    }
    if (!answers_.empty()) {
      WriteNext();
    } else {
      MaybeFinish();
    }
  }

  void OnDone() override { delete this; }

 private:
  // Deque: the front's address stays valid while more are pushed behind it.
  void WriteNext() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    writing_ = true;
    StartWrite(&answers_.front());
  }

  void MaybeFinish() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (reads_done_ && !writing_ && !finished_) {
      finished_ = true;
      Finish(grpc::Status::OK);
    }
  }

  EchoMessage in_;  // only the one read in flight touches it
  absl::Mutex mu_;
  std::deque<EchoMessage> answers_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool write_failed_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

class EchoService final : public fencegate::bench::Echo::CallbackService {
  grpc::ServerUnaryReactor* Call(grpc::CallbackServerContext* context,
                                 const fencegate::bench::EchoMessage* request,
                                 fencegate::bench::EchoMessage* response) override {
    response->set_payload(request->payload());
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  grpc::ServerBidiReactor<EchoMessage, EchoMessage>* Stream(
      grpc::CallbackServerContext* /*context*/) override {
    return new EchoStream();
  }
};

}  // namespace

int main(int argc, char** argv) {
  fencegate::BlockShutdownSignals();
  fencegate::InitBuildInfo("fencegate-echo-server");
  absl::ParseCommandLine(argc, argv);
  const std::string api = absl::GetFlag(FLAGS_api);
  if (api != "callback" && api != "cq") {
    fencegate::LogError("--api=%s: expected callback or cq", api);
    return EXIT_FAILURE;
  }
  EchoService callback_service;
  fencegate::bench::Echo::AsyncService cq_service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(absl::GetFlag(FLAGS_listen), grpc::InsecureServerCredentials(),
                           &port);
  std::unique_ptr<grpc::ServerCompletionQueue> cq;
  if (api == "cq") {
    builder.RegisterService(&cq_service);
    cq = builder.AddCompletionQueue();
  } else {
    builder.RegisterService(&callback_service);
  }
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    fencegate::LogError("cannot listen on %s", absl::GetFlag(FLAGS_listen));
    return EXIT_FAILURE;
  }
  if (!fencegate::WritePortFile(absl::GetFlag(FLAGS_port_file), port).ok()) return EXIT_FAILURE;
  std::thread cq_thread;
  if (cq != nullptr) {
    cq_thread = std::thread(
        [&cq_service, &cq] { fencegate::bench::ServeEchoOn(cq_service, *cq); });
  }
  fencegate::LogInfo("%s serving on port %d on gRPC's %s API", fencegate::VersionLine(),
                     port, api == "cq" ? "asynchronous" : "callback");
  fencegate::WaitForShutdownSignal();
  // Streams a client left open are cancelled after a second.
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  if (cq != nullptr) {
    cq->Shutdown();  // after the server's: ServeEchoOn drains it and returns
    cq_thread.join();
  }
  return EXIT_SUCCESS;
}
