# What `cmake --install` puts where (docs/operations.md, "Install"), by
# component; CPack makes one Debian package of each (cmake/package.cmake):
#
#   component    package                   files
#   lockservice  fencegate-lockservice     bin/fencegate-lockservice
#   gateway      fencegate-gateway         bin/fencegate-gateway
#   cli          fencegate-cli             bin/fencegate, share/fencegate/sql/
#                (the SQL fencing API's script, docs/sql-fencing.md)
#   client       libfencegate-client0.2    lib/libfencegate-client.so.0.2*
#   client_dev   libfencegate-client-dev   include/fencegate/ (the client's
#                public headers, and the generated fencegate/v1/*.pb.h),
#                lib/libfencegate-client.{so,a}, lib/cmake/fencegate/
#                (find_package(fencegate 0.2 CONFIG) -> fencegate::client,
#                fencegate::client_static), lib/pkgconfig/fencegate-client.pc,
#                share/fencegate/proto/ (the .proto files, for clients in
#                other languages)
#   python       python3-fencegate         lib/python3/dist-packages/fencegate/
#                (the Python client with its generated stubs; Debian's
#                packages only, below)
#
# The Debian-only files of the server packages (systemd units, flags files
# under /etc, copyright and changelog) are in cmake/package.cmake, outside a
# plain `cmake --install`.
include(CMakePackageConfigHelpers)

set(FENCEGATE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/fencegate)

# What is installed is linked with full RELRO (-z now), as Debian's
# hardening flags ask of daemons (lintian: hardening-no-bindnow).
foreach(target fencegate-lockservice fencegate-gateway fencegate fencegate_client_shared)
  target_link_options(${target} PRIVATE LINKER:-z,now)
endforeach()

install(TARGETS fencegate-lockservice RUNTIME COMPONENT lockservice)
install(TARGETS fencegate-gateway RUNTIME COMPONENT gateway)
install(TARGETS fencegate RUNTIME COMPONENT cli)

install(TARGETS fencegate_client_shared fencegate_client_static
  EXPORT fencegate-targets
  LIBRARY COMPONENT client NAMELINK_COMPONENT client_dev
  ARCHIVE COMPONENT client_dev
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/fencegate
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT client_dev)
install(DIRECTORY ${FENCEGATE_PROTO_BINARY_DIR}/fencegate/v1
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fencegate COMPONENT client_dev
  FILES_MATCHING PATTERN "*.pb.h")
install(DIRECTORY ${FENCEGATE_PROTO_SOURCE_DIR}/fencegate
  DESTINATION ${CMAKE_INSTALL_DATADIR}/fencegate/proto COMPONENT client_dev
  FILES_MATCHING PATTERN "*.proto")
install(FILES ${FENCEGATE_SQL_API_SCRIPT}
  DESTINATION ${CMAKE_INSTALL_DATADIR}/fencegate/sql COMPONENT cli)

# The Python client (clients/python/fencegate): its modules and py.typed,
# without bytecode and without stubs a developer generated into the source
# tree, then the stubs generated into the build tree (fencegate.v1,
# clients/python/CMakeLists.txt), into the directory of Debian's Python 3
# for modules of every 3.x. Beside it, fencegate-<version>.dist-info with a
# METADATA of name and version only (pyproject.toml holds the rest): what
# importlib.metadata needs to give fencegate.__version__, and pip to list
# the package (with no RECORD, pip will not uninstall what dpkg owns).
# EXCLUDE_FROM_ALL: that directory is on sys.path only under /usr, so a
# plain install to another prefix leaves the client out (a virtual
# environment gets it with pip: docs/python.md); CPack installs it.
if(TARGET fencegate_python_stubs)
  set(FENCEGATE_PYTHON_INSTALL_DIR lib/python3/dist-packages)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/clients/python/fencegate
    DESTINATION ${FENCEGATE_PYTHON_INSTALL_DIR} COMPONENT python EXCLUDE_FROM_ALL
    FILES_MATCHING PATTERN "*.py" PATTERN "py.typed"
    PATTERN "__pycache__" EXCLUDE PATTERN "v1" EXCLUDE)
  install(DIRECTORY ${FENCEGATE_PYTHON_STUBS_DIR}/fencegate/v1
    DESTINATION ${FENCEGATE_PYTHON_INSTALL_DIR}/fencegate
    COMPONENT python EXCLUDE_FROM_ALL
    FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
  set(dist_info fencegate-${PROJECT_VERSION}.dist-info)
  file(WRITE ${PROJECT_BINARY_DIR}/packaging/python/${dist_info}/METADATA
"Metadata-Version: 2.1
Name: fencegate
Version: ${PROJECT_VERSION}
")
  install(DIRECTORY ${PROJECT_BINARY_DIR}/packaging/python/${dist_info}
    DESTINATION ${FENCEGATE_PYTHON_INSTALL_DIR} COMPONENT python EXCLUDE_FROM_ALL)
endif()

# A stripped install (`cmake --install --strip`, and CPack) also drops what
# Debian's dh_strip drops: the .comment and .note sections, and from the
# static library its debug information (CMake strips only executables and
# shared libraries).
set(fencegate_strip_extra --remove-section=.comment --remove-section=.note)
function(fencegate_install_strip_extra component file)
  set(args ${ARGN})
  install(CODE "
    if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND \"${CMAKE_STRIP}\" ${fencegate_strip_extra} ${args}
        \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${file}\" COMMAND_ERROR_IS_FATAL ANY)
    endif()" COMPONENT ${component})
endfunction()
fencegate_install_strip_extra(lockservice ${CMAKE_INSTALL_BINDIR}/fencegate-lockservice)
fencegate_install_strip_extra(gateway ${CMAKE_INSTALL_BINDIR}/fencegate-gateway)
fencegate_install_strip_extra(cli ${CMAKE_INSTALL_BINDIR}/fencegate)
fencegate_install_strip_extra(client
  ${CMAKE_INSTALL_LIBDIR}/libfencegate-client.so.${PROJECT_VERSION})
fencegate_install_strip_extra(client_dev ${CMAKE_INSTALL_LIBDIR}/libfencegate-client.a
  --strip-debug --enable-deterministic-archives)

install(EXPORT fencegate-targets
  NAMESPACE fencegate::
  FILE fencegate-targets.cmake
  DESTINATION ${FENCEGATE_INSTALL_CMAKEDIR} COMPONENT client_dev)
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/fencegate-config.cmake.in
  ${PROJECT_BINARY_DIR}/packaging/fencegate-config.cmake
  INSTALL_DESTINATION ${FENCEGATE_INSTALL_CMAKEDIR})
# 0.x: a minor release may change the API, so 0.2 accepts 0.2.* only.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/packaging/fencegate-config-version.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/packaging/fencegate-config.cmake
  ${PROJECT_BINARY_DIR}/packaging/fencegate-config-version.cmake
  DESTINATION ${FENCEGATE_INSTALL_CMAKEDIR} COMPONENT client_dev)

# pkg-config: relocatable (paths from ${pcfiledir}), so the same file works
# under any prefix the tree is installed to.
file(RELATIVE_PATH FENCEGATE_PC_PREFIX
  /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" FENCEGATE_PC_PREFIX "${FENCEGATE_PC_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/fencegate-client.pc.in
  ${PROJECT_BINARY_DIR}/packaging/fencegate-client.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/packaging/fencegate-client.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT client_dev)
