// Reading what a child process wrote: whole files, their tails (a server's
// log in a failure message), and atomic replacement of small control files
// a child reads (a failpoint or fake-time file).
//
// Thread safety: free functions.
#ifndef FENCEGATE_HARNESS_LOG_FILE_H_
#define FENCEGATE_HARNESS_LOG_FILE_H_

#include <cstddef>
#include <string>

namespace fencegate::testing {

// The file's contents; "" if it cannot be read.
std::string ReadWholeFile(const std::string& path);
// Its last `bytes` bytes.
std::string FileTail(const std::string& path, size_t bytes = 3000);
// Replaces `path` with `text` through a temp file and rename(2), so a reader
// never sees a half-written file. False if it could not be written.
bool WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace fencegate::testing

#endif  // FENCEGATE_HARNESS_LOG_FILE_H_
