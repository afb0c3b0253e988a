#include "tests/torture/final_state_reader.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "fencegate/client/gateway_client.h"
#include "tests/torture/monotonic_clock.h"

namespace fencegate::torture {
namespace {

constexpr char kLogPrefix[] = "log/";

absl::StatusOr<uint64_t> Number(const client::ReadResult& read, absl::string_view key) {
  if (!read.found) return 0;
  uint64_t value = 0;
  if (!absl::SimpleAtoi(read.value, &value)) {
    return absl::DataLossError(absl::StrCat("key '", key, "' holds '", read.value,
                                            "', not a number"));
  }
  return value;
}

absl::Status ReadResource(client::GatewayClient& gateway, const std::string& resource,
                          FinalState* state) {
  state->read_ns = MonotonicNanos();
  absl::StatusOr<client::ResourceSummary> summary = gateway.Describe(resource);
  if (!summary.ok()) return summary.status();
  state->fence = summary->max_token;
  absl::StatusOr<client::ReadResult> counter = gateway.ReadUnfenced(resource, "counter");
  if (!counter.ok()) return counter.status();
  absl::StatusOr<uint64_t> value = Number(*counter, "counter");
  if (!value.ok()) return value.status();
  state->counter = *value;
  std::string page_token;
  do {
    absl::StatusOr<client::ListPage> page = gateway.List(resource, 1000, page_token);
    if (!page.ok()) return page.status();
    for (const client::KeyEntry& key : page->keys) {
      if (!absl::StartsWith(key.key, kLogPrefix)) continue;
      absl::StatusOr<client::ReadResult> entry = gateway.ReadUnfenced(resource, key.key);
      if (!entry.ok()) return entry.status();
      if (!entry->found) continue;  // deleted meanwhile: nobody deletes, but be exact
      absl::StatusOr<uint64_t> logged = Number(*entry, key.key);
      if (!logged.ok()) return logged.status();
      state->log[std::string(absl::StripPrefix(key.key, kLogPrefix))] = *logged;
    }
    page_token = page->next_page_token;
  } while (!page_token.empty());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::map<std::string, FinalState>> ReadFinalState(
    const std::string& gateway_address, const std::vector<std::string>& resources,
    absl::Duration timeout) {
  absl::StatusOr<std::unique_ptr<client::GatewayClient>> gateway =
      client::GatewayClient::Connect(gateway_address);
  if (!gateway.ok()) return gateway.status();
  const absl::Time give_up = absl::Now() + timeout;
  std::map<std::string, FinalState> final_state;
  for (const std::string& resource : resources) {
    for (;;) {
      FinalState state;
      absl::Status status = ReadResource(**gateway, resource, &state);
      if (status.ok()) {
        final_state[resource] = std::move(state);
        break;
      }
      if (status.code() != absl::StatusCode::kUnavailable &&
          status.code() != absl::StatusCode::kDeadlineExceeded) {
        return status;
      }
      if (absl::Now() > give_up) {
        return absl::DeadlineExceededError(absl::StrCat(
            "the final reads of '", resource, "' kept failing: ", status.ToString()));
      }
      absl::SleepFor(absl::Milliseconds(100));  // retry interval, under a deadline
    }
  }
  return final_state;
}

}  // namespace fencegate::torture
