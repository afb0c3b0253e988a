// What the fuzz targets share: failing on a broken invariant, the shape of
// errors, parsing requests and round-tripping responses as the wire does,
// signing keys, and where their databases live.
//
// Thread safety: Fail() may be called from any thread.
#ifndef FENCEGATE_TESTS_FUZZ_FUZZ_SUPPORT_H_
#define FENCEGATE_TESTS_FUZZ_FUZZ_SUPPORT_H_

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/base/errors.h"
#include "common/core/token_signer.h"
#include "common/core/validation.h"
#include "common/signing/signing_keys.h"

namespace fencegate::fuzz {

// Reports a broken invariant and aborts, so libFuzzer keeps the input as a
// crash (reproduce: <fuzz target> <crash file>).
[[noreturn]] inline void Fail(const char* file, int line, const char* condition,
                              const std::string& detail) {
  std::fprintf(stderr, "\nINVARIANT BROKEN at %s:%d: %s\n  %s\n", file, line, condition,
               detail.c_str());
  std::abort();
}

// A directory of this process for the SQLite files of one input at a time,
// on tmpfs when there is one (fsync is then cheap, and the code path is the
// real one: WAL, synchronous=FULL).
// Removed when the process exits normally.
inline const std::string& ScratchDir() {
  static const std::string* dir = [] {
    std::string base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    auto* path = new std::string(absl::StrCat(base, "/fencegate-fuzz-", getpid()));
    std::filesystem::remove_all(*path);
    std::filesystem::create_directories(*path);
    std::atexit([] { std::filesystem::remove_all(ScratchDir()); });
    return path;
  }();
  return *dir;
}

// Removes an SQLite database and its WAL files.
inline void RemoveDatabase(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    unlink(absl::StrCat(path, suffix).c_str());
  }
}

}  // namespace fencegate::fuzz

#define FUZZ_CHECK(condition, ...)                                               \
  do {                                                                           \
    if (!(condition)) {                                                          \
      ::fencegate::fuzz::Fail(__FILE__, __LINE__, #condition, absl::StrCat(__VA_ARGS__)); \
    }                                                                            \
  } while (0)

namespace fencegate::fuzz {

// The error codes a call may answer besides OK and INVALID_ARGUMENT.
struct AllowedErrors {
  bool aborted = false;      // lease lost, stale token, version mismatch
  bool exhausted = false;    // too many waiters or resources (Acquire)
  bool cancelled = false;    // the client went away, or a retry took over
  bool unavailable = false;  // the server stopped (a restart)
  bool denied = false;       // a bad signature (signing on)
};

// Fails unless `status` is OK or an allowed code with the detail
// docs/errors.md promises: INVALID_ARGUMENT names its field,
// PERMISSION_DENIED says the signature is bad. (ABORTED's detail is the
// models' to judge.)
inline void CheckErrorShape(const char* op, const absl::Status& status, AllowedErrors allowed) {
  const std::optional<ErrorInfo> info = GetErrorInfo(status);
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return;
    case absl::StatusCode::kInvalidArgument:
      FUZZ_CHECK(info && !info->field.empty() && !status.message().empty(), op,
                 ": INVALID_ARGUMENT without its field: ", status.ToString());
      return;
    case absl::StatusCode::kAborted:
      FUZZ_CHECK(allowed.aborted, op, ": unexpected ", status.ToString());
      return;
    case absl::StatusCode::kResourceExhausted:
      FUZZ_CHECK(allowed.exhausted, op, ": unexpected ", status.ToString());
      return;
    case absl::StatusCode::kCancelled:
      FUZZ_CHECK(allowed.cancelled, op, ": unexpected ", status.ToString());
      return;
    case absl::StatusCode::kUnavailable:
      FUZZ_CHECK(allowed.unavailable, op, ": unexpected ", status.ToString());
      return;
    case absl::StatusCode::kPermissionDenied:
      FUZZ_CHECK(allowed.denied && info && info->reason == ErrorReason::kBadSignature, op,
                 ": unexpected ", status.ToString());
      return;
    default:
      FUZZ_CHECK(false, op, ": undocumented error ", status.ToString());
  }
}

}  // namespace fencegate::fuzz

namespace fencegate::fuzz {

// Parses a request from its wire bytes as gRPC would. False if it cannot
// be parsed, or if it carries fields the services do not know (which they
// refuse with RejectUnknownFields, checked here to name the field).
template <typename Request>
bool ParseRequest(absl::string_view payload, Request& request) {
  if (!request.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return false;
  }
  absl::Status unknown = RejectUnknownFields(request);
  CheckErrorShape("request", unknown, AllowedErrors());
  return unknown.ok();
}

// A response must survive the wire as a server sends it.
template <typename Response>
void RoundTrip(const Response& response) {
  std::string bytes;
  Response parsed;
  FUZZ_CHECK(response.SerializeToString(&bytes) && parsed.ParseFromString(bytes),
             "the response does not survive the wire: ", response.ShortDebugString());
}

// The signer of runs with signed tokens (null otherwise): key "k1" signs,
// "k0" only verifies; a fixed wall clock, so an input behaves the same on
// every run.
inline std::unique_ptr<TokenSigner> FuzzSigner(bool signed_tokens) {
  if (!signed_tokens) return nullptr;
  absl::StatusOr<KeyRing> keys = KeyRing::Parse(
      "k1 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f sign\n"
      "k0 f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff000102030405060708090a0b0c0d0e0f\n",
      "fuzz keys");
  FUZZ_CHECK(keys.ok(), keys.status().ToString());
  return std::make_unique<TokenSigner>(*std::move(keys),
                                       [] { return absl::FromUnixSeconds(1767225600); });
}

}  // namespace fencegate::fuzz

#endif  // FENCEGATE_TESTS_FUZZ_FUZZ_SUPPORT_H_
