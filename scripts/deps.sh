#!/usr/bin/env bash
# Install the Debian packages needed to build and test twheel, if missing.
#
# Usage: scripts/deps.sh [EXTRA_PACKAGE...]
#
# Idempotent: checks each package with dpkg-query and only runs
# apt-get (update + install) when at least one package is missing.
# Prints nothing when everything is already installed.
set -euo pipefail

usage() {
	echo "usage: $0 [EXTRA_PACKAGE...]" >&2
	exit 2
}

for arg in "$@"; do
	case "$arg" in
	-h | --help) usage ;;
	-*) echo "$0: unknown option: $arg" >&2; usage ;;
	esac
done

packages=(
	make
	gcc
	libc6-dev
	linux-image-amd64
	linux-headers-amd64
	linux-source-6.1
	# the kernel matrix (scripts/lib/kernels.sh): bookworm's other series
	# and the PREEMPT_RT flavour of both
	linux-image-rt-amd64
	linux-headers-rt-amd64
	linux-image-6.12-amd64
	linux-headers-6.12-amd64
	linux-image-6.12-rt-amd64
	linux-headers-6.12-rt-amd64
	# the syscall fuzzer of the debug tier (make fuzz)
	trinity
	qemu-system-x86
	busybox-static
	cpio
	kmod
	xz-utils
	sparse
	python3
	# checkpatch.pl's SPDX check (scripts/spdxcheck.py) in the series (make series)
	python3-ply
	python3-git
	dkms
	libsqlite3-dev
	sqlite3
	pkg-config
	groff-base
	man-db
	iproute2
	clang
	libclang-rt-14-dev
	gcc-multilib
	liburing-dev
	# the Go package (userspace/go): Debian's toolchain and x/sys, so
	# that it builds with no network
	golang-go
	golang-golang-x-sys-dev
	# the timer libraries the bench compares (userspace/bench/c_lib*.c)
	libev-dev
	libevent-dev
	libuv1-dev
	# lib.mk's install (selftests/Makefile)
	rsync
	# the Debian packages (make deb, scripts/test-deb.sh)
	debhelper
	dh-dkms
	dh-python
	lintian
	# module BTF (scripts/btf-kdir.sh, make BTF=1)
	libelf-dev
	pahole
	bpftool
	# BPF programs (clang -target bpf, bpftool gen skeleton, libbpf 1.1):
	# selftests/twheel_bpf_test, presence --xdp
	libbpf-dev
	# pgrep (the examples' stalled-service test)
	procps
	# the benchmark's report (render.py's plots): make check renders the
	# committed run again (docs/bench/raw)
	gnuplot-nox
	"$@"
)

missing=()
for pkg in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	if [[ "$status" != "install ok installed" ]]; then
		missing+=("$pkg")
	fi
done

if ((${#missing[@]} == 0)); then
	exit 0
fi

sudo=()
if [[ "$(id -u)" -ne 0 ]]; then
	sudo=(sudo)
fi

# On a machine that runs other work, another apt or dpkg (unattended
# upgrades, a second checkout's deps) may hold the lock: wait for it.
lock=(-o DPkg::Lock::Timeout=600)
echo "deps.sh: installing missing packages: ${missing[*]}" >&2
"${sudo[@]}" apt-get "${lock[@]}" update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
	apt-get "${lock[@]}" install -y --no-install-recommends "${missing[@]}"
