// fencegate-microbench's main: Google Benchmark's, plus --version like
// every other fencegate binary (common/build_info/build_info.h). Google
// Benchmark parses its own flags (--benchmark_filter=...), so --version is
// looked for before it sees the command line.
#include <cstring>
#include <iostream>

#include "benchmark/benchmark.h"
#include "common/build_info/build_info.h"

int main(int argc, char** argv) {
  fencegate::InitBuildInfo("fencegate-microbench");
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--version") == 0) {
      std::cout << fencegate::VersionLine() << "\n";
      return 0;
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
