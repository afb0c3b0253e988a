// HttpGet: one GET (or HEAD) to a metrics listener or a Prometheus server
// on loopback, for tests: cpp-httplib's client, a deadline on every read,
// plaintext or TLS (with a client certificate for mutual TLS).
//
// Thread safety: free functions.
#ifndef FENCEGATE_TESTS_TESTING_HTTP_GET_H_
#define FENCEGATE_TESTS_TESTING_HTTP_GET_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fencegate::testing {

struct HttpAnswer {
  int status = 0;
  std::string content_type;
  std::string body;
};

struct HttpTls {
  std::string ca;    // verifies the server; empty: plaintext
  std::string cert;  // client certificate (mutual TLS), optional
  std::string key;
};

// `url`: "http://127.0.0.1:9464" or "https://..." (no path); `path` with
// its query string, already escaped. UNAVAILABLE when no answer came.
absl::StatusOr<HttpAnswer> HttpGet(const std::string& url, const std::string& path,
                                   const HttpTls& tls = {},
                                   absl::Duration timeout = absl::Seconds(20),
                                   bool head = false);

// `text` with every byte that is not unreserved %-escaped (for a query).
std::string UrlEscape(const std::string& text);

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_TESTING_HTTP_GET_H_
