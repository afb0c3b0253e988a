// TempDir: a fresh directory under $TMPDIR (or /tmp), removed with its
// contents when the object dies. Hermetic tests keep their SQLite files here.
// TempDir::InMemory() puts it on a memory-backed file system where there is
// one, for tests that commit thousands of SQLite transactions and crash only
// the process, never the machine: their fsyncs then cost nothing.
#ifndef FENCEGATE_HARNESS_TEMP_DIR_H_
#define FENCEGATE_HARNESS_TEMP_DIR_H_

#include <string>

namespace fencegate::testing {

class TempDir {
 public:
  // `base`: the parent directory; empty means $TMPDIR, or /tmp.
  explicit TempDir(const std::string& base = "");
  // Under /dev/shm when it is a writable directory, else as TempDir().
  static TempDir InMemory();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace fencegate::testing

#endif  // FENCEGATE_HARNESS_TEMP_DIR_H_
