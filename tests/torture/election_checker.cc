#include "tests/torture/election_checker.h"

#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"

namespace fencegate::torture {
namespace {

// Per invariant and election, report this many cases in full.
constexpr int kMaxReportedPerElection = 5;

class ElectionChecker {
 public:
  ElectionChecker(const History& history, CheckResult* result)
      : h_(history), result_(result) {}

  void Run() {
    Index();
    CheckOrder();
    CheckValues();
  }

 private:
  using TermSeq = std::pair<uint64_t, uint64_t>;

  void Report(const char* invariant, const std::string& election, std::string detail) {
    int& reported = reported_[{invariant, election}];
    if (++reported > kMaxReportedPerElection) return;
    if (reported == kMaxReportedPerElection)
      absl::StrAppend(&detail, " (further cases not shown)");
    result_->violations.push_back(Violation{invariant, std::move(detail)});
  }

  static std::string Said(const ObservedChange& c) {
    return absl::StrCat(
        "term ", c.term, " seq ", c.seq, ": ",
        c.leader ? absl::StrCat("'", c.candidate, "' leads saying '", c.value, "'")
                 : std::string("nobody leads"));
  }

  // The campaigns by candidate (a holder campaigns once: fresh each round)
  // and the proclaims by value (never said twice), with the counts.
  void Index() {
    CheckStats& s = result_->stats;
    for (const AcquireOp& op : h_.acquires) {
      if (!op.campaign) continue;
      campaigns_[op.holder] = &op;
      s.terms += op.outcome == Outcome::kOk;
    }
    for (const ProclaimOp& op : h_.proclaims) {
      proclaims_[op.value] = &op;
      ++(op.outcome == Outcome::kOk        ? s.proclaims_ok
         : op.outcome == Outcome::kRefused ? s.proclaims_refused
                                           : s.proclaims_unknown);
    }
    s.changes_observed = static_cast<int>(h_.observed.size());
  }

  // election-changes-in-order.
  void CheckOrder() {
    // The last (term, seq) each observer was told, by (process, election).
    std::map<std::pair<std::string, std::string>, const ObservedChange*> last;
    for (const ObservedChange& c : h_.observed) {
      // Nobody leading and the ended term not known (term 0) says nothing
      // about order: a service that restarted knows no ended term.
      if (c.term == 0) continue;
      const ObservedChange*& before = last[{c.process, c.election}];
      if (before != nullptr &&
          TermSeq{c.term, c.seq} <= TermSeq{before->term, before->seq}) {
        Report(kElectionChangesInOrder, c.election,
               absl::StrCat(c.process, " was told '", c.election, "' ", Said(c),
                            " after ", Said(*before)));
      }
      before = &c;
      auto [it, first] = told_.try_emplace({c.election, c.term, c.seq}, &c);
      const ObservedChange& other = *it->second;
      if (!first && (other.leader != c.leader || other.value != c.value ||
                     other.candidate != c.candidate)) {
        Report(kElectionChangesInOrder, c.election,
               absl::StrCat("observers disagree on '", c.election, "': ", other.process,
                            " was told ", Said(other), ", ", c.process, " was told ",
                            Said(c)));
      }
    }
  }

  // election-values-from-their-term.
  void CheckValues() {
    std::map<std::tuple<std::string, uint64_t, uint64_t>, const ProclaimOp*> acknowledged;
    for (const ProclaimOp& op : h_.proclaims) {
      if (op.outcome == Outcome::kOk) acknowledged[{op.election, op.term, op.seq}] = &op;
    }
    for (const ObservedChange& c : h_.observed) {
      if (!c.leader) continue;
      if (c.seq == 0) {
        CheckFirstValue(c);
        continue;
      }
      auto it = proclaims_.find(c.value);
      const ProclaimOp* proclaim = it == proclaims_.end() ? nullptr : it->second;
      if (proclaim == nullptr || proclaim->election != c.election ||
          proclaim->term != c.term || proclaim->outcome == Outcome::kRefused) {
        Report(
            kElectionValuesFromTheirTerm, c.election,
            absl::StrCat(c.process, " was told '", c.election, "' ", Said(c), ", but ",
                         proclaim == nullptr
                             ? std::string("no Proclaim said that value")
                             : absl::StrCat(proclaim->process,
                                            " proclaimed it with term ", proclaim->term,
                                            " (", OutcomeName(proclaim->outcome), ")")));
      }
      auto ack = acknowledged.find({c.election, c.term, c.seq});
      if (ack != acknowledged.end() && ack->second->value != c.value) {
        Report(kElectionValuesFromTheirTerm, c.election,
               absl::StrCat(ack->second->process, "'s Proclaim of '", ack->second->value,
                            "' in term ", c.term, " was acknowledged as seq ", c.seq,
                            ", but ", c.process, " was told ", Said(c)));
      }
    }
  }

  // A term's seq 0 is its Campaign's value, from the candidate it names.
  // Any outcome: a Campaign retries (keeping its request id), and a retry
  // after a grant whose answer was lost, once that term ended, is refused.
  void CheckFirstValue(const ObservedChange& c) {
    auto it = campaigns_.find(c.candidate);
    const AcquireOp* campaign = it == campaigns_.end() ? nullptr : it->second;
    if (campaign == nullptr || campaign->resource != c.election ||
        campaign->value != c.value ||
        (campaign->outcome == Outcome::kOk && campaign->token != c.term)) {
      Report(kElectionValuesFromTheirTerm, c.election,
             absl::StrCat(c.process, " was told '", c.election, "' ", Said(c),
                          ", but no Campaign of that candidate with that value was "
                          "granted that term"));
    }
  }

  const History& h_;
  CheckResult* const result_;
  std::map<std::pair<std::string, std::string>, int> reported_;
  std::map<std::string, const AcquireOp*> campaigns_;   // by holder
  std::map<std::string, const ProclaimOp*> proclaims_;  // by value
  // The first observer told of each (election, term, seq).
  std::map<std::tuple<std::string, uint64_t, uint64_t>, const ObservedChange*> told_;
};

}  // namespace

void CheckElections(const History& history, CheckResult* result) {
  ElectionChecker(history, result).Run();
}

}  // namespace fencegate::torture
