#include "gateway/fence_follower.h"

#include <pthread.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/errors.h"
#include "common/base/log.h"
#include "common/server/stuck_channel.h"
#include "common/test_hooks/test_hooks.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/support/channel_arguments.h"

namespace fencegate::gateway {

namespace v1 = ::fencegate::v1;

namespace {

// The planted bug gateway_follower_skips_catch_up (test builds only): drops
// the replayed positions of a message, keeping the live ones.
void DropCatchUp(v1::WatchFencesResponse& message) {
  auto* events = message.mutable_events();
  events->erase(std::remove_if(events->begin(), events->end(),
                               [](const v1::FenceEvent& event) {
                                 return event.kind() == v1::FenceEvent::KIND_UNSPECIFIED;
                               }),
                events->end());
}

}  // namespace

FenceFollower::FenceFollower(FencedStore* store, FenceFollowerOptions options)
    : store_(store), options_(std::move(options)) {
  grpc::ChannelArguments args;
  // Reconnect on the follower's own schedule, not gRPC's (up to 2 minutes).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
              static_cast<int>(absl::ToInt64Milliseconds(options_.min_backoff)));
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS,
              static_cast<int>(absl::ToInt64Milliseconds(options_.min_backoff)));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
              static_cast<int>(absl::ToInt64Milliseconds(options_.max_backoff)));
  // A lock service host that vanishes without closing the connection would
  // leave the stream silent forever: ping it (servers allow it, see
  // common/server/server_setup.cc).
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  UseOwnSubchannels(args);  // a stuck channel is replaced (Connect())
  args_ = args;
  Connect();
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "fg-gw-follow");
    Run();
  });
}

void FenceFollower::Connect() {
  channel_ = grpc::CreateCustomChannel(
      options_.lockservice,
      options_.credentials ? options_.credentials : grpc::InsecureChannelCredentials(),
      args_);
  stub_ = v1::LockService::NewStub(channel_);
  channel_watch_.Reset();
}

FenceFollower::~FenceFollower() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    if (context_ != nullptr) context_->TryCancel();
  }
  wake_.Notify();
  thread_.join();
}

uint64_t FenceFollower::applied_position() {
  absl::MutexLock lock(&mu_);
  return applied_position_;
}

bool FenceFollower::caught_up() {
  absl::MutexLock lock(&mu_);
  return caught_up_;
}

FenceFollower::Stats FenceFollower::stats() {
  absl::MutexLock lock(&mu_);
  Stats stats;
  stats.caught_up = caught_up_;
  stats.applied_position = applied_position_;
  stats.head_position = std::max(head_position_, applied_position_);
  stats.since_last_event =
      absl::FromChrono(std::chrono::steady_clock::now() - last_event_);
  stats.streams_ended = streams_ended_;
  return stats;
}

void FenceFollower::Run() {
  absl::Duration backoff = options_.min_backoff;
  for (;;) {
    const uint64_t before = applied_position();
    grpc::Status status = FollowOnce();
    {
      absl::MutexLock lock(&mu_);
      caught_up_ = false;
      if (stopping_) return;
      ++streams_ended_;
    }
    // A stream that made progress was healthy: retry soon.
    if (applied_position() > before) backoff = options_.min_backoff;
    LogInfo("grant-time fencing: stream from %s ended (%s: %s) at position %d; "
            "reconnecting in %s",
            options_.lockservice, absl::StrCat(status.error_code()),
            status.error_message(), applied_position(), absl::FormatDuration(backoff));
    if (!Backoff(backoff)) return;
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

grpc::Status FenceFollower::FollowOnce() {
  if (channel_watch_.Stuck(*channel_)) {
    LogWarning("grant-time fencing: the channel to %s stopped reconnecting; replacing it",
               options_.lockservice);
    Connect();
  }
  grpc::ClientContext context;
  v1::WatchFencesRequest request;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return grpc::Status::CANCELLED;
    context_ = &context;
    request.set_after_position(applied_position_);
  }
  std::unique_ptr<grpc::ClientReader<v1::WatchFencesResponse>> reader =
      stub_->WatchFences(&context, request);
  const bool resumed = request.after_position() > 0;
  v1::WatchFencesResponse message;
  bool applied = true;
  while (applied && reader->Read(&message)) {
    if (resumed && FENCEGATE_PLANTED_BUG("gateway_follower_skips_catch_up")) DropCatchUp(message);  // test builds only
    applied = Apply(message);
    if (applied && message.caught_up()) {
      LogInfo("grant-time fencing: caught up with %s at position %d",
              options_.lockservice, applied_position());
      absl::MutexLock lock(&mu_);
      caught_up_ = true;
    }
  }
  if (!applied) context.TryCancel();
  grpc::Status status = reader->Finish();
  absl::MutexLock lock(&mu_);
  context_ = nullptr;
  if (!applied) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        "a fence could not be raised in storage");
  }
  return status;
}

bool FenceFollower::Apply(const v1::WatchFencesResponse& message) {
  absl::Mutex mu;
  int outstanding = message.events_size();
  bool failed = false;
  for (const v1::FenceEvent& event : message.events()) {
    store_->RaiseFence(
        event.resource(), event.position(),
        [&mu, &outstanding, &failed, &event](absl::StatusOr<FenceResult> result) {
          absl::MutexLock lock(&mu);
          --outstanding;
          if (result.ok()) return;
          if (result.status().code() == absl::StatusCode::kInvalidArgument) {
            // A name this gateway refuses: no write can ever use it here.
            LogError("grant-time fencing: skipping resource '%s': %s",
                     event.resource(), result.status().message());
            return;
          }
          failed = true;
          LogError("grant-time fencing: could not raise the fence of '%s' to %d: %s",
                   event.resource(), event.position(), result.status().ToString());
        });
  }
  {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](int* n) { return *n == 0; }, &outstanding));
    if (failed) return false;
  }
  uint64_t last = 0;
  for (const v1::FenceEvent& event : message.events()) {
    last = std::max<uint64_t>(last, event.position());
  }
  absl::MutexLock lock(&mu_);
  applied_position_ = std::max(applied_position_, last);
  head_position_ = std::max(head_position_, message.head_position());
  if (message.events_size() > 0) last_event_ = std::chrono::steady_clock::now();
  return true;
}

bool FenceFollower::Backoff(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  wake_.WaitFor(&mu_, absl::Condition(&stopping_), d);
  return !stopping_;
}

}  // namespace fencegate::gateway
