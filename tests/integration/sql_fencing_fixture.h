// What the SQL fencing tests share: the SQLSTATE a piece of libpqxx work
// failed with.
//
// Thread safety: free functions.
#ifndef FENCEGATE_TESTS_INTEGRATION_SQL_FENCING_FIXTURE_H_
#define FENCEGATE_TESTS_INTEGRATION_SQL_FENCING_FIXTURE_H_

#include <exception>
#include <string>

#include "absl/functional/function_ref.h"
#include "pqxx/except"

namespace fencegate::testing {

// Runs `work`: "" if it returned, the SQLSTATE of the pqxx::sql_error it
// threw (also for the errors libpqxx throws without one: 42501, and
// 40001 and 40P01, which it throws as transaction_rollback), or "exception: <what>" for
// any other exception.
inline std::string SqlStateOf(absl::FunctionRef<void()> work) {
  try {
    work();
    return "";
  } catch (const pqxx::insufficient_privilege&) {
    return "42501";  // libpqxx throws it without its SQLSTATE
  } catch (const pqxx::sql_error& e) {
    return e.sqlstate().empty() ? std::string("no SQLSTATE: ") + e.what() : e.sqlstate();
  } catch (const pqxx::serialization_failure&) {
    return "40001";
  } catch (const pqxx::deadlock_detected&) {
    return "40P01";
  } catch (const std::exception& e) {
    return std::string("exception: ") + e.what();
  }
}

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_INTEGRATION_SQL_FENCING_FIXTURE_H_
