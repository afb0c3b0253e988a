// Calls on a FencedStore (gateway/fenced_store.h) from tests: a mutation
// that owns its bytes (M, Put, Del, Unset), and StartWrite/StartRead/
// StartFence, which make a request and return its Reply, which owns the
// bytes the request's string_views point at until the reply has come.
//
// Thread safety: free functions; the replies are filled on the store's
// writer thread (or the caller's, for plain reads and errors).
#ifndef FENCEGATE_TESTS_UNIT_FENCED_STORE_CALLS_H_
#define FENCEGATE_TESTS_UNIT_FENCED_STORE_CALLS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fencegate/token_signature.h"
#include "gateway/fenced_store.h"
#include "gateway/storage_backend.h"
#include "tests/testing/reply.h"

namespace fencegate::gateway {

using ::fencegate::testing::Reply;
using ::fencegate::testing::ReplyPtr;

// What a request says of its token besides the number: the mode of its
// lease (the wire's LeaseMode value: 0 exclusive, 1 shared, 2 permit) and
// its signature (empty: unsigned).
struct Claim {
  int mode = 0;
  TokenSignature signature;
};
inline Claim Shared(TokenSignature signature = {}) {
  return Claim{1, std::move(signature)};
}

// The request's view of `claim`'s signature, kept alive by `reply`.
template <typename T>
SignatureView KeepSignature(Reply<T>& reply, const Claim& claim) {
  return SignatureView{reply.Keep(claim.signature.key_id),
                       reply.Keep(claim.signature.mac)};
}

// A mutation that owns its bytes.
struct M {
  Mutation::Kind kind = Mutation::Kind::kUnset;
  std::string key;
  std::string value;
  std::optional<uint64_t> expected;
};
inline M Put(std::string key, std::string value,
             std::optional<uint64_t> expected = std::nullopt) {
  return M{Mutation::Kind::kPut, std::move(key), std::move(value), expected};
}
inline M Del(std::string key, std::optional<uint64_t> expected = std::nullopt) {
  return M{Mutation::Kind::kDelete, std::move(key), "", expected};
}
inline M Unset(std::string key) {
  return M{Mutation::Kind::kUnset, std::move(key), "", std::nullopt};
}

// Write (multi = false: one mutation) or MultiWrite.
inline ReplyPtr<WriteResult> StartWrite(FencedStore& store, absl::string_view resource,
                                        uint64_t token, const std::vector<M>& mutations,
                                        bool multi, const Claim& claim = {}) {
  auto reply = std::make_shared<Reply<WriteResult>>();
  WriteArgs args;
  args.resource = reply->Keep(resource);
  args.token = token;
  args.signature = KeepSignature(*reply, claim);
  args.mode = claim.mode;
  args.multi = multi;
  for (const M& m : mutations) {
    Mutation& out = args.mutations.emplace_back();
    out.kind = m.kind;
    out.key = reply->Keep(m.key);
    out.value = reply->Keep(m.value);
    out.expected_version = m.expected;
  }
  store.Write(std::move(args),
              [reply](absl::StatusOr<WriteResult> r) { reply->Set(std::move(r)); });
  return reply;
}

// token 0: a plain read; > 0: a fenced read.
inline ReplyPtr<ReadResult> StartRead(FencedStore& store, absl::string_view resource,
                                      absl::string_view key, uint64_t token,
                                      const Claim& claim = {}) {
  auto reply = std::make_shared<Reply<ReadResult>>();
  ReadArgs args{reply->Keep(resource), reply->Keep(key), token,
                KeepSignature(*reply, claim), claim.mode};
  store.Read(args, [reply](absl::StatusOr<ReadResult> r) { reply->Set(std::move(r)); });
  return reply;
}

inline ReplyPtr<FenceResult> StartFence(FencedStore& store, absl::string_view resource,
                                        uint64_t token, const Claim& claim = {}) {
  auto reply = std::make_shared<Reply<FenceResult>>();
  FenceArgs args{reply->Keep(resource), token, KeepSignature(*reply, claim), claim.mode};
  store.Fence(args, [reply](absl::StatusOr<FenceResult> r) { reply->Set(std::move(r)); });
  return reply;
}

}  // namespace fencegate::gateway

#endif  // FENCEGATE_TESTS_UNIT_FENCED_STORE_CALLS_H_
