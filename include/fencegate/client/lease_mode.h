// The client library's name for the kind of lease a client asks for and
// holds: the same type as fencegate::LeaseMode (fencegate/lease_mode.h),
// which says what each kind allows. Kept so that code written against
// fencegate::client::LeaseMode compiles unchanged.
#ifndef FENCEGATE_CLIENT_LEASE_MODE_H_
#define FENCEGATE_CLIENT_LEASE_MODE_H_

#include "fencegate/lease_mode.h"

namespace fencegate::client {

using ::fencegate::LeaseMode;
using ::fencegate::LeaseModeName;

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_LEASE_MODE_H_
