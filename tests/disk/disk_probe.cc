// disk_probe FILE OP...: runs file operations on FILE, printing one word
// per operation ("ok", or the errno's name), for the disk-fault preload's
// own tests (disk_preload_test.cc), which run it under the preload.
//   w:OFFSET:TEXT  pwrite TEXT at OFFSET
//   s              fdatasync
//   t:SIZE         ftruncate to SIZE
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: disk_probe FILE OP...\n");
    return 2;
  }
  int fd = open(argv[1], O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    perror(argv[1]);
    return 1;
  }
  for (int i = 2; i < argc; ++i) {
    std::string op = argv[i];
    int result = -1;
    if (op.rfind("w:", 0) == 0) {
      size_t colon = op.find(':', 2);
      off_t offset = std::strtoll(op.substr(2, colon - 2).c_str(), nullptr, 10);
      std::string text = op.substr(colon + 1);
      ssize_t n = pwrite(fd, text.data(), text.size(), offset);
      result = n == static_cast<ssize_t>(text.size()) ? 0 : -1;
    } else if (op == "s") {
      result = fdatasync(fd);
    } else if (op.rfind("t:", 0) == 0) {
      result = ftruncate(fd, std::strtoll(op.c_str() + 2, nullptr, 10));
    } else {
      fprintf(stderr, "unknown operation %s\n", op.c_str());
      return 2;
    }
    printf("%s%s", i > 2 ? " " : "", result == 0 ? "ok" : strerrorname_np(errno));
  }
  printf("\n");
  return close(fd) == 0 ? 0 : 1;
}
