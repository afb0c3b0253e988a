#include "common/server/stuck_channel.h"

#include "grpc/grpc.h"

namespace fencegate {

bool StuckChannelWatch::Stuck(grpc::Channel& channel) {
  if (channel.GetState(/*try_to_connect=*/false) != GRPC_CHANNEL_TRANSIENT_FAILURE) {
    failing_since_.reset();
    return false;
  }
  const auto now = std::chrono::steady_clock::now();
  if (!failing_since_) failing_since_ = now;
  return now - *failing_since_ > stuck_after_;
}

void UseOwnSubchannels(grpc::ChannelArguments& args) {
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
}

}  // namespace fencegate
