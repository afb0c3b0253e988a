// The worker's election round and its observer (worker.h): a candidate that
// campaigns, proclaims, increments the election's counter with its term and
// proclaims again, and a thread that records every change of the election
// it is told, for the checker's election invariants (election_checker.h).
#include <utility>

#include "absl/random/distributions.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "fencegate/client/errors.h"
#include "tests/torture/worker.h"
#include "tests/torture/worker_fields.h"

namespace fencegate::torture {

void Worker::ElectRound(const std::string& holder) {
  const client::AcquireOptions acquire = DrawAcquireOptions();
  // Every value names its round and its place in it, so the checker knows
  // which call said what.
  const std::string first = absl::StrCat(holder, "/0");
  Fields fields = AcquireFields(options_.election, holder, acquire);
  fields.push_back({"campaign", first});
  SetPhase(WorkerPhase::kAcquiring);
  const uint64_t op = history_->Invoke("acquire", fields);
  client::CampaignOptions campaign;
  campaign.ttl = acquire.ttl;
  campaign.wait = acquire.wait;
  absl::StatusOr<std::unique_ptr<client::Leadership>> leading =
      lock_->Campaign(options_.election, holder, first, campaign);
  if (!leading.ok()) {
    RecordNotAcquired({op}, leading.status());
    return;
  }
  history_->Complete(op, "acquire", Outcome::kOk, {{"token", Str((*leading)->term())}});
  Holding((*leading)->lease(), ElectionIndex(options_), acquire.ttl);
  Proclaim(**leading, absl::StrCat(holder, "/1"));
  Increment((*leading)->lease());  // [stops at its worst moment if asked]
  // Late if it was stopped: then its term has ended, and this must be refused.
  Proclaim(**leading, absl::StrCat(holder, "/2"));
  SetPhase(WorkerPhase::kReleasing);
  const bool resign = absl::Bernoulli(random_, 0.5);
  const uint64_t end = history_->Invoke("release", {{"resource", options_.election},
                                                    {"token", Str((*leading)->term())},
                                                    {"resign", resign ? "1" : "0"}});
  absl::Status ended = resign ? (*leading)->Resign() : (*leading)->lease().Release();
  history_->Complete(end, "release", ended.ok() ? Outcome::kOk : Outcome::kUnknown,
                     {{"error", ended.ok() ? "" : ErrorText(ended)}});
  leading->reset();
  control().holding.store(0);
  control().token.store(0);
}

void Worker::Proclaim(client::Leadership& leading, const std::string& value) {
  const uint64_t op = history_->Invoke(
      "proclaim",
      {{"election", options_.election}, {"term", Str(leading.term())}, {"value", value}});
  // Straight to the service, whatever this client thinks of its lease (the
  // service must refuse a term that has ended), in one attempt (proclaims_).
  absl::StatusOr<uint64_t> seq = proclaims_->Proclaim(options_.election, leading.term(),
                                                      value, leading.lease().signature());
  if (seq.ok()) {
    history_->Complete(op, "proclaim", Outcome::kOk, {{"seq", Str(*seq)}});
    return;
  }
  const Outcome outcome = FailureOutcome(seq.status());
  history_->Complete(op, "proclaim", outcome, {{"error", ErrorText(seq.status())}});
  if (outcome == Outcome::kUnknown) Backoff();
}

void Worker::Observe() {
  uint64_t after_term = 0;
  uint64_t after_seq = 0;
  while (control().quit.load() == 0) {
    // A second at a time, so that it sees quit; each call resumes after
    // the last change seen (and reopens the stream itself after
    // UNAVAILABLE or RESOURCE_EXHAUSTED).
    absl::Status status = lock_->Observe(
        options_.election,
        [&](const client::ElectionState& state) {
          history_->Seen(options_.election, {{"leader", state.leader ? "1" : "0"},
                                             {"term", Str(state.term)},
                                             {"seq", Str(state.seq)},
                                             {"value", state.value},
                                             {"candidate", state.candidate}});
          after_term = state.term;
          after_seq = state.seq;
          return control().quit.load() == 0;
        },
        absl::Seconds(1), after_term, after_seq);
    if (!status.ok()) {
      history_->Note("observe-error", {{"error", ErrorText(status)}});
      // The service refused (e.g. a call cut off by a deadline while it
      // restarts): a short pause, as after any unknown outcome.
      absl::SleepFor(absl::Milliseconds(100));
    }
  }
}

}  // namespace fencegate::torture
