// Elections (elections.h): the leaders' proclamations and the observers.
#include "lockservice/core/elections.h"

#include <algorithm>
#include <utility>

namespace fencegate::lockservice {

const Proclamation* Elections::Find(const std::string& election, uint64_t term) const {
  if (terms_.empty()) return nullptr;  // the common case: no election at all
  auto it = terms_.find(election);
  return it != terms_.end() && it->second.term == term ? &it->second.said : nullptr;
}

void Elections::Begin(const std::string& election, uint64_t term, Proclamation said) {
  terms_[election] = Term{term, std::move(said)};
  if (!ended_.empty()) ended_.erase(election);
}

const Proclamation& Elections::Proclaim(const std::string& election, uint64_t term,
                                        std::string value) {
  Term& t = terms_[election];
  if (t.term != term) t = Term{term, Proclamation{}};  // a term not begun by a Campaign
  ++t.said.seq;
  t.said.value = std::move(value);
  return t.said;
}

uint64_t Elections::End(const std::string& election, uint64_t term) {
  uint64_t end = 1;  // a term with no proclamation: only its grant (seq 0)
  bool campaigned = false;
  if (!terms_.empty()) {
    auto it = terms_.find(election);
    if (it != terms_.end() && it->second.term == term) {
      end = it->second.said.seq + 1;
      campaigned = true;
      terms_.erase(it);
    }
  }
  const bool observed = !observers_.empty() && observers_.contains(election);
  if (campaigned || observed) {
    if (ended_.size() < kMostRememberedEnds || ended_.contains(election)) {
      ended_[election] = {term, end};
    }
  }
  return end;
}

std::pair<uint64_t, uint64_t> Elections::LastEnd(const std::string& election) const {
  if (ended_.empty()) return {0, 0};
  auto it = ended_.find(election);
  return it == ended_.end() ? std::pair<uint64_t, uint64_t>{0, 0} : it->second;
}

void Elections::Observe(const std::string& election, ElectionObserver* observer) {
  observer->Ref();
  observers_[election].push_back(observer);
}

bool Elections::Unobserve(const std::string& election, ElectionObserver* observer) {
  auto it = observers_.find(election);
  if (it == observers_.end()) return false;
  std::vector<ElectionObserver*>& list = it->second;
  auto found = std::find(list.begin(), list.end(), observer);
  if (found == list.end()) return false;
  list.erase(found);
  if (list.empty()) observers_.erase(it);
  return true;
}

const std::vector<ElectionObserver*>& Elections::ObserversOf(
    const std::string& election) const {
  static const std::vector<ElectionObserver*> kNone;
  if (observers_.empty()) return kNone;
  auto it = observers_.find(election);
  return it == observers_.end() ? kNone : it->second;
}

std::vector<ElectionObserver*> Elections::TakeObservers() {
  std::vector<ElectionObserver*> all;
  for (auto& [election, list] : observers_)
    all.insert(all.end(), list.begin(), list.end());
  observers_.clear();
  return all;
}

void StopObservers(std::vector<ElectionObserver*> observers, const absl::Status& why) {
  for (ElectionObserver* observer : observers) {
    observer->OnStopped(why);
    observer->Unref();
  }
}

}  // namespace fencegate::lockservice
