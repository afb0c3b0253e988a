# The installed tree (label install): `cmake --install` of this build into a
# temporary prefix (the test install.prefix, a ctest fixture the others
# need), then install_tests (tests/install/install_test.cc): its layout,
# public headers that compile alone, examples/consumer built out of tree
# with find_package and with pkg-config and run against the installed
# servers, the package version file. Not in the sanitized trees: nobody
# installs those.
if(FENCEGATE_SANITIZE)
  return()
endif()

set(fencegate_install_test_dir ${CMAKE_CURRENT_BINARY_DIR}/install-test)
add_test(NAME install.prefix
  COMMAND bash -c [[rm -rf "$1" && mkdir -p "$1" && exec "$2" --install "$3" --prefix "$1/prefix"]]
    _ ${fencegate_install_test_dir} ${CMAKE_COMMAND} ${CMAKE_BINARY_DIR})
set_tests_properties(install.prefix PROPERTIES
  LABELS install TIMEOUT 120 FIXTURES_SETUP fencegate_installed)

add_executable(install_tests install/install_test.cc)
target_link_libraries(install_tests PRIVATE fencegate_testing GTest::gmock GTest::gtest_main)
fencegate_test_code(install_tests)
target_compile_definitions(install_tests PRIVATE
  FENCEGATE_INSTALL_PREFIX="${fencegate_install_test_dir}/prefix"
  FENCEGATE_INSTALL_LIBDIR="${CMAKE_INSTALL_LIBDIR}"
  FENCEGATE_INSTALL_TEST_DIR="${fencegate_install_test_dir}"
  FENCEGATE_CONSUMER_SOURCE_DIR="${PROJECT_SOURCE_DIR}/examples/consumer"
  FENCEGATE_VERSION_CHECK_SOURCE_DIR="${CMAKE_CURRENT_SOURCE_DIR}/install/version_check"
  FENCEGATE_CMAKE="${CMAKE_COMMAND}"
  FENCEGATE_CXX="${CMAKE_CXX_COMPILER}"
  FENCEGATE_EXPECTED_VERSION="${PROJECT_VERSION}"
  FENCEGATE_EXPECTED_SOVERSION="${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}")
gtest_discover_tests(install_tests
  TEST_PREFIX "install."
  DISCOVERY_TIMEOUT 60
  PROPERTIES LABELS install TIMEOUT 900 FIXTURES_REQUIRED fencegate_installed)
# install.prefix installs what these are.
fencegate_test_targets(LABELS install TARGETS install_tests
  fencegate-lockservice fencegate-gateway fencegate
  fencegate_client_shared fencegate_client_static)
