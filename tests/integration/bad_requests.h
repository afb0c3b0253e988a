// The hand-written bad requests of the conformance test
// (bad_input_conformance_test.cc): for every RPC of both services, requests
// that are empty, malformed, oversized, carry unknown fields, names that are
// too long, not UTF-8 or hold control characters, zero, negative and huge
// TTLs and tokens, unknown resources, stale or released tokens, missing or
// forged signatures; each with the code docs/errors.md documents for it.
//
// A case is the bytes sent, not a proto object, so it can also be what no
// proto object can hold: bytes that do not parse, or fields the server's
// proto does not have. None of them may change anything the servers hold.
//
// Thread safety: plain data and pure functions.
#ifndef FENCEGATE_TESTS_INTEGRATION_BAD_REQUESTS_H_
#define FENCEGATE_TESTS_INTEGRATION_BAD_REQUESTS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/base/errors.h"
#include "fencegate/v1/token.pb.h"
#include "google/protobuf/message.h"
#include "grpcpp/support/status.h"
#include "tests/testing/raw_call.h"

namespace fencegate::conformance {

struct BadRequest {
  std::string name;    // short; unique within its service
  std::string method;  // "/fencegate.v1.Gateway/Write"
  std::string bytes;   // the request as sent
  grpc::StatusCode code = grpc::StatusCode::INVALID_ARGUMENT;
  // The ErrorDetail docs/errors.md documents, if any: its reason, the field
  // it names (INVALID_FIELD) and the current token it carries (ABORTED).
  ErrorReason reason = ErrorReason::kUnspecified;
  std::string field;
  std::optional<uint64_t> current_token;
  // Words the message must contain, where it has no ErrorDetail to check.
  std::string message_has;
  // Meaningful only when the servers check signatures (--signing_keys);
  // without them such a request would be an ordinary, valid one.
  bool signed_only = false;
  // For an OK answer: checks the response's bytes; "" means as it should be.
  std::function<std::string(const std::string& response)> check_response;
};

// What the test set up before sending any bad request, which the cases
// refer to. Every token-carrying request is signed with `sign` unless the
// case is about the signature (servers without keys ignore signatures).
struct KnownState {
  // Lock service: "held" (alice, one hold), "reentrant" (bob, two holds),
  // "released" (granted, then released: free).
  uint64_t held_token = 0;
  uint64_t reentrant_token = 0;
  uint64_t released_token = 0;
  // Gateway: "data" holds keys a, b and c (one MultiWrite, at data_version)
  // and its fence is data_fence.
  uint64_t data_fence = 0;
  uint64_t data_version = 0;
  std::function<v1::TokenSignature(const std::string& resource, uint64_t token)> sign;
};

std::vector<BadRequest> LockServiceBadRequests(const KnownState& known);
std::vector<BadRequest> GatewayBadRequests(const KnownState& known);

// What differs between the answer to `c` and the documented one; "" if
// nothing does.
std::string Deviation(const BadRequest& c, const testing::RawReply& reply);

// ------------------------------------------- helpers for the case tables

inline constexpr size_t kMaxNameBytes = 256;  // both servers' default limit

// Cases from a request message; `name` is prefixed with the method's.
// INVALID_ARGUMENT naming `field`:
BadRequest Invalid(const std::string& method, const std::string& name,
                   const google::protobuf::Message& request, const std::string& field);
// ABORTED with `reason` and the current token:
BadRequest Aborted(const std::string& method, const std::string& name,
                   const google::protobuf::Message& request, ErrorReason reason,
                   uint64_t current_token);
// PERMISSION_DENIED (BAD_SIGNATURE), for servers that check signatures;
// the message must contain `message_has`:
BadRequest Unsigned(const std::string& method, const std::string& name,
                    const google::protobuf::Message& request,
                    const std::string& message_has = "");
// RESOURCE_EXHAUSTED from gRPC: the message is over its receive limit.
BadRequest Oversized(const std::string& method, const google::protobuf::Message& request);
// OK, and `check` is satisfied with the response (T: its message type).
template <typename T>
BadRequest Answered(const std::string& method, const std::string& name,
                    const google::protobuf::Message& request,
                    std::function<std::string(const T&)> check) {
  BadRequest c;
  c.name = method.substr(method.rfind('/') + 1) + ": " + name;
  c.method = method;
  c.bytes = request.SerializeAsString();
  c.code = grpc::StatusCode::OK;
  c.check_response = [check](const std::string& bytes) {
    T response;
    if (!response.ParseFromString(bytes)) return std::string("the response does not parse");
    return check(response);
  };
  return c;
}

// Signatures that must be refused where signatures are checked, for a
// token whose valid signature is `valid`: none, a forged MAC, a truncated
// one, an unknown key (also one whose id is not UTF-8), a key id with no
// MAC. `message_has`: words the refusal must contain (the field it names).
struct BadSignature {
  std::string what;
  v1::TokenSignature signature;
  std::string message_has;
};
// A key id that is not UTF-8 (nor any key's): bytes on the wire, so the
// request parses and its signature check refuses it like any unknown key.
inline const std::string kNotUtf8KeyId = "k1\xff\xfe";
std::vector<BadSignature> BadSignatures(const v1::TokenSignature& valid);

// Names that every name field must refuse, with what is wrong with them:
// too long (by one byte, and by a megabyte), not UTF-8 in six ways, and
// ASCII control characters.
struct BadName {
  std::string what;
  std::string bytes;
};
std::vector<BadName> BadNames(size_t max_bytes);

// Adds, for `method` and its request type `message` (a valid request):
// the same with an unknown field of each wire type, a known field sent
// with the wrong wire type, and bytes that do not parse in six ways.
void AddWireCases(const std::string& method, const google::protobuf::Message& message,
                  std::vector<BadRequest>& cases);

// `message` with `bytes` appended: more fields, as the wire allows.
std::string AppendRaw(const google::protobuf::Message& message, const std::string& bytes);
// The wire encoding of a field's tag, and of a varint.
std::string Tag(int number, int wire_type);
std::string Varint(uint64_t value);

}  // namespace fencegate::conformance

#endif  // FENCEGATE_TESTS_INTEGRATION_BAD_REQUESTS_H_
