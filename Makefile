# SPDX-License-Identifier: GPL-2.0
#
# percs top-level build.
#   make          module (percs.ko), libpercs (static, shared, .pc), tools, selftests
#   make check    install dependencies, build, unit tests (ASan/UBSan), fuzzing
#                 (libFuzzer, 15 s a target), install/DKMS/Debian package
#                 tests, VM tests
#                 on Debian's kernel and on KASAN and KCSAN debug kernels
#                 (built once, cached in /var/cache/percs)
#   make run      boot the default emulated system in a VM and run the demo
#   make install  libraries, headers, pkg-config files, tools, wrappers and
#                 man pages into $(DESTDIR)$(PREFIX); make uninstall removes
#                 them (packaging/packaging.mk: DKMS source, make deb)
#
# Each directory adds its rules through a fragment (*.mk) included below.

SRC := $(CURDIR)
BUILD ?= $(SRC)/build
KVER ?= $(shell $(SRC)/scripts/kver.sh)
KDIR ?= /lib/modules/$(KVER)/build

CC ?= cc

# Where make install puts things; each fragment's install-* and
# uninstall-* rules use these.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
CFLAGS_COMMON := -std=gnu11 -Wall -Wextra -Werror -O2 -g -pthread \
	-I$(SRC)/include/uapi -I$(SRC)/lib
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all

.PHONY: all module clean check run unit-tests deps lint install uninstall
all: module

# PERCS_TEST=1 (the default of this Makefile: make module, make check, the
# VM tests) builds the module's test code in (Kbuild); an install build
# says make module PERCS_TEST=0.  A change of it rebuilds the module.
PERCS_TEST ?= 1
MODULE_FLAGS := $(BUILD)/module-flags
$(shell mkdir -p $(BUILD) && echo 'PERCS_TEST=$(PERCS_TEST)' | \
	cmp -s - $(MODULE_FLAGS) 2>/dev/null || \
	echo 'PERCS_TEST=$(PERCS_TEST)' > $(MODULE_FLAGS))

module: percs.ko
percs_verbs.ko: percs.ko
percs.ko: $(wildcard kernel/*.c kernel/*.h kernel/verbs/*.c kernel/verbs/*.h \
	  firmware-model/*.c firmware-model/*.h) \
	  include/uapi/linux/percs.h Kbuild $(MODULE_FLAGS)
	$(MAKE) -C $(KDIR) M=$(SRC) PERCS_TEST=$(PERCS_TEST) modules

include $(wildcard firmware-model/*.mk lib/*.mk lib/*/*.mk tools/*/*.mk \
	selftests/*.mk packaging/*.mk)

# checkpatch, kernel-doc, sparse, uapi layout (-m64/-m32): TAP in results/
lint: module
	$(SRC)/scripts/lint.sh $(SRC) $(BUILD) $(KDIR)

deps:
	$(SRC)/scripts/deps.sh

# make install and make uninstall: each fragment adds its install-* and
# uninstall-* rules; the project's include directory goes last, once the
# fragments have emptied it.
uninstall:
	[ ! -d $(DESTDIR)$(INCLUDEDIR)/percs ] || \
		rmdir --ignore-fail-on-non-empty $(DESTDIR)$(INCLUDEDIR)/percs

# Builds and unit tests run on every CPU; the stages run one after
# another (scripts/check.sh says which and why not side by side).
CHECK_JOBS ?= $(shell nproc)

# Each test stage writes TAP files into $(BUILD)/results; the summary counts
# them and prints "N passed, N failed".
# Each stage's time goes to results/stage-times (the summary prints it).
check: deps
	MAKE="$(MAKE)" CHECK_JOBS=$(CHECK_JOBS) $(SRC)/scripts/check.sh $(SRC) $(BUILD)

# The first command on a bare machine too: dependencies (the kernel image
# and headers among them) first, then the build, which looks up the kernel
# version only when it runs.
run:
	$(MAKE) deps
	$(MAKE) -j$(CHECK_JOBS) all
	$(SRC)/tools/vm/percs-vm --module $(SRC)/percs.ko -- $(SRC)/tools/run/demo.sh

clean:
	-$(MAKE) -C $(KDIR) M=$(SRC) clean
	rm -rf $(BUILD)
