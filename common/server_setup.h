// What every fencegate gRPC server has, set up in one place: the gRPC health
// service, server reflection (so grpcurl can list and call the API),
// fencegate.v1.ServerInfo (its version; server_info_service.h), a
// file that publishes the bound port (listen on port 0 in tests, then read
// the port from the file), and INVALID_ARGUMENT for requests that do not
// parse (malformed_request_interceptor.h).
//
// Thread safety: call from the thread that builds the server.
#ifndef FENCEGATE_COMMON_SERVER_SETUP_H_
#define FENCEGATE_COMMON_SERVER_SETUP_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"

namespace fencegate {

// Enables health checking and reflection for every server built after the
// call. Idempotent and thread-safe.
void EnableHealthAndReflection();

// Builds and starts a server on `listen` serving `service`, with health,
// reflection and ServerInfo, `credentials` (null: plaintext; see common/tls.h) and a
// receive limit of `max_receive_bytes` (0: gRPC's default). Sets *port to
// the bound port and publishes it in `port_file` (if not empty).
// UNAVAILABLE naming --listen if it cannot listen. `service` must outlive
// the server.
absl::StatusOr<std::unique_ptr<grpc::Server>> StartGrpcServer(
    const std::string& listen, grpc::Service* service, int* port,
    const std::string& port_file, int max_receive_bytes = 0,
    std::shared_ptr<grpc::ServerCredentials> credentials = nullptr);

// Writes "<port>\n" to `path` atomically (temp file + rename), so a reader
// never sees a partial number. No-op when `path` is empty.
absl::Status WritePortFile(const std::string& path, int port);

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_SETUP_H_
