// MakeTestCertificates: a throw-away PKI for mutual TLS in the demo and the
// tests, made at run time with the openssl command-line tool (nothing
// secret is ever committed): a CA, a server certificate valid for 127.0.0.1
// and localhost, and one client certificate per name (subject CN=<name>).
// EC P-256 keys, valid for two days, written into `dir`.
//
// Thread safety: free function; runs child processes.
#ifndef FENCEGATE_HARNESS_TEST_CERTIFICATES_H_
#define FENCEGATE_HARNESS_TEST_CERTIFICATES_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/server/tls.h"
#include "fencegate/client_tls_files.h"

namespace fencegate::demo {

struct TestCertificates {
  std::string ca;  // PEM of the CA certificate
  ServerTlsFiles server;  // for both servers: mutual TLS, clients checked by `ca`
  // Per client name: the files a client passes (CA + its own certificate).
  std::map<std::string, ClientTlsFiles> clients;
};

absl::StatusOr<TestCertificates> MakeTestCertificates(
    const std::string& dir, const std::vector<std::string>& client_names);

}  // namespace fencegate::demo

#endif  // FENCEGATE_HARNESS_TEST_CERTIFICATES_H_
