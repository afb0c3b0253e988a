#include "harness/temp_dir.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace fencegate::testing {

TempDir::TempDir(const std::string& base) {
  const char* env = std::getenv("TMPDIR");
  const std::string parent = !base.empty() ? base : env && *env ? env : "/tmp";
  std::string pattern = parent + "/fencegate-test-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp failed for " + pattern);
  }
  path_ = pattern;
}

TempDir TempDir::InMemory() {
  constexpr char kShm[] = "/dev/shm";
  return TempDir(access(kShm, W_OK | X_OK) == 0 ? kShm : "");
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace fencegate::testing
