// The byte format of the structured fuzz targets' inputs (lock_service and
// gateway): one config byte, then a sequence of frames, each
//
//   kind      1 byte: the low 7 bits pick the step (taken modulo the
//             target's number of steps, so every byte means something);
//             kSigned (the high bit) asks the harness to sign the request's
//             token validly, as a client holding the lease would
//   length    a varint of 1 or 2 bytes (< 16384), only for steps that carry
//             a payload: the wire bytes of a fencegate.v1 request message,
//             parsed as gRPC would, or a step's own argument
//   payload   `length` bytes (fewer if the input ends)
//
// Any byte string is a valid input; a truncated frame ends the sequence.
// The seed corpus is written in a readable form and encoded with
// AppendFrame by fencegate-fuzz-seeds (seed_main.cc).
//
// Thread safety: plain values.
#ifndef FENCEGATE_TESTS_FUZZ_FUZZ_FRAMES_H_
#define FENCEGATE_TESTS_FUZZ_FUZZ_FRAMES_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace fencegate::fuzz {

inline constexpr uint8_t kSigned = 0x80;
inline constexpr size_t kMaxFrameBytes = 16383;

// lock_service_fuzzer.cc's steps.
enum class LockStep : uint8_t {
  kAcquire,   // payload: AcquireRequest
  kRenew,     // payload: RenewRequest
  kRelease,   // payload: ReleaseRequest
  kDescribe,  // payload: DescribeRequest
  kAdvance,   // payload: 2 bytes, little-endian milliseconds
  kRestart,   // no payload: stop the manager, reopen the store and a new one
  kCancel,    // payload: 1 byte, which parked Acquire the client abandons
  kCount,
};

// gateway_fuzzer.cc's steps.
enum class GatewayStep : uint8_t {
  kWrite,       // payload: WriteRequest
  kMultiWrite,  // payload: MultiWriteRequest
  kRead,        // payload: ReadRequest
  kFence,       // payload: FenceRequest
  kList,        // payload: ListRequest
  kDescribe,    // payload: DescribeResourceRequest
  kReopen,      // no payload: close the store and the database, open both again
  kRaiseFence,  // payload: FenceRequest, as grant-time fencing's RaiseFence
  kCount,
};

class FrameReader {
 public:
  FrameReader(const uint8_t* data, size_t size)
      : data_(reinterpret_cast<const char*>(data)), size_(size) {}

  bool done() const { return pos_ >= size_; }

  // The next byte, or 0 past the end.
  uint8_t Byte() { return done() ? 0 : static_cast<uint8_t>(data_[pos_++]); }

  // A varint length, then up to that many bytes.
  absl::string_view Payload() {
    size_t length = Byte();
    if (length & 0x80) length = (length & 0x7f) | (size_t{Byte()} << 7);
    length = std::min(length, size_ - pos_);
    absl::string_view payload(data_ + pos_, length);
    pos_ += length;
    return payload;
  }

 private:
  const char* const data_;
  const size_t size_;
  size_t pos_ = 0;
};

// Appends one frame; `payload` (at most kMaxFrameBytes) is written with its
// length when `with_length`.
inline void AppendFrame(std::string& out, uint8_t kind, absl::string_view payload,
                        bool with_length = true) {
  out.push_back(static_cast<char>(kind));
  if (with_length) {
    if (payload.size() < 0x80) {
      out.push_back(static_cast<char>(payload.size()));
    } else {
      out.push_back(static_cast<char>(0x80 | (payload.size() & 0x7f)));
      out.push_back(static_cast<char>(payload.size() >> 7));
    }
  }
  out.append(payload.data(), payload.size());
}

}  // namespace fencegate::fuzz

#endif  // FENCEGATE_TESTS_FUZZ_FUZZ_FRAMES_H_
