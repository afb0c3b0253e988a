// The lock service's bad requests (bad_requests.h), RPC by RPC, with the
// codes of docs/errors.md and the limits of docs/semantics.md (the server
// runs with its defaults: TTL 100 ms to 1 h, wait up to 5 min, names up to
// 256 bytes, request ids up to 128, gRPC's 4 MiB receive limit).
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "fencegate/v1/lock.pb.h"
#include "tests/integration/bad_requests.h"

namespace fencegate::conformance {
namespace {

namespace v1 = ::fencegate::v1;

const std::string kAcquire = "/fencegate.v1.LockService/Acquire";
const std::string kRenew = "/fencegate.v1.LockService/Renew";
const std::string kRelease = "/fencegate.v1.LockService/Release";
const std::string kDescribe = "/fencegate.v1.LockService/Describe";
const std::string kWatchFences = "/fencegate.v1.LockService/WatchFences";
const std::string kCampaign = "/fencegate.v1.LockService/Campaign";
const std::string kProclaim = "/fencegate.v1.LockService/Proclaim";
const std::string kResign = "/fencegate.v1.LockService/Resign";
const std::string kLeader = "/fencegate.v1.LockService/Leader";
const std::string kObserve = "/fencegate.v1.LockService/Observe";

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr uint64_t kUint64Max = std::numeric_limits<uint64_t>::max();
constexpr size_t kMaxRequestIdBytes = 128;
const std::string kOversized(5 << 20, 'o');  // over gRPC's default 4 MiB

// TTLs outside 100 ms .. 1 h, and waits outside 0 .. 5 min.
const std::vector<int64_t> kBadTtls = {0, -1, 99, 3600001, kInt64Max, kInt64Min};
const std::vector<int64_t> kBadWaits = {-1, 300001, kInt64Max, kInt64Min};

void AddAcquire(const KnownState& known, std::vector<BadRequest>& cases) {
  // A request that would be granted: "probe" is never held, so a bad one
  // that got through would take a token (the test checks none was taken).
  v1::AcquireRequest base;
  base.set_resource("probe");
  base.set_holder("prober");
  base.set_ttl_ms(60000);
  cases.push_back(Invalid(kAcquire, "an empty request", v1::AcquireRequest(), "resource"));
  for (const BadName& bad : BadNames(kMaxNameBytes)) {
    v1::AcquireRequest r = base;
    r.set_resource(bad.bytes);
    cases.push_back(Invalid(kAcquire, "resource " + bad.what, r, "resource"));
    r = base;
    r.set_holder(bad.bytes);
    cases.push_back(Invalid(kAcquire, "holder " + bad.what, r, "holder"));
  }
  v1::AcquireRequest no_holder = base;
  no_holder.clear_holder();
  cases.push_back(Invalid(kAcquire, "no holder", no_holder, "holder"));
  for (const BadName& bad : BadNames(kMaxRequestIdBytes)) {
    v1::AcquireRequest r = base;
    r.set_request_id(bad.bytes);
    cases.push_back(Invalid(kAcquire, "request_id " + bad.what, r, "request_id"));
  }
  for (int64_t ttl : kBadTtls) {
    v1::AcquireRequest r = base;
    r.set_ttl_ms(ttl);
    cases.push_back(Invalid(kAcquire, absl::StrCat("ttl_ms ", ttl), r, "ttl_ms"));
  }
  for (int64_t wait : kBadWaits) {
    v1::AcquireRequest r = base;
    r.set_wait_ms(wait);
    cases.push_back(Invalid(kAcquire, absl::StrCat("wait_ms ", wait), r, "wait_ms"));
  }
  // A mode that is no LeaseMode (proto3 keeps the number as it came).
  for (int mode : {3, -1, 2147483647}) {
    v1::AcquireRequest r = base;
    r.set_mode(static_cast<v1::LeaseMode>(mode));
    cases.push_back(Invalid(kAcquire, absl::StrCat("mode ", mode), r, "mode"));
  }
  // permits: 1 to --max_holders_per_resource (10000) with PERMIT, else 0.
  struct BadPermits {
    v1::LeaseMode mode;
    uint32_t permits;
  };
  for (const BadPermits& bad :
       {BadPermits{v1::LEASE_MODE_PERMIT, 0}, BadPermits{v1::LEASE_MODE_PERMIT, 10001},
        BadPermits{v1::LEASE_MODE_PERMIT, 4294967295u},
        BadPermits{v1::LEASE_MODE_EXCLUSIVE, 1}, BadPermits{v1::LEASE_MODE_SHARED, 2}}) {
    v1::AcquireRequest r = base;
    r.set_mode(bad.mode);
    r.set_permits(bad.permits);
    cases.push_back(
        Invalid(kAcquire,
                absl::StrCat(v1::LeaseMode_Name(bad.mode), " with permits ", bad.permits),
                r, "permits"));
  }
  // Not granted is an answer, not an error (docs/errors.md).
  const uint64_t held = known.held_token;
  const auto refused = [held](const v1::AcquireResponse& r) {
    return !r.acquired() && r.reason() == v1::AcquireResponse::HELD &&
                   r.holder_token() == held && r.token() == 0
               ? ""
               : "expected acquired = false, reason HELD and the holder's token";
  };
  v1::AcquireRequest taken = base;
  taken.set_resource("held");
  taken.set_holder("mallory");
  cases.push_back(Answered<v1::AcquireResponse>(kAcquire, "a try-lock of a held resource",
                                                taken, refused));
  taken.set_request_id("mallory-1");
  cases.push_back(Answered<v1::AcquireResponse>(
      kAcquire, "a try-lock of a held resource, with a request id", taken, refused));
  taken.set_wait_ms(1);
  cases.push_back(Answered<v1::AcquireResponse>(
      kAcquire, "a 1 ms wait for a held resource runs out", taken, refused));
  v1::AcquireRequest oversized = base;
  oversized.set_resource(kOversized);
  cases.push_back(Oversized(kAcquire, oversized));
  AddWireCases(kAcquire, base, cases);
}

// What Renew and Release (a resource and the token of its lease) share
// with Proclaim and Resign (an election and the term that leads it): the
// request must name a lease (`name_field`) with a number (`number_field`)
// and, where signatures are checked, carry its own valid signature; it
// must fit gRPC's limit and be well-formed on the wire. with(name, number)
// is such a request, signed for the two.
template <typename Request, typename With>
void AddSignedLeaseCases(const std::string& method, const std::string& name_field,
                         const std::string& number_field, const KnownState& known,
                         const With& with, std::vector<BadRequest>& cases) {
  cases.push_back(Invalid(method, "an empty request", Request(), name_field));
  for (const BadName& bad : BadNames(kMaxNameBytes)) {
    cases.push_back(
        Invalid(method, name_field + " " + bad.what, with(bad.bytes, 5), name_field));
  }
  cases.push_back(Invalid(method, number_field + " 0", with("held", 0), number_field));
  for (const BadSignature& bad : BadSignatures(known.sign("held", known.held_token))) {
    Request r = with("held", known.held_token);
    *r.mutable_signature() = bad.signature;
    cases.push_back(Unsigned(method, bad.what, r, bad.message_has));
  }
  cases.push_back(Oversized(method, with(kOversized, 1)));
  // The wire cases start from a request that would be refused anyway.
  AddWireCases(method, with("released", known.released_token), cases);
}

// Renew and Release share their owner checks: a token must hold the lease
// and, where signatures are checked, carry its own valid signature.
template <typename Request>
void AddOwnerCases(const std::string& method, const KnownState& known, const Request& base,
                   std::vector<BadRequest>& cases) {
  const auto with = [&](const std::string& resource, uint64_t token) {
    Request r = base;
    r.set_resource(resource);
    r.set_token(token);
    *r.mutable_signature() = known.sign(resource, token);
    return r;
  };
  AddSignedLeaseCases<Request>(method, "resource", "token", known, with, cases);
  const ErrorReason lost = ErrorReason::kLeaseLost;
  cases.push_back(Aborted(method, "after the lease was released",
                          with("released", known.released_token), lost, 0));
  cases.push_back(Aborted(method, "a stale token of a held resource",
                          with("held", known.released_token), lost, known.held_token));
  cases.push_back(Aborted(method, "the token of another resource's lease",
                          with("held", known.reentrant_token), lost, known.held_token));
  cases.push_back(Aborted(method, "a token never issued",
                          with("held", known.held_token + 1000000), lost, known.held_token));
  cases.push_back(Aborted(method, "token 2^64-1", with("held", kUint64Max), lost,
                          known.held_token));
  cases.push_back(
      Aborted(method, "an unknown resource", with("nobody-has-this", 7), lost, 0));
  Request elsewhere = with("held", known.held_token);
  *elsewhere.mutable_signature() = known.sign("reentrant", known.held_token);
  cases.push_back(Unsigned(method, "the signature of another resource", elsewhere));
  Request other_token = with("held", known.held_token);
  *other_token.mutable_signature() = known.sign("held", known.held_token + 1);
  cases.push_back(Unsigned(method, "the signature of another token", other_token));
}

void AddRenew(const KnownState& known, std::vector<BadRequest>& cases) {
  v1::RenewRequest base;
  base.set_ttl_ms(60000);
  AddOwnerCases(kRenew, known, base, cases);
  for (int64_t ttl : kBadTtls) {
    v1::RenewRequest r = base;
    r.set_resource("held");
    r.set_token(known.held_token);
    *r.mutable_signature() = known.sign("held", known.held_token);
    r.set_ttl_ms(ttl);
    cases.push_back(Invalid(kRenew, absl::StrCat("ttl_ms ", ttl), r, "ttl_ms"));
  }
}

void AddRelease(const KnownState& known, std::vector<BadRequest>& cases) {
  AddOwnerCases(kRelease, known, v1::ReleaseRequest(), cases);
  for (const BadName& bad : BadNames(kMaxRequestIdBytes)) {
    v1::ReleaseRequest r;
    r.set_resource("held");
    r.set_token(known.held_token);
    *r.mutable_signature() = known.sign("held", known.held_token);
    r.set_request_id(bad.bytes);
    cases.push_back(Invalid(kRelease, "request_id " + bad.what, r, "request_id"));
  }
}

void AddDescribe(std::vector<BadRequest>& cases) {
  v1::DescribeRequest base;
  base.set_resource("probe");
  cases.push_back(Invalid(kDescribe, "an empty request", v1::DescribeRequest(), "resource"));
  for (const BadName& bad : BadNames(kMaxNameBytes)) {
    v1::DescribeRequest r;
    r.set_resource(bad.bytes);
    cases.push_back(Invalid(kDescribe, "resource " + bad.what, r, "resource"));
  }
  cases.push_back(Answered<v1::DescribeResponse>(
      kDescribe, "an unknown resource", base, [](const v1::DescribeResponse& r) {
        return !r.held() && r.token() == 0 && r.waiters() == 0 ? "" : "expected not held";
      }));
  v1::DescribeRequest oversized;
  oversized.set_resource(kOversized);
  cases.push_back(Oversized(kDescribe, oversized));
  AddWireCases(kDescribe, base, cases);
}

// WatchFences streams; every bad request is refused before the first
// message, so it is sent and answered like a unary call.
void AddWatchFences(std::vector<BadRequest>& cases) {
  v1::WatchFencesRequest base;
  base.set_after_position(1);
  AddWireCases(kWatchFences, base, cases);
  cases.push_back(Oversized(kWatchFences, [] {
    v1::WatchFencesRequest r;
    r.GetReflection()->MutableUnknownFields(&r)->AddLengthDelimited(2, kOversized);
    return r;
  }()));
}

// Elections (docs/semantics.md): a Campaign is checked as an Acquire, under
// its own field names; Proclaim and Resign as Renew and Release are, by
// term; a refused Observe ends before its first message.
void AddCampaign(const KnownState& known, std::vector<BadRequest>& cases) {
  v1::CampaignRequest base;  // would lead "probe", never held
  base.set_election("probe");
  base.set_candidate("prober");
  base.set_value("10.0.0.9");
  base.set_ttl_ms(60000);
  cases.push_back(
      Invalid(kCampaign, "an empty request", v1::CampaignRequest(), "election"));
  for (const BadName& bad : BadNames(kMaxNameBytes)) {
    v1::CampaignRequest r = base;
    r.set_election(bad.bytes);
    cases.push_back(Invalid(kCampaign, "election " + bad.what, r, "election"));
    r = base;
    r.set_candidate(bad.bytes);
    cases.push_back(Invalid(kCampaign, "candidate " + bad.what, r, "candidate"));
  }
  v1::CampaignRequest too_long = base;
  too_long.set_value(std::string(4097, 'v'));
  cases.push_back(Invalid(kCampaign, "a value of 4097 bytes", too_long, "value"));
  for (int64_t ttl : kBadTtls) {
    v1::CampaignRequest r = base;
    r.set_ttl_ms(ttl);
    cases.push_back(Invalid(kCampaign, absl::StrCat("ttl_ms ", ttl), r, "ttl_ms"));
  }
  for (int64_t wait : kBadWaits) {
    v1::CampaignRequest r = base;
    r.set_wait_ms(wait);
    cases.push_back(Invalid(kCampaign, absl::StrCat("wait_ms ", wait), r, "wait_ms"));
  }
  v1::CampaignRequest led = base;
  led.set_election("held");
  const uint64_t held = known.held_token;
  cases.push_back(Answered<v1::AcquireResponse>(
      kCampaign, "a held resource leads already", led,
      [held](const v1::AcquireResponse& r) {
        return !r.acquired() && r.holder_token() == held
                   ? ""
                   : "expected acquired = false and the leader's term";
      }));
  v1::CampaignRequest oversized = base;
  oversized.set_value(kOversized);
  cases.push_back(Oversized(kCampaign, oversized));
  AddWireCases(kCampaign, too_long, cases);
}

// Proclaim and Resign: the term must lead the election, with its own
// signature where signatures are checked.
template <typename Request>
void AddTermCases(const std::string& method, const KnownState& known, const Request& base,
                  std::vector<BadRequest>& cases) {
  const auto with = [&](const std::string& election, uint64_t term) {
    Request r = base;
    r.set_election(election);
    r.set_term(term);
    *r.mutable_signature() = known.sign(election, term);
    return r;
  };
  AddSignedLeaseCases<Request>(method, "election", "term", known, with, cases);
  const ErrorReason lost = ErrorReason::kLeaseLost;
  cases.push_back(Aborted(method, "a deposed leader's term",
                          with("held", known.released_token), lost, known.held_token));
  cases.push_back(Aborted(method, "a term of an election nobody leads",
                          with("released", known.released_token), lost, 0));
}

void AddProclaim(const KnownState& known, std::vector<BadRequest>& cases) {
  v1::ProclaimRequest base;
  base.set_value("10.0.0.9");
  AddTermCases(kProclaim, known, base, cases);
  v1::ProclaimRequest too_long = base;
  too_long.set_election("released");
  too_long.set_term(known.released_token);
  *too_long.mutable_signature() = known.sign("released", known.released_token);
  too_long.set_value(std::string(4097, 'v'));
  cases.push_back(Invalid(kProclaim, "a value of 4097 bytes", too_long, "value"));
}

void AddLeaderAndObserve(std::vector<BadRequest>& cases) {
  v1::LeaderRequest base;
  base.set_election("probe");
  cases.push_back(Invalid(kLeader, "an empty request", v1::LeaderRequest(), "election"));
  v1::ObserveRequest observe;
  cases.push_back(Invalid(kObserve, "an empty request", observe, "election"));
  for (const BadName& bad : BadNames(kMaxNameBytes)) {
    v1::LeaderRequest r;
    r.set_election(bad.bytes);
    cases.push_back(Invalid(kLeader, "election " + bad.what, r, "election"));
    observe.set_election(bad.bytes);
    cases.push_back(Invalid(kObserve, "election " + bad.what, observe, "election"));
  }
  cases.push_back(Answered<v1::LeaderResponse>(
      kLeader, "an election nobody leads", base, [](const v1::LeaderResponse& r) {
        return !r.state().leader() && r.state().term() == 0 ? "" : "expected no leader";
      }));
  v1::LeaderRequest oversized;
  oversized.set_election(kOversized);
  cases.push_back(Oversized(kLeader, oversized));
  AddWireCases(kLeader, base, cases);
}

}  // namespace

std::vector<BadRequest> LockServiceBadRequests(const KnownState& known) {
  std::vector<BadRequest> cases;
  AddAcquire(known, cases);
  AddRenew(known, cases);
  AddRelease(known, cases);
  AddDescribe(cases);
  AddWatchFences(cases);
  AddCampaign(known, cases);
  AddProclaim(known, cases);
  AddTermCases(kResign, known, v1::ResignRequest(), cases);
  AddLeaderAndObserve(cases);
  return cases;
}

}  // namespace fencegate::conformance
