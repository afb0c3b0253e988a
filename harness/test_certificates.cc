#include "harness/test_certificates.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "harness/run_program.h"

namespace fencegate::demo {
namespace {

// The openssl tool's path, from $PATH.
std::string OpensslPath() {
  const char* path = std::getenv("PATH");
  for (absl::string_view dir :
       absl::StrSplit(path != nullptr ? path : "/usr/bin:/bin", ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(dir, "/openssl");
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "/usr/bin/openssl";
}

absl::Status Openssl(std::vector<std::string> args) {
  args.insert(args.begin(), OpensslPath());
  absl::StatusOr<testing::ProgramResult> run = testing::RunProgram(args, absl::Seconds(60));
  if (!run.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot run the openssl tool (Debian package openssl): ", run.status().message()));
  }
  if (run->exit_code != 0) {
    return absl::InternalError(absl::StrCat("openssl ", args[1], " failed: ",
                                            run->stderr_text));
  }
  return absl::OkStatus();
}

absl::Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

// A key and a certificate for `subject`, signed by the CA in `dir`.
absl::Status Issue(const std::string& dir, const std::string& name,
                   const std::string& subject, const std::string& extensions) {
  const std::string base = absl::StrCat(dir, "/", name);
  absl::Status s = WriteText(base + ".ext", extensions);
  if (s.ok()) {
    s = Openssl({"req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                 "-nodes", "-subj", subject, "-keyout", base + ".key", "-out",
                 base + ".csr"});
  }
  if (s.ok()) {
    s = Openssl({"x509", "-req", "-in", base + ".csr", "-CA", dir + "/ca.pem", "-CAkey",
                 dir + "/ca.key", "-CAcreateserial", "-days", "2", "-extfile",
                 base + ".ext", "-out", base + ".pem"});
  }
  return s;
}

}  // namespace

absl::StatusOr<TestCertificates> MakeTestCertificates(
    const std::string& dir, const std::vector<std::string>& client_names) {
  absl::Status s = Openssl(
      {"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
       "-days", "2", "-subj", "/CN=fencegate test CA", "-addext",
       "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
       "-keyout", dir + "/ca.key", "-out", dir + "/ca.pem"});
  if (!s.ok()) return s;
  s = Issue(dir, "server", "/CN=localhost",
            "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
            "extendedKeyUsage=serverAuth,clientAuth\n");
  if (!s.ok()) return s;
  TestCertificates certs;
  certs.ca = dir + "/ca.pem";
  certs.server = ServerTlsFiles{dir + "/server.pem", dir + "/server.key", certs.ca};
  for (const std::string& name : client_names) {
    const std::string file = absl::StrCat("client-", absl::StrReplaceAll(name, {{" ", "-"}}));
    s = Issue(dir, file, absl::StrCat("/CN=", name), "extendedKeyUsage=clientAuth\n");
    if (!s.ok()) return s;
    certs.clients[name] =
        ClientTlsFiles{certs.ca, absl::StrCat(dir, "/", file, ".pem"),
                       absl::StrCat(dir, "/", file, ".key")};
  }
  return certs;
}

}  // namespace fencegate::demo
