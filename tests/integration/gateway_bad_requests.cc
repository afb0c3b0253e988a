// The gateway's bad requests (bad_requests.h), RPC by RPC, with the codes
// of docs/errors.md and the limits of docs/gateway.md (the server runs with
// its defaults: names up to 256 bytes, keys up to 1024, values up to 1 MiB,
// 128 mutations and 8 MiB per MultiWrite, pages up to 1000, tokens up to
// 2^63-1, and a receive limit of 8 MiB + 1 MiB + 64 KiB).
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "fencegate/v1/gateway.pb.h"
#include "tests/integration/bad_requests.h"

namespace fencegate::conformance {
namespace {

namespace v1 = ::fencegate::v1;

const std::string kWrite = "/fencegate.v1.Gateway/Write";
const std::string kMultiWrite = "/fencegate.v1.Gateway/MultiWrite";
const std::string kRead = "/fencegate.v1.Gateway/Read";
const std::string kFence = "/fencegate.v1.Gateway/Fence";
const std::string kList = "/fencegate.v1.Gateway/List";
const std::string kGatewayDescribe = "/fencegate.v1.Gateway/Describe";

constexpr size_t kMaxKeyBytes = 1024;
constexpr size_t kMaxValueBytes = 1 << 20;
const std::string kGatewayOversized(10 << 20, 'o');  // over the 9 MiB + 64 KiB limit
// Tokens the gateway never accepts: 0, and above 2^63-1.
const std::vector<uint64_t> kBadTokens = {0, uint64_t{1} << 63,
                                          std::numeric_limits<uint64_t>::max()};

// Sets resource, token and a valid signature on a request that has them.
template <typename Request>
Request With(const KnownState& known, Request r, const std::string& resource,
             uint64_t token) {
  r.set_resource(resource);
  r.set_token(token);
  *r.mutable_signature() = known.sign(resource, token);
  return r;
}

// Every fenced RPC: tokens out of range, stale, and badly signed.
template <typename Request>
void AddTokenCases(const std::string& method, const KnownState& known, const Request& base,
                   std::vector<BadRequest>& cases) {
  for (uint64_t token : kBadTokens) {
    if (token == 0 && method == kRead) continue;  // a plain read
    cases.push_back(Invalid(method, absl::StrCat("token ", token),
                            With(known, base, "data", token), "token"));
  }
  const uint64_t fence = known.data_fence;
  cases.push_back(Aborted(method, "a token one below the fence",
                          With(known, base, "data", fence - 1), ErrorReason::kStaleToken,
                          fence));
  cases.push_back(Aborted(method, "token 1", With(known, base, "data", 1),
                          ErrorReason::kStaleToken, fence));
  for (const BadSignature& bad : BadSignatures(known.sign("data", fence))) {
    Request r = With(known, base, "data", fence);
    *r.mutable_signature() = bad.signature;
    cases.push_back(Unsigned(method, bad.what, r, bad.message_has));
  }
  Request elsewhere = With(known, base, "data", fence);
  *elsewhere.mutable_signature() = known.sign("other", fence);
  cases.push_back(Unsigned(method, "the signature of another resource", elsewhere));
  Request raised = With(known, base, "data", fence + 1);
  *raised.mutable_signature() = known.sign("data", fence);
  cases.push_back(Unsigned(method, "a raised token with the old one's signature", raised));
  // Lease modes (docs/gateway.md, "Shared tokens"): a permit's token and an
  // unknown mode everywhere, a shared lease's token for a write or fence.
  Request permit = With(known, base, "data", fence);
  permit.set_mode(v1::LEASE_MODE_PERMIT);
  cases.push_back(Invalid(method, "a permit's token", permit, "mode"));
  Request unknown_mode = With(known, base, "data", fence);
  unknown_mode.set_mode(static_cast<v1::LeaseMode>(7));
  cases.push_back(Invalid(method, "mode 7", unknown_mode, "mode"));
  Request shared = With(known, base, "data", fence);
  shared.set_mode(v1::LEASE_MODE_SHARED);
  if (method != kRead) {
    cases.push_back(Invalid(method, "a shared lease's token", shared, "mode"));
  } else {
    // An exclusive token's signature does not hold for a shared lease's.
    cases.push_back(Unsigned(method, "an exclusive signature sent with mode SHARED", shared));
  }
  v1::TokenSignature extra = known.sign("data", fence);
  extra.GetReflection()->MutableUnknownFields(&extra)->AddVarint(9, 1);
  Request unknown = With(known, base, "data", fence);
  *unknown.mutable_signature() = extra;
  cases.push_back(Invalid(method, "an unknown field in the signature", unknown,
                          "TokenSignature.9"));
}

// Every RPC: names, the empty request, the size limit and the wire.
template <typename Request>
void AddCommonCases(const std::string& method, const Request& base,
                    std::vector<BadRequest>& cases) {
  cases.push_back(Invalid(method, "an empty request", Request(), "resource"));
  for (const BadName& bad : BadNames(kMaxNameBytes)) {
    Request r = base;
    r.set_resource(bad.bytes);
    cases.push_back(Invalid(method, "resource " + bad.what, r, "resource"));
  }
  Request oversized = base;
  oversized.set_resource(kGatewayOversized);
  cases.push_back(Oversized(method, oversized));
  AddWireCases(method, base, cases);
}

v1::Mutation Put(const std::string& key, const std::string& value) {
  v1::Mutation m;
  m.set_key(key);
  m.set_value(value);
  return m;
}

void AddWrite(const KnownState& known, std::vector<BadRequest>& cases) {
  // A write that would be accepted: a bad one that got through would
  // change "data" (the test checks nothing did).
  v1::WriteRequest base = With(known, v1::WriteRequest(), "data", known.data_fence);
  *base.mutable_mutation() = Put("probe", "x");
  AddCommonCases(kWrite, base, cases);
  AddTokenCases(kWrite, known, base, cases);
  const auto with = [&](v1::Mutation m) {
    v1::WriteRequest r = base;
    *r.mutable_mutation() = std::move(m);
    return r;
  };
  v1::WriteRequest none = base;
  none.clear_mutation();
  cases.push_back(Invalid(kWrite, "no mutation", none, "mutation"));
  v1::Mutation unset;
  unset.set_key("probe");
  cases.push_back(Invalid(kWrite, "a mutation with neither value nor delete", with(unset),
                          "mutation"));
  unset.set_delete_(false);
  cases.push_back(Invalid(kWrite, "delete = false", with(unset), "mutation"));
  cases.push_back(Invalid(kWrite, "an empty key", with(Put("", "x")), "mutation.key"));
  for (const BadName& bad : BadNames(kMaxKeyBytes)) {
    cases.push_back(Invalid(kWrite, "key " + bad.what, with(Put(bad.bytes, "x")),
                            "mutation.key"));
  }
  cases.push_back(Invalid(kWrite, "a value one byte over 1 MiB",
                          with(Put("probe", std::string(kMaxValueBytes + 1, 'v'))),
                          "mutation.value"));
  v1::Mutation cas = Put("a", "changed");
  cas.set_expected_version(known.data_version + 1);
  cases.push_back(Aborted(kWrite, "an expected version that is not the key's", with(cas),
                          ErrorReason::kVersionMismatch, known.data_fence));
  cas.set_expected_version(0);
  cases.push_back(Aborted(kWrite, "expected version 0 (absent) of a present key", with(cas),
                          ErrorReason::kVersionMismatch, known.data_fence));
  v1::WriteRequest stale_cas = With(known, with(cas), "data", known.data_fence - 1);
  cases.push_back(Aborted(kWrite, "stale and mismatched: stale is reported", stale_cas,
                          ErrorReason::kStaleToken, known.data_fence));
  v1::Mutation extra = Put("probe", "x");
  extra.GetReflection()->MutableUnknownFields(&extra)->AddVarint(42, 7);
  cases.push_back(Invalid(kWrite, "an unknown field in the mutation", with(extra),
                          "Mutation.42"));
}

void AddMultiWrite(const KnownState& known, std::vector<BadRequest>& cases) {
  v1::MultiWriteRequest base = With(known, v1::MultiWriteRequest(), "data", known.data_fence);
  *base.add_mutations() = Put("probe", "x");
  *base.add_mutations() = Put("probe2", "y");
  AddCommonCases(kMultiWrite, base, cases);
  AddTokenCases(kMultiWrite, known, base, cases);
  const auto with = [&](std::vector<v1::Mutation> ms) {
    v1::MultiWriteRequest r = base;
    r.clear_mutations();
    for (v1::Mutation& m : ms) *r.add_mutations() = std::move(m);
    return r;
  };
  cases.push_back(Invalid(kMultiWrite, "no mutations", with({}), "mutations"));
  std::vector<v1::Mutation> many;
  for (int i = 0; i < 129; ++i) many.push_back(Put(absl::StrCat("k", i), "v"));
  cases.push_back(Invalid(kMultiWrite, "129 mutations", with(many), "mutations"));
  std::vector<v1::Mutation> heavy;  // 9 MiB: under the receive limit, over 8 MiB
  for (int i = 0; i < 9; ++i) heavy.push_back(Put(absl::StrCat("k", i), std::string(kMaxValueBytes, 'v')));
  cases.push_back(Invalid(kMultiWrite, "9 MiB of values", with(heavy), "mutations"));
  cases.push_back(Invalid(kMultiWrite, "the same key twice",
                          with({Put("a", "1"), Put("a", "2")}), "mutations[1].key"));
  cases.push_back(Invalid(kMultiWrite, "an empty second key",
                          with({Put("a", "1"), Put("", "2")}), "mutations[1].key"));
  v1::Mutation unset;
  unset.set_key("c");
  cases.push_back(Invalid(kMultiWrite, "a third mutation with neither value nor delete",
                          with({Put("a", "1"), Put("b", "2"), unset}), "mutations[2]"));
  cases.push_back(Invalid(kMultiWrite, "a second value over 1 MiB",
                          with({Put("a", "1"), Put("b", std::string(kMaxValueBytes + 1, 'v'))}),
                          "mutations[1].value"));
  for (const BadName& bad : BadNames(kMaxKeyBytes)) {
    cases.push_back(Invalid(kMultiWrite, "first key " + bad.what,
                            with({Put(bad.bytes, "1"), Put("b", "2")}), "mutations[0].key"));
  }
  v1::Mutation cas = Put("b", "changed");
  cas.set_expected_version(known.data_version + 1);
  cases.push_back(Aborted(kMultiWrite, "a mismatched second mutation: none is applied",
                          with({Put("a", "changed"), cas}), ErrorReason::kVersionMismatch,
                          known.data_fence));
  v1::Mutation extra = Put("b", "2");
  extra.GetReflection()->MutableUnknownFields(&extra)->AddVarint(42, 7);
  cases.push_back(Invalid(kMultiWrite, "an unknown field in the second mutation",
                          with({Put("a", "1"), extra}), "Mutation.42"));
}

void AddRead(const KnownState& known, std::vector<BadRequest>& cases) {
  v1::ReadRequest base;  // a plain read
  base.set_resource("data");
  base.set_key("a");
  AddCommonCases(kRead, base, cases);
  v1::ReadRequest fenced = With(known, base, "data", known.data_fence);
  AddTokenCases(kRead, known, fenced, cases);
  cases.push_back(Invalid(kRead, "an empty key", [&] {
    v1::ReadRequest r = base;
    r.clear_key();
    return r;
  }(), "key"));
  for (const BadName& bad : BadNames(kMaxKeyBytes)) {
    v1::ReadRequest r = base;
    r.set_key(bad.bytes);
    cases.push_back(Invalid(kRead, "key " + bad.what, r, "key"));
  }
  const uint64_t fence = known.data_fence;
  v1::ReadRequest unknown = base;
  unknown.set_resource("nothing-here");
  cases.push_back(Answered<v1::ReadResponse>(
      kRead, "an unknown resource", unknown, [](const v1::ReadResponse& r) {
        return !r.found() && r.max_token() == 0 ? "" : "expected not found, fence 0";
      }));
  v1::ReadRequest absent = base;
  absent.set_key("no-such-key");
  cases.push_back(Answered<v1::ReadResponse>(
      kRead, "an unknown key", absent, [fence](const v1::ReadResponse& r) {
        return !r.found() && r.version() == 0 && r.max_token() == fence
                   ? ""
                   : "expected not found, version 0, the fence";
      }));
  cases.push_back(Answered<v1::ReadResponse>(
      kRead, "a fenced read at the fence changes nothing", fenced,
      [fence](const v1::ReadResponse& r) {
        return r.found() && r.max_token() == fence ? "" : "expected found, the fence";
      }));
  v1::ReadRequest plain_forged = base;
  plain_forged.mutable_signature()->set_key_id("no-such-key");
  plain_forged.mutable_signature()->set_mac(std::string(32, '\0'));
  cases.push_back(Answered<v1::ReadResponse>(
      kRead, "a plain read ignores a signature", plain_forged,
      [](const v1::ReadResponse& r) { return r.found() ? "" : "expected found"; }));
  plain_forged.mutable_signature()->set_key_id(kNotUtf8KeyId);
  cases.push_back(Answered<v1::ReadResponse>(
      kRead, "a plain read ignores a signature whose key id is not UTF-8", plain_forged,
      [](const v1::ReadResponse& r) { return r.found() ? "" : "expected found"; }));
}

void AddFence(const KnownState& known, std::vector<BadRequest>& cases) {
  v1::FenceRequest base = With(known, v1::FenceRequest(), "data", known.data_fence);
  AddCommonCases(kFence, base, cases);
  AddTokenCases(kFence, known, base, cases);
  const uint64_t fence = known.data_fence;
  cases.push_back(Answered<v1::FenceResponse>(
      kFence, "a fence at the fence changes nothing", base,
      [fence](const v1::FenceResponse& r) {
        return r.max_token() == fence ? "" : "expected the fence";
      }));
}

void AddList(std::vector<BadRequest>& cases) {
  v1::ListRequest base;
  base.set_resource("data");
  AddCommonCases(kList, base, cases);
  for (uint32_t size : {1001u, std::numeric_limits<uint32_t>::max()}) {
    v1::ListRequest r = base;
    r.set_page_size(size);
    cases.push_back(Invalid(kList, absl::StrCat("page_size ", size), r, "page_size"));
  }
  for (const BadName& bad : BadNames(kMaxKeyBytes)) {
    v1::ListRequest r = base;
    r.set_page_token(bad.bytes);
    cases.push_back(Invalid(kList, "page_token " + bad.what, r, "page_token"));
  }
  v1::ListRequest unknown = base;
  unknown.set_resource("nothing-here");
  const auto empty = [](const v1::ListResponse& r) {
    return r.keys_size() == 0 && r.next_page_token().empty() ? "" : "expected no keys";
  };
  cases.push_back(Answered<v1::ListResponse>(kList, "an unknown resource", unknown, empty));
  v1::ListRequest past = base;
  past.set_page_token("zzz");
  cases.push_back(Answered<v1::ListResponse>(kList, "a page past the last key", past, empty));
}

void AddGatewayDescribe(std::vector<BadRequest>& cases) {
  v1::DescribeResourceRequest base;
  base.set_resource("data");
  AddCommonCases(kGatewayDescribe, base, cases);
  v1::DescribeResourceRequest unknown;
  unknown.set_resource("nothing-here");
  cases.push_back(Answered<v1::DescribeResourceResponse>(
      kGatewayDescribe, "an unknown resource", unknown, [](const v1::DescribeResourceResponse& r) {
        return r.max_token() == 0 && r.key_count() == 0 ? "" : "expected zeros";
      }));
}

}  // namespace

std::vector<BadRequest> GatewayBadRequests(const KnownState& known) {
  std::vector<BadRequest> cases;
  AddWrite(known, cases);
  AddMultiWrite(known, cases);
  AddRead(known, cases);
  AddFence(known, cases);
  AddList(cases);
  AddGatewayDescribe(cases);
  return cases;
}

}  // namespace fencegate::conformance
