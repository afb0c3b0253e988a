#include "examples/demo/server_launcher.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "examples/demo/interrupt.h"

namespace fencegate::demo {

std::string FileTail(const std::string& path, size_t bytes) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string all = text.str();
  return all.size() > bytes ? all.substr(all.size() - bytes) : all;
}

absl::StatusOr<RunningServer> StartServer(const std::string& binary,
                                          const std::string& name,
                                          const std::string& work_dir,
                                          const std::vector<std::string>& extra_args,
                                          absl::Duration timeout) {
  const std::string port_file = absl::StrCat(work_dir, "/", name, ".port");
  RunningServer server;
  server.log_path = absl::StrCat(work_dir, "/", name, ".log");
  ChildProcess::Options options;
  options.argv = {binary, "--listen=127.0.0.1:0", "--port_file=" + port_file,
                  absl::StrCat("--db=", work_dir, "/", name, ".db")};
  options.argv.insert(options.argv.end(), extra_args.begin(), extra_args.end());
  options.stderr_path = server.log_path;
  options.death_signal = SIGTERM;  // if the demo dies, the server stops cleanly
  if (access(binary.c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat("no server binary at ", binary,
                                            "; build it first (./scripts/build)"));
  }
  absl::StatusOr<std::unique_ptr<ChildProcess>> process = ChildProcess::Start(options);
  if (!process.ok()) return process.status();
  server.process = *std::move(process);

  const absl::Time give_up = absl::Now() + timeout;
  for (;;) {
    if (absl::Status s = CheckInterrupted(); !s.ok()) return s;
    if (!server.process->Running()) {
      return absl::InternalError(absl::StrCat(name, " exited during start-up; its log:\n",
                                              FileTail(server.log_path)));
    }
    std::ifstream in(port_file);
    std::string text((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &server.port) &&
        server.port > 0) {
      server.address = absl::StrCat("127.0.0.1:", server.port);
      return server;
    }
    if (absl::Now() > give_up) {
      return absl::DeadlineExceededError(absl::StrCat(
          name, " did not start serving within ", absl::FormatDuration(timeout),
          "; its log:\n", FileTail(server.log_path)));
    }
    absl::SleepFor(absl::Milliseconds(10));  // poll interval, under a deadline
  }
}

}  // namespace fencegate::demo
