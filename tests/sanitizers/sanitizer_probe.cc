// Plants one bug of the kind named by argv[1], so a ctest of the ASan+UBSan
// build (tests/sanitizers/CMakeLists.txt) can prove the sanitizers catch it
// and that their report fails the process:
//   heap-overflow     a read one past a heap array        (ASan)
//   use-after-free    a read of freed memory              (ASan)
//   signed-overflow   INT_MAX + 1                         (UBSan)
//   leak              memory never freed                  (LeakSanitizer)
//   none              no bug: must exit 0
#include <climits>
#include <cstdio>
#include <cstring>

namespace {

// Keeps the compiler from proving the bug away.
template <typename T>
T Opaque(T value) {
  asm volatile("" : "+r"(value));
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  const char* bug = argc > 1 ? argv[1] : "none";
  if (std::strcmp(bug, "heap-overflow") == 0) {
    int* array = new int[4]();
    const int value = array[Opaque(4)];
    delete[] array;
    return value;
  }
  if (std::strcmp(bug, "use-after-free") == 0) {
    int* value = new int(7);
    delete value;
    return *Opaque(value);
  }
  if (std::strcmp(bug, "signed-overflow") == 0) {
    const int sum = Opaque(INT_MAX) + 1;
    return sum == 0 ? 1 : 0;
  }
  if (std::strcmp(bug, "leak") == 0) {
    [[maybe_unused]] static int* kept;
    kept = new int[16];
    kept = nullptr;
    return Opaque(0);
  }
  std::printf("no bug planted\n");
  return 0;
}
