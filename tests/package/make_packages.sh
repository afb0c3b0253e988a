#!/usr/bin/env bash
# The ctest fixture package.debs (tests/package_tests.cmake): the Debian
# packages of this build tree, made by CPack into WORK/debs without
# building anything (what they hold was built before the tests), then
# unpacked together with dpkg -x into WORK/root, a throwaway root (with the
# system's units and /bin/kill beside them, which the units name), and each
# package's control files with dpkg-deb -e into WORK/control/<package>.
# Prints how long CPack took.
#   make_packages.sh BUILD_DIR WORK
set -euo pipefail
build="$1" work="$2"
rm -rf "$work" && mkdir -p "$work/debs" "$work/root" "$work/control"
SECONDS=0
(cd "$build" && cpack -G DEB -B "$work/cpack" > "$work/cpack.log")
mv "$work"/cpack/*.deb "$work/debs/"
rm -rf "$work/cpack"
for deb in "$work"/debs/*.deb; do
  package=$(dpkg-deb --field "$deb" Package)
  dpkg -x "$deb" "$work/root"
  dpkg-deb -e "$deb" "$work/control/$package"
done
# What the units name from outside the packages, for systemd-analyze verify
# --root: the system's own units (targets) and /bin/kill (ExecReload).
mkdir -p "$work/root/bin"
cp -n /bin/kill "$work/root/bin/"
cp -rn /lib/systemd/system/. "$work/root/lib/systemd/system/"
echo "packages made and unpacked in $SECONDS s:"
ls -l "$work/debs"
