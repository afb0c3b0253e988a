#include "tests/testing/http_get.h"

#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "httplib.h"

namespace fencegate::testing {

absl::StatusOr<HttpAnswer> HttpGet(const std::string& url, const std::string& path,
                                   const HttpTls& tls, absl::Duration timeout,
                                   bool head) {
  // httplib takes a client certificate at construction only.
  auto client = tls.cert.empty()
                    ? std::make_unique<httplib::Client>(url)
                    : std::make_unique<httplib::Client>(url, tls.cert, tls.key);
  const auto t = absl::ToChronoMicroseconds(timeout);
  client->set_connection_timeout(t);
  client->set_read_timeout(t);
  client->set_write_timeout(t);
  if (!tls.ca.empty()) {
    client->set_ca_cert_path(tls.ca);
    client->enable_server_certificate_verification(true);
  }
  httplib::Result result = head ? client->Head(path) : client->Get(path);
  if (!result) {
    return absl::UnavailableError(
        absl::StrCat(head ? "HEAD " : "GET ", url, path,
                     " failed: ", httplib::to_string(result.error())));
  }
  return HttpAnswer{result->status, result->get_header_value("Content-Type"),
                    result->body};
}

std::string UrlEscape(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      absl::StrAppend(&out, absl::StrFormat("%%%02X", c));
    }
  }
  return out;
}

}  // namespace fencegate::testing
