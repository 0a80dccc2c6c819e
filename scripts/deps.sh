#!/bin/sh
# deps.sh - check the build and test dependencies; install them as root.
#
# Needs: a C compiler, make, pkg-config, the -dev packages of libxml2,
# zlib, libbz2, liblzma and libarchive, and bats for the CLI tests.  As root, missing
# Debian packages are installed with apt-get (running apt-get update
# first if the install fails for want of package lists).  Otherwise the
# exact apt-get line is printed and the script fails.
# With --cross it checks (and installs) what make check-cross needs
# instead; with --aarch64, what make check-aarch64 needs.
set -u

missing=""
need() { missing="$missing $1"; }

# What make check-cross adds: an aarch64 cross compiler and C library,
# and qemu-user to run what it builds.
cross_deps() {
	command -v "${CROSS:-aarch64-linux-gnu-}gcc" >/dev/null 2>&1 || need gcc-aarch64-linux-gnu
	[ -e /usr/aarch64-linux-gnu/lib/libc.a ] || need libc6-dev-arm64-cross
	command -v qemu-aarch64 >/dev/null 2>&1 || need qemu-user
}

# What make check-aarch64 adds to cross_deps: Debian's arm64 -dev
# packages of the libraries (multiarch: the arm64 architecture must be
# added to dpkg first, which is done here as root, as the install is).
ARM64_LIBS="libxml2-dev:arm64 zlib1g-dev:arm64 libarchive-dev:arm64 liblzma-dev:arm64 libbz2-dev:arm64"
aarch64_deps() {
	cross_deps
	for p in $ARM64_LIBS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || need "$p"
	done
}
add_arm64() {
	case "$missing" in *:arm64*) ;; *) return 0 ;; esac
	dpkg --print-foreign-architectures 2>/dev/null | grep -qx arm64 && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: run as root first:  dpkg --add-architecture arm64 && apt-get update" >&2
		return 0
	fi
	echo "deps: adding the arm64 architecture to dpkg" >&2
	dpkg --add-architecture arm64 && apt-get update -q >&2
}

# What make, make check and make demo need.
base_deps() {
	command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || need gcc
	command -v make >/dev/null 2>&1 || need make
	command -v pkg-config >/dev/null 2>&1 || need pkg-config
	command -v bats >/dev/null 2>&1 || need bats
	command -v xmllint >/dev/null 2>&1 || need libxml2-utils
	command -v python3 >/dev/null 2>&1 || need python3
	command -v tar >/dev/null 2>&1 || need tar
	if command -v pkg-config >/dev/null 2>&1; then
		pkg-config --exists libxml-2.0 || need libxml2-dev
		pkg-config --exists zlib || need zlib1g-dev
		pkg-config --exists libarchive || need libarchive-dev
		pkg-config --exists liblzma || need liblzma-dev
	else
		need libxml2-dev; need zlib1g-dev; need libarchive-dev; need liblzma-dev
	fi
	# libbz2 has no pkg-config file
	[ -e /usr/include/bzlib.h ] || need libbz2-dev
}

case "${1:-}" in
--cross) cross_deps ;;
--aarch64) aarch64_deps ;;
*) base_deps ;;
esac

[ -z "$missing" ] && exit 0
add_arm64

line="apt-get install -y$missing"
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages:$missing" >&2
	echo "deps: run as root:  $line" >&2
	exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "deps: missing:$missing (and no apt-get on this machine)" >&2
	exit 1
fi
echo "deps: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q $missing >&2; then
	echo "deps: install failed; updating package lists and trying again" >&2
	apt-get update -q >&2 && apt-get install -y -q $missing >&2 || {
		echo "deps: could not install:$missing" >&2
		exit 1
	}
fi
exit 0
