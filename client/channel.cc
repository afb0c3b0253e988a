#include "client/channel.h"

#include <vector>

#include "absl/time/clock.h"
#include "common/grpc/channel_credentials.h"
#include "grpcpp/channel.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/support/channel_arguments.h"

namespace fencegate::client {

std::shared_ptr<grpc::Channel> NewClientChannel(
    const std::string& address, const std::shared_ptr<grpc::ChannelCredentials>& credentials) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  return grpc::CreateCustomChannel(address, credentials, args);
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> NewClientChannel(
    const std::string& address, const ClientTlsFiles& tls) {
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      MakeChannelCredentials(tls);
  if (!credentials.ok()) return credentials.status();
  return NewClientChannel(address, *credentials);
}

void PauseForChannel(grpc::Channel& channel, absl::Time until) {
  PauseForChannels({&channel}, until);
}

void PauseForChannels(std::initializer_list<grpc::Channel*> channels, absl::Time until) {
  std::vector<grpc::Channel*> down;
  for (grpc::Channel* channel : channels) {
    if (channel->GetState(/*try_to_connect=*/false) == GRPC_CHANNEL_READY) continue;
    // The retry's own backoff paces the reconnections: one that failed
    // while the server was down must not hold the channel back past it.
    grpc::experimental::ChannelResetConnectionBackoff(channel);
    // try_to_connect: an idle channel starts connecting now, all side by side.
    if (channel->GetState(/*try_to_connect=*/true) != GRPC_CHANNEL_READY) {
      down.push_back(channel);
    }
  }
  if (down.empty()) {
    absl::SleepFor(until - absl::Now());
    return;
  }
  for (grpc::Channel* channel : down) {
    if (!channel->WaitForConnected(absl::ToChronoTime(until))) return;  // `until` came
  }
  // All connected again: retry now.
}

}  // namespace fencegate::client
