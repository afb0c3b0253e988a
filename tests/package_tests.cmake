# The Debian packages (label package; docs/operations.md "Install on
# Debian"): the fixture package.debs makes them with CPack from this build
# tree, as ./scripts/package does, builds nothing, and unpacks them into a
# throwaway root (tests/package/make_packages.sh); package_tests
# (tests/package/package_test.cc) checks their contents, lintian, the
# systemd units, the binaries and flags files from the root, the Python
# client imported from the root, and the maintainer scripts. Not in the
# sanitized trees. Needs help2man (the man pages), python3 and
# grpc_python_plugin (the Python package's stubs), lintian, dpkg-dev,
# systemd-analyze, and python3-grpcio and python3-protobuf (what the Python
# client imports) (scripts/install-deps).
if(FENCEGATE_SANITIZE OR NOT TARGET fencegate_man_pages OR NOT TARGET fencegate_python_stubs)
  return()
endif()

set(fencegate_package_test_dir ${CMAKE_CURRENT_BINARY_DIR}/package-test)
add_test(NAME package.debs
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/package/make_packages.sh
    ${CMAKE_BINARY_DIR} ${fencegate_package_test_dir})
set_tests_properties(package.debs PROPERTIES  # CPack and xz keep a core busy
  LABELS package TIMEOUT 600 FIXTURES_SETUP fencegate_debs PROCESSORS 2)

add_executable(package_tests package/package_test.cc)
target_link_libraries(package_tests PRIVATE fencegate_testing GTest::gmock GTest::gtest_main)
fencegate_test_code(package_tests)
target_compile_definitions(package_tests PRIVATE
  FENCEGATE_PACKAGE_TEST_DIR="${fencegate_package_test_dir}"
  FENCEGATE_INSTALL_LIBDIR="${CMAKE_INSTALL_LIBDIR}"
  FENCEGATE_EXPECTED_VERSION="${PROJECT_VERSION}"
  FENCEGATE_PYTHON_SOURCE_DIR="${PROJECT_SOURCE_DIR}/clients/python/fencegate"
  FENCEGATE_PYTHON_DOCS="${PROJECT_SOURCE_DIR}/docs/python.md"
  FENCEGATE_EXPECTED_SOVERSION="${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}")
gtest_discover_tests(package_tests
  TEST_PREFIX "package."
  DISCOVERY_TIMEOUT 60
  PROPERTIES LABELS package TIMEOUT 600 FIXTURES_REQUIRED fencegate_debs)
fencegate_test_targets(LABELS package TARGETS package_tests fencegate_packaged)
