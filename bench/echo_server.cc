// fencegate-echo-server: answers Echo.Call with the request, nothing else,
// on the gRPC callback API. The benchmark's empty-call ceiling.
#include <cstdlib>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "common/build_info.h"
#include "common/log.h"
#include "common/server_setup.h"
#include "common/signals.h"
#include "echo.grpc.pb.h"
#include "grpcpp/grpcpp.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:0", "host:port to serve on");
ABSL_FLAG(std::string, port_file, "", "write the bound port here once serving");

namespace {

class EchoService final : public fencegate::bench::Echo::CallbackService {
  grpc::ServerUnaryReactor* Call(grpc::CallbackServerContext* context,
                                 const fencegate::bench::EchoMessage* request,
                                 fencegate::bench::EchoMessage* response) override {
    response->set_payload(request->payload());
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
};

}  // namespace

int main(int argc, char** argv) {
  fencegate::BlockShutdownSignals();
  fencegate::InitBuildInfo("fencegate-echo-server");
  absl::ParseCommandLine(argc, argv);
  EchoService service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(absl::GetFlag(FLAGS_listen), grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    fencegate::LogError("cannot listen on %s", absl::GetFlag(FLAGS_listen));
    return EXIT_FAILURE;
  }
  if (!fencegate::WritePortFile(absl::GetFlag(FLAGS_port_file), port).ok()) return EXIT_FAILURE;
  fencegate::LogInfo("%s serving on port %d", fencegate::VersionLine(), port);
  fencegate::WaitForShutdownSignal();
  server->Shutdown();
  return EXIT_SUCCESS;
}
