// A client's TLS and mutual TLS, from PEM files named by flags: the client
// library's channels, the CLI, and a server's own connections to other
// servers (a standby to its leader, the lock service to etcd, the gateway
// to the lock service). Plaintext when no file is given. Part of the
// client-safe base (no server set-up): the client library links it.
//
// --tls_ca (the CA that signed the server's certificate) turns TLS on;
// --tls_cert and --tls_key add a client certificate for mutual TLS.
//
// Errors: INVALID_ARGUMENT naming the flag when files are missing, empty or
// given without their partner (a cert without its key).
//
// Thread safety: free functions; safe from any thread.
#ifndef FENCEGATE_COMMON_GRPC_CHANNEL_CREDENTIALS_H_
#define FENCEGATE_COMMON_GRPC_CHANNEL_CREDENTIALS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "fencegate/client_tls_files.h"
#include "grpcpp/security/credentials.h"

namespace fencegate {

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const ClientTlsFiles& files);

// The text of the PEM file at `path`, named by `flag` in errors: the file
// is missing or unreadable, or holds no PEM block. (The servers read their
// own certificate and key with it too.)
absl::StatusOr<std::string> ReadPemFile(const std::string& path, const char* flag);

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_GRPC_CHANNEL_CREDENTIALS_H_
