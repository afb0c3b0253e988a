// The election calls between protos and the manager (election_requests.h).
#include "lockservice/core/election_requests.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/core/validation.h"
#include "fencegate/lease_mode.h"

namespace fencegate::lockservice {

namespace v1 = ::fencegate::v1;

absl::StatusOr<AcquireArgs> CampaignArgsFor(const v1::CampaignRequest& request,
                                            const TokenSigner* signer,
                                            const LockLimits& limits,
                                            const Caller& caller) {
  absl::Status s =
      ValidateName("election", request.election(), limits.max_resource_bytes);
  if (s.ok() && !(caller.mutual_tls && request.candidate().empty())) {
    s = ValidateName("candidate", request.candidate(), limits.max_holder_bytes);
  }
  if (!s.ok()) return s;
  v1::AcquireRequest acquire;
  acquire.set_resource(request.election());
  acquire.set_holder(request.candidate());
  acquire.set_ttl_ms(request.ttl_ms());
  acquire.set_wait_ms(request.wait_ms());
  acquire.set_request_id(request.request_id());
  absl::StatusOr<AcquireArgs> args = AcquireArgsFor(acquire, signer, caller);
  if (args.ok()) args->campaign = request.value();
  return args;
}

absl::StatusOr<ProclaimArgs> ProclaimArgsFor(const v1::ProclaimRequest& request,
                                             const TokenSigner* signer,
                                             const LockLimits& limits,
                                             const Caller& caller) {
  absl::Status verified =
      CheckTokenSignature(signer, limits, request.election(), request.term(),
                          v1::LEASE_MODE_EXCLUSIVE, request.signature());
  if (!verified.ok()) return verified;
  ProclaimArgs args;
  args.resource = request.election();
  args.token = request.term();
  args.value = request.value();
  args.caller = caller.subject;
  return args;
}

absl::StatusOr<ReleaseArgs> ResignArgsFor(const v1::ResignRequest& request,
                                          const TokenSigner* signer,
                                          const LockLimits& limits,
                                          const Caller& caller) {
  absl::Status s =
      ValidateName("election", request.election(), limits.max_resource_bytes);
  if (s.ok()) s = ValidateToken("term", request.term());
  if (s.ok()) {
    s = CheckTokenSignature(signer, limits, request.election(), request.term(),
                            v1::LEASE_MODE_EXCLUSIVE, request.signature());
  }
  if (!s.ok()) return s;
  ReleaseArgs args;
  args.resource = request.election();
  args.token = request.term();
  args.caller = caller.subject;
  args.resign = true;
  return args;
}

void FillElectionChange(const ElectionChange& change, v1::ElectionChange* out) {
  out->set_election(change.election);
  out->set_leader(change.leader);
  out->set_term(change.term);
  out->set_seq(change.seq);
  out->set_value(change.value);
  out->set_candidate(change.holder);
  out->set_remaining_ms(absl::ToInt64Milliseconds(change.remaining));
  out->set_changed_at_unix_ms(absl::ToUnixMillis(change.at));
}

bool NewToObserver(const ElectionChange& change, uint64_t after_term,
                   uint64_t after_seq) {
  if (after_term == 0 && after_seq == 0) return true;  // it has seen nothing yet
  if (change.term != after_term) {
    return change.term > after_term || (!change.leader && change.term == 0);
  }
  return change.seq > after_seq;
}

}  // namespace fencegate::lockservice
