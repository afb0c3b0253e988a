#include "tests/testing/headless_chromium.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "google/protobuf/util/json_util.h"
#include "harness/run_program.h"

namespace fencegate::testing {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

// The flags every run needs here: headless, as root, off the network.
std::vector<std::string> BaseFlags(const std::string& profile) {
  return {kChromium,
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-quic",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--disable-dev-shm-usage",
          "--user-data-dir=" + profile};
}

std::string FreshProfile(const std::string& work_dir) {
  static int n = 0;
  const std::string dir =
      absl::StrCat(work_dir, "/chromium-profile-", getpid(), "-", ++n);
  // A new empty directory; Chromium fills it.
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  std::filesystem::create_directories(dir, ignored);
  return dir;
}

Value Number(double v) {
  Value value;
  value.set_number_value(v);
  return value;
}
Value Text(const std::string& s) {
  Value value;
  value.set_string_value(s);
  return value;
}
Value Bool(bool b) {
  Value value;
  value.set_bool_value(b);
  return value;
}

}  // namespace

absl::StatusOr<std::string> DumpDom(const std::string& url, const std::string& work_dir,
                                    absl::Duration timeout) {
  std::vector<std::string> argv = BaseFlags(FreshProfile(work_dir));
  argv.push_back("--dump-dom");
  argv.push_back(url);
  absl::StatusOr<ProgramResult> result = RunProgram(argv, timeout);
  if (!result.ok()) return result.status();
  if (result->exit_code != 0 || result->stdout_text.empty()) {
    return absl::InternalError(absl::StrCat("chromium --dump-dom ", url, " exited ",
                                            result->exit_code, ": ",
                                            result->stderr_text));
  }
  return result->stdout_text;
}

absl::StatusOr<std::unique_ptr<HeadlessChromium>> HeadlessChromium::Start(
    const std::string& work_dir) {
  ChildProcess::Options options;
  options.argv = BaseFlags(FreshProfile(work_dir));
  options.argv.push_back("--remote-debugging-pipe");
  options.argv.push_back("about:blank");
  options.pipe_fds_3_and_4 = true;
  options.stderr_path = work_dir + "/chromium.log";
  std::unique_ptr<HeadlessChromium> browser(new HeadlessChromium());
  absl::StatusOr<std::unique_ptr<ChildProcess>> process = ChildProcess::Start(options);
  if (!process.ok()) return process.status();
  browser->process_ = *std::move(process);
  return browser;
}

HeadlessChromium::~HeadlessChromium() {
  if (process_ == nullptr) return;
  deadline_ = absl::Now() + absl::Seconds(10);
  Struct none;
  (void)Call("Browser.close", none, /*session=*/false);
  if (!process_->Wait(absl::Seconds(10)).ok()) process_->Kill();
}

absl::StatusOr<Struct> HeadlessChromium::Read() {
  for (;;) {
    const size_t end = buffer_.find('\0');
    if (end != std::string::npos) {
      const std::string json = buffer_.substr(0, end);
      buffer_.erase(0, end + 1);
      Struct message;
      if (!google::protobuf::util::JsonStringToMessage(json, &message).ok()) {
        return absl::InternalError(
            absl::StrCat("Chromium sent what is not JSON: ", json));
      }
      return message;
    }
    const absl::Duration left = deadline_ - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::DeadlineExceededError("Chromium did not answer in time");
    }
    pollfd p{process_->devtools_out_fd(), POLLIN, 0};
    const int n = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;  // the deadline check above ends it
    char chunk[65536];
    const ssize_t got = read(process_->devtools_out_fd(), chunk, sizeof(chunk));
    if (got <= 0) return absl::UnavailableError("Chromium closed its DevTools pipe");
    buffer_.append(chunk, got);
  }
}

absl::StatusOr<Struct> HeadlessChromium::Call(const std::string& method,
                                              const Struct& params, bool session) {
  Struct command;
  const int id = next_id_++;
  (*command.mutable_fields())["id"] = Number(id);
  (*command.mutable_fields())["method"] = Text(method);
  *(*command.mutable_fields())["params"].mutable_struct_value() = params;
  if (session) (*command.mutable_fields())["sessionId"] = Text(session_);
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(command, &json).ok()) {
    return absl::InternalError("cannot encode a DevTools command");
  }
  json.push_back('\0');
  for (size_t sent = 0; sent < json.size();) {
    const ssize_t n =
        write(process_->devtools_in_fd(), json.data() + sent, json.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::UnavailableError("cannot write to Chromium's DevTools pipe");
    sent += static_cast<size_t>(n);
  }
  for (;;) {
    absl::StatusOr<Struct> message = Read();
    if (!message.ok()) return message.status();
    const auto& fields = message->fields();
    auto id_field = fields.find("id");
    if (id_field == fields.end()) {  // an event
      auto m = fields.find("method");
      if (m != fields.end()) events_.push_back(m->second.string_value());
      continue;
    }
    if (static_cast<int>(id_field->second.number_value()) != id) continue;
    if (auto error = fields.find("error"); error != fields.end()) {
      std::string text;
      (void)google::protobuf::util::MessageToJsonString(error->second.struct_value(),
                                                        &text);
      return absl::InternalError(absl::StrCat(method, " failed: ", text));
    }
    auto result = fields.find("result");
    return result == fields.end() ? Struct() : result->second.struct_value();
  }
}

absl::Status HeadlessChromium::WaitForEvent(const std::string& method) {
  for (;;) {
    auto seen = std::find(events_.begin(), events_.end(), method);
    if (seen != events_.end()) {
      events_.erase(events_.begin(), seen + 1);
      return absl::OkStatus();
    }
    absl::StatusOr<Struct> message = Read();
    if (!message.ok()) return message.status();
    auto m = message->fields().find("method");
    if (m != message->fields().end() && message->fields().count("id") == 0) {
      events_.push_back(m->second.string_value());
    }
  }
}

absl::StatusOr<PageLayout> HeadlessChromium::Load(const std::string& url, int width,
                                                  int height) {
  deadline_ = absl::Now() + absl::Seconds(60);
  if (session_.empty()) {
    Struct target_params;
    (*target_params.mutable_fields())["url"] = Text("about:blank");
    absl::StatusOr<Struct> target = Call("Target.createTarget", target_params, false);
    if (!target.ok()) return target.status();
    Struct attach;
    (*attach.mutable_fields())["targetId"] = target->fields().at("targetId");
    (*attach.mutable_fields())["flatten"] = Bool(true);
    absl::StatusOr<Struct> attached = Call("Target.attachToTarget", attach, false);
    if (!attached.ok()) return attached.status();
    session_ = attached->fields().at("sessionId").string_value();
    absl::StatusOr<Struct> enabled = Call("Page.enable", Struct(), true);
    if (!enabled.ok()) return enabled.status();
  }
  Struct metrics;
  (*metrics.mutable_fields())["width"] = Number(width);
  (*metrics.mutable_fields())["height"] = Number(height);
  (*metrics.mutable_fields())["deviceScaleFactor"] = Number(1);
  (*metrics.mutable_fields())["mobile"] = Bool(true);
  absl::StatusOr<Struct> emulated =
      Call("Emulation.setDeviceMetricsOverride", metrics, true);
  if (!emulated.ok()) return emulated.status();
  events_.clear();
  Struct navigate;
  (*navigate.mutable_fields())["url"] = Text(url);
  absl::StatusOr<Struct> navigated = Call("Page.navigate", navigate, true);
  if (!navigated.ok()) return navigated.status();
  if (absl::Status loaded = WaitForEvent("Page.loadEventFired"); !loaded.ok())
    return loaded;

  Struct evaluate;
  (*evaluate.mutable_fields())["expression"] = Text(
      "JSON.stringify([document.documentElement.scrollWidth, "
      "document.documentElement.clientWidth, window.innerWidth])");
  (*evaluate.mutable_fields())["returnByValue"] = Bool(true);
  absl::StatusOr<Struct> evaluated = Call("Runtime.evaluate", evaluate, true);
  if (!evaluated.ok()) return evaluated.status();
  google::protobuf::ListValue widths;
  const std::string value =
      evaluated->fields().at("result").struct_value().fields().at("value").string_value();
  if (!google::protobuf::util::JsonStringToMessage(value, &widths).ok() ||
      widths.values_size() != 3) {
    return absl::InternalError(absl::StrCat("unexpected measurement: ", value));
  }
  PageLayout layout;
  layout.scroll_width = static_cast<int>(widths.values(0).number_value());
  layout.client_width = static_cast<int>(widths.values(1).number_value());
  layout.inner_width = static_cast<int>(widths.values(2).number_value());

  Struct shot;
  (*shot.mutable_fields())["format"] = Text("png");
  (*shot.mutable_fields())["captureBeyondViewport"] = Bool(true);
  absl::StatusOr<Struct> screenshot = Call("Page.captureScreenshot", shot, true);
  if (!screenshot.ok()) return screenshot.status();
  if (!absl::Base64Unescape(screenshot->fields().at("data").string_value(),
                            &layout.screenshot_png)) {
    return absl::InternalError("the screenshot is not base64");
  }
  return layout;
}

}  // namespace fencegate::testing
