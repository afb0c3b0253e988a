// RawUnaryCall: one unary call of `method` ("/package.Service/Method") on
// `channel` with `request` as the message's bytes, whatever they are: a
// request no generated stub could send (bytes that do not parse, fields the
// server does not know), or one for a service with no C++ stub here (gRPC's
// health service). Returns the status and the response's bytes.
// RawStreamingCall: the same for a bidirectional (or client-) stream: sends
// every request, half-closes, and returns every response and the status.
//
// Thread-safe; each blocks until the call ends, at most `timeout`.
#ifndef FENCEGATE_TESTS_TESTING_RAW_CALL_H_
#define FENCEGATE_TESTS_TESTING_RAW_CALL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "grpcpp/support/status.h"

namespace fencegate::testing {

struct RawReply {
  grpc::Status status;
  std::string response;  // the message's bytes when status is OK
};

RawReply RawUnaryCall(const std::shared_ptr<grpc::Channel>& channel,
                      const std::string& method, const std::string& request,
                      absl::Duration timeout = absl::Seconds(30));

struct RawStreamReply {
  grpc::Status status;
  std::vector<std::string> responses;
};

RawStreamReply RawStreamingCall(const std::shared_ptr<grpc::Channel>& channel,
                                const std::string& method,
                                const std::vector<std::string>& requests,
                                absl::Duration timeout = absl::Seconds(30));

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_TESTING_RAW_CALL_H_
