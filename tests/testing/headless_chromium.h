// HeadlessChromium: Debian's Chromium (/usr/bin/chromium), headless, driven
// over its DevTools protocol through --remote-debugging-pipe (descriptors
// 3 and 4 of the child; ChildProcess::Options::pipe_fds_3_and_4), for the
// status pages' browser tests. It loads a page in an emulated screen of a
// given width, measures whether the page scrolls sideways, and takes a
// screenshot. DumpDom() is Chromium's own --dump-dom (the DOM after
// loading, as a separate run).
//
// Every run uses a fresh, empty --user-data-dir under `work_dir` and the
// flags that keep a headless Chromium off the network here (no
// background networking, updates or sync; --no-sandbox as root).
//
// Thread safety: one thread per object.
#ifndef FENCEGATE_TESTS_TESTING_HEADLESS_CHROMIUM_H_
#define FENCEGATE_TESTS_TESTING_HEADLESS_CHROMIUM_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "google/protobuf/struct.pb.h"
#include "harness/child_process.h"

namespace fencegate::testing {

inline constexpr char kChromium[] = "/usr/bin/chromium";

// The rendered DOM of `url` (chromium --headless --dump-dom).
absl::StatusOr<std::string> DumpDom(const std::string& url, const std::string& work_dir,
                                    absl::Duration timeout = absl::Seconds(60));

struct PageLayout {
  int scroll_width = 0;        // document.documentElement.scrollWidth
  int client_width = 0;        // document.documentElement.clientWidth
  int inner_width = 0;         // window.innerWidth
  std::string screenshot_png;  // the whole page
  bool ScrollsSideways() const { return scroll_width > client_width; }
};

class HeadlessChromium {
 public:
  static absl::StatusOr<std::unique_ptr<HeadlessChromium>> Start(
      const std::string& work_dir);
  ~HeadlessChromium();  // closes the browser

  // Loads `url` in a `width` x `height` mobile screen (device scale 1,
  // the page's viewport meta honoured) and measures it once loaded.
  absl::StatusOr<PageLayout> Load(const std::string& url, int width, int height);

 private:
  HeadlessChromium() = default;
  // Sends one command (of the page's session if `session`) and returns its
  // result; events meanwhile are kept for WaitForEvent().
  absl::StatusOr<google::protobuf::Struct> Call(const std::string& method,
                                                const google::protobuf::Struct& params,
                                                bool session);
  absl::Status WaitForEvent(const std::string& method);
  // The next message, up to the deadline.
  absl::StatusOr<google::protobuf::Struct> Read();

  std::unique_ptr<ChildProcess> process_;
  std::string session_;
  int next_id_ = 1;
  std::string buffer_;
  std::vector<std::string> events_;  // methods of events seen, in order
  absl::Time deadline_;
};

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_TESTING_HEADLESS_CHROMIUM_H_
