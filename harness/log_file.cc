#include "harness/log_file.h"

#include <stdio.h>

#include <fstream>
#include <sstream>

namespace fencegate::testing {

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string FileTail(const std::string& path, size_t bytes) {
  std::string all = ReadWholeFile(path);
  return all.size() > bytes ? all.substr(all.size() - bytes) : all;
}

bool WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::trunc);
    out << text;
    if (!out) return false;
  }
  return rename(temp.c_str(), path.c_str()) == 0;
}

}  // namespace fencegate::testing
