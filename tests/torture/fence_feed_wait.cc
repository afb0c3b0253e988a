#include "tests/torture/fence_feed_wait.h"

#include <algorithm>
#include <map>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/channel.h"
#include "fencegate/client/gateway_client.h"
#include "fencegate/v1/lock.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/security/credentials.h"
#include "tests/torture/monotonic_clock.h"

namespace fencegate::torture {
namespace {

// Every resource's latest committed position, from one WatchFences stream
// read until it has caught up.
absl::StatusOr<std::map<std::string, uint64_t>> LatestPositions(
    fencegate::v1::LockService::Stub& stub, absl::Time deadline) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(deadline));
  fencegate::v1::WatchFencesRequest request;
  std::unique_ptr<grpc::ClientReader<fencegate::v1::WatchFencesResponse>> reader =
      stub.WatchFences(&context, request);
  std::map<std::string, uint64_t> latest;
  fencegate::v1::WatchFencesResponse message;
  while (reader->Read(&message)) {
    for (const fencegate::v1::FenceEvent& event : message.events()) {
      uint64_t& position = latest[event.resource()];
      position = std::max<uint64_t>(position, event.position());
    }
    if (message.caught_up()) {
      context.TryCancel();
      (void)reader->Finish();
      return latest;
    }
  }
  grpc::Status status = reader->Finish();
  return absl::UnavailableError(absl::StrCat(
      "the fence stream ended before it caught up: ", status.error_message()));
}

}  // namespace

absl::StatusOr<std::map<std::string, FeedFence>> AwaitFenceFeed(
    const std::string& lock_target, const std::string& gateway, absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;
  auto stub = fencegate::v1::LockService::NewStub(
      client::NewClientChannel(lock_target, grpc::InsecureChannelCredentials()));
  absl::StatusOr<std::map<std::string, uint64_t>> latest;
  for (;;) {  // the lock service may just be electing a leader
    latest = LatestPositions(*stub, std::min(give_up, absl::Now() + absl::Seconds(10)));
    if (latest.ok()) break;
    if (absl::Now() > give_up) return latest.status();
    absl::SleepFor(absl::Milliseconds(200));  // retry interval, under a deadline
  }
  absl::StatusOr<std::unique_ptr<client::GatewayClient>> client =
      client::GatewayClient::Connect(gateway);
  if (!client.ok()) return client.status();
  std::map<std::string, FeedFence> fences;
  for (const auto& [resource, position] : *latest) {
    FeedFence& seen = fences[resource];
    seen.position = position;
    for (;;) {
      seen.read_ns = MonotonicNanos();
      absl::StatusOr<client::ResourceSummary> summary = (*client)->Describe(resource);
      if (summary.ok()) seen.fence = summary->max_token;
      if (seen.fence >= position || absl::Now() > give_up) break;
      absl::SleepFor(absl::Milliseconds(100));  // poll interval, under a deadline
    }
  }
  return fences;
}

}  // namespace fencegate::torture
