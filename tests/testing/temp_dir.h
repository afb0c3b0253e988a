// TempDir: a fresh directory under $TMPDIR (or /tmp), removed with its
// contents when the object dies. Hermetic tests keep their SQLite files here.
#ifndef FENCEGATE_TESTS_TESTING_TEMP_DIR_H_
#define FENCEGATE_TESTS_TESTING_TEMP_DIR_H_

#include <string>

namespace fencegate::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_TESTING_TEMP_DIR_H_
