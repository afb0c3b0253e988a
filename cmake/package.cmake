# The Debian packages, made by CPack from this build tree (./scripts/package,
# docs/operations.md "Install on Debian"). One package per install
# component (cmake/install.cmake), plus what Debian wants beside the
# binaries:
#
#   fencegate-lockservice, fencegate-gateway: the systemd unit
#     (packaging/fencegate-server.service.in), /etc/fencegate/<name>.flags
#     (a conffile, read with --flagfile), the maintainer scripts that make
#     the `fencegate` system user and /var/lib/fencegate
#     (packaging/debian/*.in), a man page (help2man, from --help)
#   fencegate-cli: the CLI and its man page
#   libfencegate-client<major>.<minor> (0.2): the shared client library (its
#     soname's package)
#   libfencegate-client-dev: headers, the static library, the CMake package,
#     pkg-config, the .proto files
#   python3-fencegate: the Python client with its generated stubs
#     (Architecture: all), and the maintainer scripts that byte-compile it
#     (packaging/debian/python-*)
# and in each, /usr/share/doc/<package>/copyright and changelog.Debian.gz,
# and the lintian overrides, each with its reason
# (packaging/debian/lintian-overrides).
#
# These extra files are EXCLUDE_FROM_ALL: a plain `cmake --install` (any
# prefix) leaves /etc and /lib/systemd alone; CPack installs them, component
# by component. Binaries are stripped (CPACK_STRIP_FILES); a build type with
# debug info (./build is RelWithDebInfo) keeps its symbols in the build
# tree.
set(FENCEGATE_PACKAGE_MAINTAINER
  "fencegate maintainers <maintainers@users.noreply.a-seed-18c98b25.example>"
  CACHE STRING "Maintainer field of the Debian packages")
set(FENCEGATE_DEBIAN_REVISION 1 CACHE STRING "Debian revision of the packages (<version>-<this>)")
set(fencegate_deb_version ${PROJECT_VERSION}-${FENCEGATE_DEBIAN_REVISION})
set(fencegate_packaging_dir ${PROJECT_BINARY_DIR}/packaging)
set(fencegate_client_package
  libfencegate-client${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})

# ---------------------------------------------------------------- the files
# /usr/share/doc/<package>/changelog.Debian.gz: one entry for this build,
# dated by its commit (reproducible), gzip -9n as Debian wants it.
if(fencegate_git_sha STREQUAL "")
  string(TIMESTAMP fencegate_changelog_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
  set(fencegate_changelog_source "a source tree without git")
else()
  execute_process(
    COMMAND git -C ${PROJECT_SOURCE_DIR} log -1 --format=%cD
    OUTPUT_VARIABLE fencegate_changelog_date OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(fencegate_changelog_source "git ${fencegate_git_sha}")
endif()
file(WRITE ${fencegate_packaging_dir}/changelog.Debian
"fencegate (${fencegate_deb_version}) unstable; urgency=medium

  * fencegate ${PROJECT_VERSION}, packaged by ./scripts/package from
    ${fencegate_changelog_source}.

 -- ${FENCEGATE_PACKAGE_MAINTAINER}  ${fencegate_changelog_date}
")
execute_process(
  COMMAND gzip -9nc ${fencegate_packaging_dir}/changelog.Debian
  OUTPUT_FILE ${fencegate_packaging_dir}/changelog.Debian.gz
  RESULT_VARIABLE fencegate_gzip_result)
if(NOT fencegate_gzip_result EQUAL 0)
  message(FATAL_ERROR "gzip of the Debian changelog failed: ${fencegate_gzip_result}")
endif()

# Man pages from each binary's --help and --version (help2man), at build
# time: the target fencegate_man_pages, part of the default build (the
# package tests pack the tree as CI built it; a second each).
find_program(FENCEGATE_HELP2MAN help2man)
set(fencegate_man_pages "")
function(fencegate_man_page target section_name description)
  set(page ${fencegate_packaging_dir}/man/${target}.1)
  add_custom_command(OUTPUT ${page}.gz
    COMMAND ${CMAKE_COMMAND} -E make_directory ${fencegate_packaging_dir}/man
    COMMAND ${FENCEGATE_HELP2MAN} --no-info --no-discard-stderr
      --name=${description} --section=1 --source=fencegate
      --version-string=${PROJECT_VERSION}
      --output=${page} $<TARGET_FILE:${target}>
    COMMAND gzip -9nf ${page}
    DEPENDS ${target}
    COMMENT "Writing the man page of ${target} (help2man)"
    VERBATIM)
  set(fencegate_man_pages ${fencegate_man_pages} ${page}.gz PARENT_SCOPE)
  install(FILES ${page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
    COMPONENT ${section_name} EXCLUDE_FROM_ALL)
endfunction()
if(FENCEGATE_HELP2MAN)
  fencegate_man_page(fencegate-lockservice lockservice "lock service with fencing tokens")
  fencegate_man_page(fencegate-gateway gateway "storage gateway that refuses stale fencing tokens")
  fencegate_man_page(fencegate cli "command-line client of the fencegate lock service and gateway")
  add_custom_target(fencegate_man_pages ALL DEPENDS ${fencegate_man_pages})
endif()

# copyright, changelog and lintian overrides of `package` (component `component`).
function(fencegate_package_docs component package)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/debian/copyright
                ${fencegate_packaging_dir}/changelog.Debian.gz
    DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${package}
    COMPONENT ${component} EXCLUDE_FROM_ALL)
  # Those of every package, then those of this one
  # (packaging/debian/<component>.lintian-overrides: by component, as the
  # client library's package name follows its soname), if any.
  file(READ ${PROJECT_SOURCE_DIR}/packaging/debian/lintian-overrides overrides)
  set(own ${PROJECT_SOURCE_DIR}/packaging/debian/${component}.lintian-overrides)
  if(EXISTS ${own})
    file(READ ${own} own_overrides)
    string(APPEND overrides "${own_overrides}")
  endif()
  file(WRITE ${fencegate_packaging_dir}/lintian/${package} "${overrides}")
  install(FILES ${fencegate_packaging_dir}/lintian/${package}
    DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
    COMPONENT ${component} EXCLUDE_FROM_ALL)
endfunction()

# A server's unit, flags file and maintainer scripts.
#   program      fencegate-lockservice
#   flags        its flags file under /etc/fencegate
#   state        what the unit's comment says lives in /var/lib/fencegate
#   state_files  what its default flags put there (deleted on purge)
function(fencegate_server_package component program flags description state state_files)
  set(FG_PROGRAM ${program})
  set(FG_FLAGS_FILE ${flags})
  set(FG_DESCRIPTION ${description})
  set(FG_STATE ${state})
  set(FG_STATE_FILES ${state_files})
  set(dir ${fencegate_packaging_dir}/${component})
  configure_file(${PROJECT_SOURCE_DIR}/packaging/fencegate-server.service.in
    ${dir}/${program}.service @ONLY)
  foreach(script postinst prerm postrm)
    configure_file(${PROJECT_SOURCE_DIR}/packaging/debian/${script}.in ${dir}/${script} @ONLY)
  endforeach()
  file(WRITE ${dir}/conffiles "/etc/fencegate/${flags}\n")
  install(FILES ${dir}/${program}.service DESTINATION /lib/systemd/system
    COMPONENT ${component} EXCLUDE_FROM_ALL)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/${flags} DESTINATION /etc/fencegate
    COMPONENT ${component} EXCLUDE_FROM_ALL)
  # An example of --policy (docs/security.md, "Authorization"), in both.
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/policy.example
    DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${program}/examples
    COMPONENT ${component} EXCLUDE_FROM_ALL)
  fencegate_package_docs(${component} ${program})
  string(TOUPPER ${component} c)
  set(CPACK_DEBIAN_${c}_PACKAGE_CONTROL_EXTRA
    ${dir}/postinst ${dir}/prerm ${dir}/postrm ${dir}/conffiles PARENT_SCOPE)
endfunction()

fencegate_server_package(lockservice fencegate-lockservice lockservice.flags
  "fencegate lock service: leases with fencing tokens"
  "the SQLite database of tokens and leases" "locks.db")
fencegate_server_package(gateway fencegate-gateway gateway.flags
  "fencegate gateway: storage that refuses stale fencing tokens"
  "the SQLite database of fences and objects, unless --storage names PostgreSQL"
  "objects.db")
fencegate_package_docs(cli fencegate-cli)
fencegate_package_docs(client ${fencegate_client_package})
fencegate_package_docs(client_dev libfencegate-client-dev)
if(TARGET fencegate_python_stubs)
  fencegate_package_docs(python python3-fencegate)
endif()

# ---------------------------------------------------------------- CPack
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME fencegate)
set(CPACK_PACKAGE_VENDOR fencegate)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${FENCEGATE_PACKAGE_MAINTAINER})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_THREADS 0)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL lockservice gateway cli client client_dev)
if(TARGET fencegate_python_stubs)
  list(APPEND CPACK_COMPONENTS_ALL python)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${FENCEGATE_DEBIAN_REVISION})
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)

# Descriptions: the summary line, then plain paragraphs separated by an
# empty line; CPack indents them as Debian's control format wants.
set(fencegate_about
"fencegate makes storage safe to use behind a lease lock: the lock service
hands out leases that carry a fencing token, a number that only grows, and
the gateway in front of storage refuses any write whose token is smaller
than one it has seen. A holder that was paused or cut off until its lease
expired can no longer overwrite a newer holder's data.")

set(CPACK_DEBIAN_LOCKSERVICE_PACKAGE_NAME fencegate-lockservice)
set(CPACK_DEBIAN_LOCKSERVICE_PACKAGE_SECTION net)
set(CPACK_DEBIAN_LOCKSERVICE_PACKAGE_DEPENDS "adduser, init-system-helpers (>= 1.52)")
set(CPACK_DEBIAN_LOCKSERVICE_DESCRIPTION "lock service with fencing tokens
${fencegate_about}

This package has the lock service, fencegate-lockservice: leases with
FIFO waits, renewals and reentrancy, tokens durable in SQLite or on an
etcd cluster, signed tokens and TLS; and a systemd unit that runs it as
the fencegate user, configured by /etc/fencegate/lockservice.flags.
")

set(CPACK_DEBIAN_GATEWAY_PACKAGE_NAME fencegate-gateway)
set(CPACK_DEBIAN_GATEWAY_PACKAGE_SECTION net)
set(CPACK_DEBIAN_GATEWAY_PACKAGE_DEPENDS "adduser, init-system-helpers (>= 1.52)")
set(CPACK_DEBIAN_GATEWAY_DESCRIPTION "storage gateway that refuses stale fencing tokens
${fencegate_about}

This package has the gateway, fencegate-gateway: objects and their fences
in one SQLite transaction (or several gateways on one PostgreSQL
database); and a systemd unit that runs it as the fencegate user,
configured by /etc/fencegate/gateway.flags.
")

set(CPACK_DEBIAN_CLI_PACKAGE_NAME fencegate-cli)
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION net)
set(CPACK_DEBIAN_CLI_DESCRIPTION "command-line client of the fencegate lock service and gateway
${fencegate_about}

This package has the command-line client, fencegate: acquire, renew and
release leases, write and read through the gateway with a token, make
signing keys; with exit codes for scripts.
")

# The shared library's package, named after its soname; its shlibs file
# (CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS, which CPack 3.25 has only for all
# packages at once) pins users to this exact version while it is 0.x. The
# loader's cache is refreshed by libc's ldconfig trigger (packaging/debian/
# client-triggers) rather than by maintainer scripts calling ldconfig, which
# CPack would otherwise write.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY "=")
set(CPACK_DEBIAN_CLIENT_PACKAGE_NAME ${fencegate_client_package})
set(CPACK_DEBIAN_CLIENT_PACKAGE_SECTION libs)
configure_file(${PROJECT_SOURCE_DIR}/packaging/debian/client-triggers
  ${fencegate_packaging_dir}/client/triggers COPYONLY)
foreach(script postinst postrm)
  configure_file(${PROJECT_SOURCE_DIR}/packaging/debian/client-${script}
    ${fencegate_packaging_dir}/client/${script} COPYONLY)
endforeach()
set(CPACK_DEBIAN_CLIENT_PACKAGE_CONTROL_EXTRA
  ${fencegate_packaging_dir}/client/triggers ${fencegate_packaging_dir}/client/postinst
  ${fencegate_packaging_dir}/client/postrm)
set(CPACK_DEBIAN_CLIENT_DESCRIPTION "C++ client library of fencegate
${fencegate_about}

This package has the shared library of the C++ client: LockClient, Lease
(renews itself, says when it is lost) and GatewayClient.
")

set(CPACK_DEBIAN_CLIENT_DEV_PACKAGE_NAME libfencegate-client-dev)
set(CPACK_DEBIAN_CLIENT_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_CLIENT_DEV_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_CLIENT_DEV_PACKAGE_DEPENDS
  "${fencegate_client_package} (= ${fencegate_deb_version}), libabsl-dev, libprotobuf-dev, libgrpc++-dev")
set(CPACK_DEBIAN_CLIENT_DEV_DESCRIPTION "C++ client library of fencegate (development files)
${fencegate_about}

This package has what a program needs to use the C++ client: its headers,
the static library, a CMake package (find_package(fencegate ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR} CONFIG),
target fencegate::client), a pkg-config file (fencegate-client), and the
definitions of fencegate's gRPC API (its .proto files), for clients in
other languages.
")

# The Python client's package, as Debian's dh_python3 would make it: pure
# Python, so Architecture all and a dependency on python3:any (the
# interpreter of any architecture; python3-grpcio brings the native one),
# 3.11 or later as pyproject.toml's requires-python; its imports by their
# Debian packages, as pyproject.toml's dependencies; psycopg only for
# fencegate.postgres, which nothing else imports (pyproject.toml's extra
# "postgres"). No bytecode in the package: postinst compiles it for the
# installed Python 3 versions and prerm deletes it
# (packaging/debian/python-postinst, python-prerm). The stubs import the
# protobuf runtime of the protoc that generated them (3.21, Debian 12's).
set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-fencegate)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
set(CPACK_DEBIAN_PYTHON_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS
  "python3:any (>= 3.11~), python3-grpcio (>= 1.51), python3-protobuf (>= 3.21)")
set(CPACK_DEBIAN_PYTHON_PACKAGE_SUGGESTS python3-psycopg)
foreach(script postinst prerm)
  configure_file(${PROJECT_SOURCE_DIR}/packaging/debian/python-${script}
    ${fencegate_packaging_dir}/python/${script} COPYONLY)
endforeach()
set(CPACK_DEBIAN_PYTHON_PACKAGE_CONTROL_EXTRA
  ${fencegate_packaging_dir}/python/postinst ${fencegate_packaging_dir}/python/prerm)
set(CPACK_DEBIAN_PYTHON_DESCRIPTION "Python client of fencegate
${fencegate_about}

This package has the Python 3 client, the module fencegate: LockClient,
Lease (renews itself, says when it is lost) and GatewayClient, the same
for asyncio in fencegate.aio, and run_fenced in fencegate.postgres, which
checks the fence inside a PostgreSQL transaction of your own (with
python3-psycopg).
")

include(CPack)

# What the packages hold: ./scripts/package builds this, then runs CPack.
add_custom_target(fencegate_packaged)
add_dependencies(fencegate_packaged fencegate-lockservice fencegate-gateway fencegate
  fencegate_client_shared fencegate_client_static)
if(TARGET fencegate_man_pages)
  add_dependencies(fencegate_packaged fencegate_man_pages)
endif()
if(TARGET fencegate_python_stubs)
  add_dependencies(fencegate_packaged fencegate_python_stubs)
endif()
