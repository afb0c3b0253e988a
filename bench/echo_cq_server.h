// The echo service on gRPC's asynchronous API, for fencegate-echo-server
// --api=cq: every call's and stream's reads, writes and ends are events of
// one completion queue, taken by one thread, which answers Echo.Call with
// its request and each message of an Echo.Stream with itself (in order,
// many in flight, one write at a time). The other design of a Session
// transport than the callback API's reactors (issue 32): no lock, no other
// thread, gRPC polls on the thread that calls Next. No method is left on
// the callback API: its threads would poll the same connections.
//
// Thread safety: ServeEchoStreamsOn runs on one thread, the only one that
// touches the streams; it returns once `cq` is shut down (after the
// server) and drained.
#ifndef FENCEGATE_BENCH_ECHO_CQ_SERVER_H_
#define FENCEGATE_BENCH_ECHO_CQ_SERVER_H_

#include "echo.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace fencegate::bench {

// Accepts and serves the calls and streams of `service` on `cq` until `cq`
// is shut down.
void ServeEchoOn(Echo::AsyncService& service, grpc::ServerCompletionQueue& cq);

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_ECHO_CQ_SERVER_H_
