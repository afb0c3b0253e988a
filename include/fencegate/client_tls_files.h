// ClientTlsFiles: the PEM files a client connects with, to either server
// (the client library's ClientOptions::tls, the CLI's --tls_* flags) and
// from a server to another (a standby forwarding to its leader, the lock
// service to etcd, the gateway to the lock service). Plaintext when all are
// empty. The servers' own certificate and key are ServerTlsFiles
// (common/server/tls.h), which is not part of the client.
//
// Thread safety: a value type.
#ifndef FENCEGATE_CLIENT_TLS_FILES_H_
#define FENCEGATE_CLIENT_TLS_FILES_H_

#include <string>

namespace fencegate {

struct ClientTlsFiles {
  std::string ca;    // --tls_ca: verifies the server; set = TLS on
  std::string cert;  // --tls_cert: client certificate, for mutual TLS
  std::string key;   // --tls_key: its private key

  bool enabled() const { return !ca.empty() || !cert.empty() || !key.empty(); }
};

}  // namespace fencegate

#endif  // FENCEGATE_CLIENT_TLS_FILES_H_
