#include "common/grpc/channel_credentials.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace fencegate {

absl::StatusOr<std::string> ReadPemFile(const std::string& path, const char* flag) {
  std::ifstream file(path);
  if (!file) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read ", flag, "=", path, ": no such readable file"));
  }
  std::stringstream text;
  text << file.rdbuf();
  if (text.str().find("-----BEGIN ") == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, "=", path, " holds no PEM block (-----BEGIN ...)"));
  }
  return text.str();
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const ClientTlsFiles& files) {
  if (!files.enabled()) return grpc::InsecureChannelCredentials();
  if (files.ca.empty()) {
    return absl::InvalidArgumentError(
        "TLS needs --tls_ca, the CA that signed the server's certificate");
  }
  if (files.cert.empty() != files.key.empty()) {
    return absl::InvalidArgumentError(
        "a client certificate needs both --tls_cert and --tls_key");
  }
  grpc::SslCredentialsOptions options;
  absl::StatusOr<std::string> ca = ReadPemFile(files.ca, "--tls_ca");
  if (!ca.ok()) return ca.status();
  options.pem_root_certs = *ca;
  if (!files.cert.empty()) {
    absl::StatusOr<std::string> cert = ReadPemFile(files.cert, "--tls_cert");
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadPemFile(files.key, "--tls_key");
    if (!key.ok()) return key.status();
    options.pem_cert_chain = *cert;
    options.pem_private_key = *key;
  }
  return grpc::SslCredentials(options);
}

}  // namespace fencegate
