# SPDX-License-Identifier: GPL-2.0
#
# make            build kmod/twheel.ko against KDIR (default: the running
#                 kernel's headers, else Debian's newest 6.1 headers)
# make check      install what is missing, build, run every test tier in a
#                 QEMU guest; non-zero exit on any failure
# make lint       checkpatch --strict, sparse C=2 and W=1 on the module
# make clean

KVER_RUNNING := $(shell uname -r)
KDIR ?= $(firstword $(wildcard /lib/modules/$(KVER_RUNNING)/build) \
	$(lastword $(sort $(wildcard /usr/src/linux-headers-6.1*-amd64))))
PWD := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

.PHONY: all modules clean lint check deps

all: modules

modules:
	@test -n "$(KDIR)" || { echo "no kernel headers: run scripts/deps.sh or set KDIR=" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(PWD) modules

clean:
	$(MAKE) -C $(KDIR) M=$(PWD) clean
	$(MAKE) -C selftests clean
	$(MAKE) -C selftests/core clean

deps:
	scripts/deps.sh

lint: deps
	scripts/lint.sh

check:
	scripts/check.sh
