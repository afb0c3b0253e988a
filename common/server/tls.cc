#include "common/server/tls.h"

#include "absl/strings/str_cat.h"
#include "common/grpc/channel_credentials.h"
#include "grpc/grpc_security_constants.h"
#include "grpcpp/security/auth_context.h"
#include "openssl/bio.h"
#include "openssl/pem.h"
#include "openssl/x509.h"

namespace fencegate {

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTlsFiles& files) {
  if (!files.enabled()) return grpc::InsecureServerCredentials();
  if (files.cert.empty() || files.key.empty()) {
    return absl::InvalidArgumentError(
        "TLS needs both --tls_cert and --tls_key (--tls_client_ca alone is not "
        "enough: the server needs a certificate of its own)");
  }
  absl::StatusOr<std::string> cert = ReadPemFile(files.cert, "--tls_cert");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPemFile(files.key, "--tls_key");
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions options(
      files.mutual() ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                     : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  if (files.mutual()) {
    absl::StatusOr<std::string> ca = ReadPemFile(files.client_ca, "--tls_client_ca");
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *ca;
  }
  options.pem_key_cert_pairs.push_back({*key, *cert});
  return grpc::SslServerCredentials(options);
}

std::string DescribeTls(const ServerTlsFiles& files) {
  if (!files.enabled()) return "plaintext";
  if (!files.mutual()) return "TLS";
  return absl::StrCat("mutual TLS (client CA ", files.client_ca, ")");
}

std::string PeerSubject(const grpc::ServerContextBase& context) {
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth == nullptr || !auth->IsPeerAuthenticated()) return "";
  std::vector<grpc::string_ref> subjects =
      auth->FindPropertyValues(GRPC_X509_SUBJECT_PROPERTY_NAME);
  if (subjects.empty()) return "";
  return std::string(subjects.front().data(), subjects.front().size());
}

absl::StatusOr<std::string> CertificateSubject(const std::string& path) {
  std::unique_ptr<BIO, decltype(&BIO_free)> file(BIO_new_file(path.c_str(), "r"),
                                                 &BIO_free);
  if (file == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read certificate ", path));
  }
  std::unique_ptr<X509, decltype(&X509_free)> cert(
      PEM_read_bio_X509(file.get(), nullptr, nullptr, nullptr), &X509_free);
  if (cert == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " holds no PEM certificate"));
  }
  std::unique_ptr<BIO, decltype(&BIO_free)> out(BIO_new(BIO_s_mem()), &BIO_free);
  if (out == nullptr ||
      X509_NAME_print_ex(out.get(), X509_get_subject_name(cert.get()), 0,
                         XN_FLAG_RFC2253) < 0) {
    return absl::InternalError(absl::StrCat("cannot print the subject of ", path));
  }
  char* data = nullptr;
  const long size = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

}  // namespace fencegate
