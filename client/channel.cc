#include "client/channel.h"

#include "absl/time/clock.h"
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

void PauseForChannel(grpc::Channel& channel, absl::Time until) {
  if (channel.GetState(/*try_to_connect=*/true) != GRPC_CHANNEL_READY &&
      channel.WaitForConnected(absl::ToChronoTime(until))) {
    return;  // connected again: retry now
  }
  absl::SleepFor(until - absl::Now());
}

}  // namespace fencegate::client
