// fencegate-fuzz-seeds: encodes the readable seed corpus of a structured
// fuzz target into its input format (fuzz_frames.h).
//
//   fencegate-fuzz-seeds lock_service|gateway IN_DIR OUT_DIR
//
// Each IN_DIR/NAME.txt becomes OUT_DIR/NAME. A seed is one step per line;
// blank lines and lines starting with '#' are skipped:
//
//   config 1                                   the config byte (first line)
//   acquire resource: "r" holder: "a" ttl_ms: 1000    a request, in protobuf
//   signed renew resource: "r" token: 1 ttl_ms: 2000  text format; "signed":
//                                              the harness signs it validly
//   advance 1500 | restart | cancel 0          lock_service's own steps
//   reopen                                     gateway's own step
//
// Exits 1 naming the file and line of anything it cannot encode.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "fencegate/v1/gateway.pb.h"
#include "fencegate/v1/lock.pb.h"
#include "google/protobuf/text_format.h"
#include "tests/fuzz/fuzz_frames.h"

namespace fencegate::fuzz {
namespace {

namespace v1 = ::fencegate::v1;

// A step's kind and, for requests, an empty message of its type.
struct Verb {
  uint8_t kind;
  std::shared_ptr<google::protobuf::Message> request;  // null: no proto
};

std::map<std::string, Verb> Verbs(const std::string& target) {
  auto kind = [](auto step) { return static_cast<uint8_t>(step); };
  if (target == "lock_service") {
    return {
        {"acquire", {kind(LockStep::kAcquire), std::make_shared<v1::AcquireRequest>()}},
        {"renew", {kind(LockStep::kRenew), std::make_shared<v1::RenewRequest>()}},
        {"release", {kind(LockStep::kRelease), std::make_shared<v1::ReleaseRequest>()}},
        {"describe", {kind(LockStep::kDescribe), std::make_shared<v1::DescribeRequest>()}},
        {"advance", {kind(LockStep::kAdvance), nullptr}},
        {"restart", {kind(LockStep::kRestart), nullptr}},
        {"cancel", {kind(LockStep::kCancel), nullptr}},
    };
  }
  if (target == "gateway") {
    return {
        {"write", {kind(GatewayStep::kWrite), std::make_shared<v1::WriteRequest>()}},
        {"multiwrite",
         {kind(GatewayStep::kMultiWrite), std::make_shared<v1::MultiWriteRequest>()}},
        {"read", {kind(GatewayStep::kRead), std::make_shared<v1::ReadRequest>()}},
        {"fence", {kind(GatewayStep::kFence), std::make_shared<v1::FenceRequest>()}},
        {"list", {kind(GatewayStep::kList), std::make_shared<v1::ListRequest>()}},
        {"describe",
         {kind(GatewayStep::kDescribe), std::make_shared<v1::DescribeResourceRequest>()}},
        {"reopen", {kind(GatewayStep::kReopen), nullptr}},
        {"raise_fence", {kind(GatewayStep::kRaiseFence), std::make_shared<v1::FenceRequest>()}},
    };
  }
  return {};
}

// Encodes one step; false if the line is not one.
bool Encode(const std::map<std::string, Verb>& verbs, absl::string_view line,
            std::string& out) {
  uint8_t flags = 0;
  if (absl::ConsumePrefix(&line, "signed ")) flags = kSigned;
  const std::pair<absl::string_view, absl::string_view> words =
      absl::StrSplit(line, absl::MaxSplits(' ', 1));
  auto verb = verbs.find(std::string(words.first));
  if (verb == verbs.end()) return false;
  const uint8_t kind = verb->second.kind | flags;
  if (verb->second.request != nullptr) {
    std::unique_ptr<google::protobuf::Message> request(verb->second.request->New());
    if (!google::protobuf::TextFormat::ParseFromString(std::string(words.second),
                                                       request.get())) {
      return false;
    }
    std::string bytes = request->SerializeAsString();
    if (bytes.size() > kMaxFrameBytes) return false;
    AppendFrame(out, kind, bytes);
    return true;
  }
  uint32_t number = 0;
  if (words.first == "advance") {
    if (!absl::SimpleAtoi(words.second, &number) || number > 0xffff) return false;
    const char ms[2] = {static_cast<char>(number & 0xff), static_cast<char>(number >> 8)};
    AppendFrame(out, kind, absl::string_view(ms, 2), /*with_length=*/false);
    return true;
  }
  if (words.first == "cancel") {
    if (!absl::SimpleAtoi(words.second, &number) || number > 0xff) return false;
    const char index = static_cast<char>(number);
    AppendFrame(out, kind, absl::string_view(&index, 1), /*with_length=*/false);
    return true;
  }
  if (!words.second.empty()) return false;
  AppendFrame(out, kind, "", /*with_length=*/false);
  return true;
}

int Main(int argc, char** argv) {
  if (argc != 4 || Verbs(argv[1]).empty()) {
    std::cerr << "usage: fencegate-fuzz-seeds lock_service|gateway IN_DIR OUT_DIR\n";
    return 2;
  }
  const std::map<std::string, Verb> verbs = Verbs(argv[1]);
  std::filesystem::create_directories(argv[3]);
  for (const auto& entry : std::filesystem::directory_iterator(argv[2])) {
    if (entry.path().extension() != ".txt") continue;
    std::ifstream in(entry.path());
    std::string out(1, '\0');  // the config byte
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      absl::string_view step = absl::StripAsciiWhitespace(line);
      if (step.empty() || step[0] == '#') continue;
      uint32_t config = 0;
      if (absl::ConsumePrefix(&step, "config ") && absl::SimpleAtoi(step, &config) &&
          config <= 0xff && out.size() == 1) {
        out[0] = static_cast<char>(config);
        continue;
      }
      if (!Encode(verbs, step, out)) {
        std::cerr << entry.path().string() << ":" << number << ": cannot encode '" << line
                  << "'\n";
        return 1;
      }
    }
    std::ofstream(std::filesystem::path(argv[3]) / entry.path().stem(), std::ios::binary)
        << out;
  }
  return 0;
}

}  // namespace
}  // namespace fencegate::fuzz

int main(int argc, char** argv) { return fencegate::fuzz::Main(argc, argv); }
