// The default options of the sanitizer runtimes, linked into every
// executable of a sanitized build (cmake/sanitizers.cmake), so a test binary,
// a server an integration test starts, a fuzz target and a binary run by
// hand all behave alike: the first report ends the process with a non-zero
// exit status, reports are symbolized, and only the suppressions below apply.
// $ASAN_OPTIONS, $UBSAN_OPTIONS, $TSAN_OPTIONS and $LSAN_OPTIONS still add to
// or override these for one run.
//
// Suppressions: each names one report that is provably not ours, and says
// why. None may match a frame of fencegate's own code.

#ifndef FENCEGATE_LLVM_SYMBOLIZER
#define FENCEGATE_LLVM_SYMBOLIZER ""
#endif

#define FENCEGATE_SANITIZER_HOOK extern "C" __attribute__((visibility("default"), used))

#define FENCEGATE_SYMBOLIZER ":external_symbolizer_path=" FENCEGATE_LLVM_SYMBOLIZER

FENCEGATE_SANITIZER_HOOK const char* __asan_default_options() {
  return "halt_on_error=1:detect_leaks=1:strict_string_checks=1"
         ":detect_stack_use_after_return=1:check_initialization_order=1"
         FENCEGATE_SYMBOLIZER;
}

FENCEGATE_SANITIZER_HOOK const char* __ubsan_default_options() {
  // -fno-sanitize-recover=all already makes every check fatal.
  return "halt_on_error=1:print_stacktrace=1" FENCEGATE_SYMBOLIZER;
}

FENCEGATE_SANITIZER_HOOK const char* __tsan_default_options() {
  // exitcode 66 tells a TSan report from an ordinary test failure.
  return "halt_on_error=1:exitcode=66:second_deadlock_stack=1" FENCEGATE_SYMBOLIZER;
}

FENCEGATE_SANITIZER_HOOK const char* __lsan_default_suppressions() {
  // libpq (Debian's libpq5, uninstrumented): when the server connection is
  // lost while libpqxx runs BEGIN for our PostgresStorage::BeginBatch
  // (PostgresStoreTest.ConnectionLost*), a PGresult that libpq allocated is
  // left unreachable. It is a *direct* leak: no object, ours or libpqxx's,
  // points to it (a pqxx::result we kept would own and free it), and no
  // fencegate code ever sees a raw PGresult. Matches only allocations made
  // by libpq's PQmakeEmptyPGresult.
  return "leak:PQmakeEmptyPGresult\n";
}

FENCEGATE_SANITIZER_HOOK const char* __tsan_default_suppressions() {
  return "";
}
