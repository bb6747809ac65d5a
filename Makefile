# SPDX-License-Identifier: GPL-2.0
#
# make              build kmod/twheel.ko for the running kernel, if its headers
#                   are installed, else for the newest kernel whose headers
#                   are (it says which); KVER=RELEASE picks another kernel,
#                   KDIR=DIR any build directory
# make BTF=1        the same with module BTF (pahole, resolve_btfids; for BPF
#                   kfuncs): Debian's 6.12 headers have what it takes, 6.1's
#                   get it from scripts/btf-kdir.sh's cached directory
# make check        install what is missing, then run every test tier
#                   (lint, host, packaging, QEMU guest); non-zero on failure
# make check-debug  the reliability tier: the same guest suites and a syscall
#                   fuzzer on a KASAN, lockdep, kmemleak, fault-injection,
#                   KUnit debug kernel built from the newest source Debian
#                   ships (sid's linux-source-7.2)
# make check-debug-rt  the same with PREEMPT_RT (lockdep on RT's locks)
# make fuzz         trinity against /dev/twheel on the debug kernel, long
#                   (FUZZ_SYSCALLS, default 500000; FUZZ_SEED)
# make bench        the benchmarks in the QEMU guest (about 15 minutes):
#                   docs/bench/results.md and its plots
# make lint         checkpatch --strict, sparse C=2, W=1, kernel-doc
# make series       the patch series for mainline into out/series (cover
#                   letter and patches), applied to sid's linux-source-7.2
#                   and checked there: checkpatch --strict per patch, the
#                   in-tree build per patch, W=1 and sparse, the selftests
# make install      module into /lib/modules/<kver>/extra (INSTALL_MOD_PATH),
#                   depmod, udev rule, modules-load.d entry, uapi header and
#                   the user-space parts (DESTDIR, PREFIX)
# make uninstall    the reverse
# make dkms-install register, build and install the module with DKMS
# make dkms-uninstall
# make deb          the Debian packages into out/deb (scripts/deb.sh:
#                   dpkg-buildpackage on a copy of the tree, lintian)
# make demo        build everything, boot the QEMU guest and run the presence
#                   service with 1,000,000 users (about a minute)
# make clean

PWD := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
# The kernel to build for: KVER if given, else the running one if its
# headers are installed, else the newest installed headers of any version.
ifeq ($(origin KDIR),undefined)
ifeq ($(KVER),)
KVER := $(shell bash -c '. $(PWD)/scripts/lib/kernels.sh && default_kver')
endif
KDIR := $(firstword $(wildcard /lib/modules/$(KVER)/build/Makefile /usr/src/linux-headers-$(KVER)/Makefile))
KDIR := $(patsubst %/Makefile,%,$(KDIR))
endif
VERSION := $(shell cat $(PWD)/kmod/VERSION)
# The kernel release KDIR was configured for (modules_install's target).
KREL = $(shell sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' $(KDIR)/include/generated/utsrelease.h 2>/dev/null)
PREFIX ?= /usr/local
DESTDIR ?=
INSTALL_MOD_PATH ?= $(DESTDIR)
UDEVDIR ?= /lib/udev/rules.d
MODLOADDIR ?= /usr/lib/modules-load.d
DKMS_SRC = $(DESTDIR)/usr/src/twheel-$(VERSION)
# Where dkms-src writes dkms.conf: debian/rules points it at
# debian/twheel-dkms.dkms, which dh_dkms installs in the tree.
DKMS_CONF ?= $(DKMS_SRC)/dkms.conf

# BTF=1: KDIR is the BTF-capable copy of Debian's headers btf-kdir.sh
# prints (built once, cached); kbuild finds vmlinux and resolve_btfids in it.
ifeq ($(BTF),1)
ifeq ($(origin KDIR),command line)
$(error BTF=1 sets KDIR itself (scripts/btf-kdir.sh): choose the kernel with KVER=)
endif
override KDIR := $(shell $(PWD)/scripts/btf-kdir.sh $(KVER))
ifeq ($(KDIR),)
$(error scripts/btf-kdir.sh $(KVER) failed)
endif
endif
# kbuild gives a module BTF only when it links it: a .ko without a .BTF
# section is relinked, and one must have it after.
has_btf = readelf -S -W $(1) 2>/dev/null | grep -q ' \.BTF '

.PHONY: all modules clean lint check deps install uninstall \
	dkms-install dkms-uninstall dkms-src userspace demo check-debug bench deb \
	check-debug-rt fuzz series

all: modules

modules:
	@test -n "$(KDIR)" || { echo "no kernel headers$(if $(KVER), for $(KVER)): apt-get install linux-headers-$(or $(KVER),amd64), or set KDIR=" >&2; exit 1; }
	@echo "twheel: building for $(or $(KREL),$(KVER)) ($(KDIR))"
ifeq ($(BTF),1)
	@for ko in $(wildcard $(PWD)/kmod/*.ko); do \
		$(call has_btf,$$ko) || rm -f $$ko; done
endif
	$(MAKE) -C $(KDIR) M=$(PWD) modules
ifeq ($(BTF),1)
	@for ko in $(PWD)/kmod/*.ko; do $(call has_btf,$$ko) || \
		{ echo "$$ko: no .BTF section" >&2; exit 1; }; done
endif

userspace:
	@if [ -f userspace/Makefile ]; then $(MAKE) -C userspace; fi

clean:
	@# kbuild's clean of M=$(PWD) would delete every *.mod of the tree,
	@# userspace/go/go.mod too: clean the module's directory alone.
	$(MAKE) -C $(KDIR) M=$(PWD)/kmod clean
	rm -f Module.symvers modules.order .Module.symvers.cmd .modules.order.cmd
	$(MAKE) -C selftests clean
	$(MAKE) -C selftests/core clean
	@if [ -f userspace/Makefile ]; then $(MAKE) -C userspace clean; fi

deps:
	scripts/deps.sh

lint: deps
	scripts/lint.sh

series: deps
	scripts/series.sh

check:
	scripts/check.sh

demo:
	scripts/demo.sh

check-debug:
	scripts/check-debug.sh

check-debug-rt:
	scripts/check-debug.sh --rt

# The syscall fuzzer alone on the debug kernel, longer than check-debug's
# budget: FUZZ_SYSCALLS (default 200000) calls, FUZZ_SEED.  The guest's
# limit, FUZZ_TIMEOUT, defaults to 15 minutes plus 30 ms a call: trinity
# ran 10,000 calls in 183 s on the debug kernel under TCG (18 ms each).
FUZZ_SYSCALLS ?= 200000
fuzz:
	TWHEEL_DEBUG_SUITES=scripts/trinity-guest.sh \
	TWHEEL_TRINITY_SYSCALLS=$(FUZZ_SYSCALLS) \
	$(if $(FUZZ_SEED),TWHEEL_TRINITY_SEED=$(FUZZ_SEED)) \
	TWHEEL_VM_TIMEOUT=$(or $(FUZZ_TIMEOUT),$(shell echo $$((900 + $(FUZZ_SYSCALLS) * 3 / 100)))) \
	scripts/check-debug.sh

bench:
	scripts/bench.sh

deb:
	scripts/deb.sh

# depmod runs for a live install; a staged one (INSTALL_MOD_PATH or DESTDIR
# set, as in a package build) leaves it to the package's postinst.
install: modules
	install -D -m 644 kmod/twheel.ko $(INSTALL_MOD_PATH)/lib/modules/$(KREL)/extra/twheel.ko
	$(if $(INSTALL_MOD_PATH),,depmod -a $(KREL))
	install -D -m 644 kmod/dist/60-twheel.rules $(DESTDIR)$(UDEVDIR)/60-twheel.rules
	install -D -m 644 kmod/dist/twheel.conf $(DESTDIR)$(MODLOADDIR)/twheel.conf
	install -D -m 644 uapi/linux/twheel.h $(DESTDIR)$(PREFIX)/include/linux/twheel.h
	@if [ -f userspace/Makefile ]; then \
		$(MAKE) -C userspace install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR); fi

uninstall:
	rm -f $(INSTALL_MOD_PATH)/lib/modules/$(KREL)/extra/twheel.ko
	$(if $(INSTALL_MOD_PATH),,depmod -a $(KREL))
	rm -f $(DESTDIR)$(UDEVDIR)/60-twheel.rules $(DESTDIR)$(MODLOADDIR)/twheel.conf \
		$(DESTDIR)$(PREFIX)/include/linux/twheel.h
	@if [ -f userspace/Makefile ]; then \
		$(MAKE) -C userspace uninstall PREFIX=$(PREFIX) DESTDIR=$(DESTDIR); fi

# The module's sources as DKMS wants them: /usr/src/twheel-VERSION.
dkms-src:
	rm -rf $(DKMS_SRC)
	install -d $(DKMS_SRC)/kmod $(DKMS_SRC)/uapi/linux
	install -m 644 Kbuild $(DKMS_SRC)/
	install -m 644 kmod/Kbuild kmod/VERSION kmod/*.c kmod/*.h $(DKMS_SRC)/kmod/
	install -m 644 uapi/linux/twheel.h $(DKMS_SRC)/uapi/linux/
	printf 'KDIR ?= /lib/modules/$$(shell uname -r)/build\nmodules:\n\t$$(MAKE) -C $$(KDIR) M=$$(CURDIR) modules\nclean:\n\t$$(MAKE) -C $$(KDIR) M=$$(CURDIR) clean\n' > $(DKMS_SRC)/Makefile
	sed 's/@VERSION@/$(VERSION)/' kmod/dist/dkms.conf.in > $(DKMS_CONF)

dkms-install: dkms-src
	dkms add -m twheel -v $(VERSION)
	dkms build -m twheel -v $(VERSION) $(if $(KVER),-k $(KVER))
	dkms install -m twheel -v $(VERSION) $(if $(KVER),-k $(KVER))

dkms-uninstall:
	-dkms remove -m twheel -v $(VERSION) --all
	rm -rf $(DKMS_SRC)
