// TLS and mutual TLS for both servers, from PEM files named by flags.
// Plaintext when no file is given. (A client's side, also a server's
// connections to other servers: common/grpc/channel_credentials.h.)
//
// --tls_cert and --tls_key turn TLS on; --tls_client_ca as well turns on
// mutual TLS: every client must present a certificate signed by that CA,
// and the lock service records the certificate's subject as the holder
// (docs/security.md).
//
// Errors: INVALID_ARGUMENT naming the flag when files are missing, empty or
// given without their partner (a cert without its key).
//
// Thread safety: free functions; safe from any thread.
#ifndef FENCEGATE_COMMON_SERVER_TLS_H_
#define FENCEGATE_COMMON_SERVER_TLS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_context.h"

namespace fencegate {

struct ServerTlsFiles {
  std::string cert;       // --tls_cert: this server's certificate chain
  std::string key;        // --tls_key: its private key
  std::string client_ca;  // --tls_client_ca: set = mutual TLS required

  bool enabled() const { return !cert.empty() || !key.empty() || !client_ca.empty(); }
  bool mutual() const { return !client_ca.empty(); }
};

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTlsFiles& files);

// "plaintext", "TLS" or "mutual TLS (client CA <path>)", for start-up logs.
std::string DescribeTls(const ServerTlsFiles& files);

// The subject of the client certificate the caller presented over mutual
// TLS, e.g. "CN=worker-1,O=acme"; empty when the connection has none.
std::string PeerSubject(const grpc::ServerContextBase& context);

// The subject of the (first) certificate in the PEM file at `path`, in the
// form PeerSubject() gives (RFC 2253, as gRPC prints it).
absl::StatusOr<std::string> CertificateSubject(const std::string& path);

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_TLS_H_
