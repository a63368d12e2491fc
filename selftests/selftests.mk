# SPDX-License-Identifier: GPL-2.0
#
# selftests: kselftest-harness programs run inside a VM against percs.ko.
#
#   make selftests   build $(BUILD)/selftests/NAME from every
#                    selftests/NAME.c (common.c is linked into each)
#   make vm-tests    boot a VM with percs.ko, run selftests/run-vm-tests.sh
#                    in it, copy the TAP files to $(BUILD)/results/vm-*;
#                    this pass alone also runs selftests/bench.sh, a smoke
#                    test of $(BUILD)/tools/percs-bench (vm-bench.tap), and
#                    selftests/mpi.sh, the MPI programs (vm-mpi.tap), and
#                    selftests/installed.sh, programs built against a
#                    staged make install (vm-installed.tap; they are built
#                    by pkg-install-tests, packaging/packaging.mk)
#
# The harness headers come from the kernel source package (never
# committed): they are extracted once into $(BUILD)/ksrc.  A failing test
# does not stop make: scripts/summary.sh counts the TAP files.

ST_DIR := $(SRC)/selftests
ST_OUT := $(BUILD)/selftests
ST_KSRC_TAR ?= /usr/src/linux-source-6.1.tar.xz
ST_KSRC_TOP := linux-source-6.1
ST_KSFT_DIR := $(BUILD)/ksrc/$(ST_KSRC_TOP)/tools/testing/selftests
ST_KSFT_HDRS := $(ST_KSFT_DIR)/kselftest_harness.h $(ST_KSFT_DIR)/kselftest.h
ST_LIBSAN := $(BUILD)/lib/libpercs-san.a
ST_SRCS := $(filter-out $(ST_DIR)/common.c,$(wildcard $(ST_DIR)/*.c))
ST_BINS := $(patsubst $(ST_DIR)/%.c,$(ST_OUT)/%,$(ST_SRCS))
ST_CFLAGS := $(CFLAGS_COMMON) $(SAN_FLAGS) -D_GNU_SOURCE \
	-Wno-unused-parameter -Wno-sign-compare -I$(ST_KSFT_DIR) -I$(ST_DIR)
ST_VM_OUT := $(BUILD)/vm-out
ST_VM_TIMEOUT ?= 1500

ST_HELPER := $(ST_OUT)/helpers/pt-helper
ST_VERBS_ATTACK := $(ST_OUT)/helpers/verbs-attack

.PHONY: selftests vm-tests vm-tests-kasan vm-tests-kcsan
all: selftests
selftests: $(ST_BINS) $(ST_HELPER) $(ST_VERBS_ATTACK)

# Extract both headers in one go; the harness header is the stamp.
$(ST_KSFT_DIR)/kselftest_harness.h:
	@mkdir -p $(BUILD)/ksrc
	tar -C $(BUILD)/ksrc -xJf $(ST_KSRC_TAR) \
		$(ST_KSRC_TOP)/tools/testing/selftests/kselftest_harness.h \
		$(ST_KSRC_TOP)/tools/testing/selftests/kselftest.h
	touch $@
$(ST_KSFT_DIR)/kselftest.h: $(ST_KSFT_DIR)/kselftest_harness.h

# Objects apart from the link: common.c is compiled once, not once per
# program, and a compiler cache can keep each object (a compile that also
# links is not cacheable).
ST_OBJ := $(BUILD)/selftests-obj
ST_HDRS := $(ST_DIR)/common.h $(ST_KSFT_HDRS) $(SRC)/lib/percs.h \
	$(SRC)/include/uapi/linux/percs.h

$(ST_OBJ)/%.o: $(ST_DIR)/%.c $(ST_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ST_CFLAGS) -c -o $@ $<

.PRECIOUS: $(ST_OBJ)/%.o
$(ST_BINS): $(ST_OUT)/%: $(ST_OBJ)/%.o $(ST_OBJ)/common.o $(ST_LIBSAN)
	@mkdir -p $(@D)
	$(CC) $(ST_CFLAGS) -o $@ $^

# The CAU programs' shared code (selftests/collkit/), linked into each.
ST_COLLKIT := $(ST_OBJ)/collkit/collkit.o
$(ST_COLLKIT): $(ST_DIR)/collkit/collkit.h
$(ST_OUT)/coll $(ST_OUT)/mcast: $(ST_COLLKIT)
$(ST_OBJ)/coll.o $(ST_OBJ)/mcast.o: $(ST_DIR)/collkit/collkit.h

# Helpers for module.sh; kept out of $(ST_OUT) so the runner does not take
# them for test programs.
$(ST_HELPER): $(ST_DIR)/helpers/pt-helper.c $(SRC)/include/uapi/linux/percs.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) -D_GNU_SOURCE -Wno-unused-parameter \
		-o $@ $<

# A native window against verbs QPs' windows, for selftests/verbs.sh.
$(ST_VERBS_ATTACK): $(ST_DIR)/helpers/verbs-attack.c $(ST_LIBSAN) \
		$(SRC)/lib/percs.h $(SRC)/include/uapi/linux/percs.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) -D_GNU_SOURCE -Wno-unused-parameter \
		-o $@ $< $(ST_LIBSAN)

# The VM sees the host's file system read-only at the same paths, so the
# binaries, the module and these scripts are used in place.
# selftests/vm-tests.sh runs the suite on one kernel: Debian's (vm-tests),
# or a debug kernel built once and cached (vm-tests-kasan, vm-tests-kcsan).
# Failing tests do not stop make: scripts/summary.sh counts the TAP files.
# The stock pass's "installed" program needs the staged install of
# pkg-install-tests; make check runs that stage itself first
# (VM_PKG_INSTALL=0, scripts/check.sh).
VM_PKG_INSTALL ?= 1
vm-tests: module lib $(ST_LIBSAN) selftests bench ctl run-tool mpi-tests \
	  peers-bins $(if $(filter 1,$(VM_PKG_INSTALL)),pkg-install-tests)
	@PERCS_BUILD=$(BUILD) PERCS_VM_TIMEOUT=$(ST_VM_TIMEOUT) \
		$(ST_DIR)/vm-tests.sh stock

vm-tests-kasan vm-tests-kcsan: lib $(ST_LIBSAN) selftests ctl
	@PERCS_BUILD=$(BUILD) PERCS_VM_TIMEOUT=$(ST_VM_TIMEOUT) \
		$(ST_DIR)/vm-tests.sh $(@:vm-tests-%=%)

# Which percs.ko functions each program runs (tools/vm/func-coverage.sh,
# kprobes on the stock kernel, at the debug passes' test scale) and the
# cheapest programs that run them all (tools/vm/coverage-cover.py): how
# the debug kernels' lists in vm-tests.sh were chosen.  About 17 minutes.
.PHONY: vm-coverage
vm-coverage: module lib $(ST_LIBSAN) selftests
	@rm -rf $(BUILD)/coverage && mkdir -p $(BUILD)/coverage
	@$(SRC)/tools/vm/percs-vm --module $(SRC)/percs.ko --timeout 3000 \
		--out $(BUILD)/coverage --env PERCS_BUILD=$(BUILD) \
		--env PERCS_TEST_SCALE=0.05 -- $(SRC)/tools/vm/func-coverage.sh
	@$(SRC)/tools/vm/coverage-cover.py $(BUILD)/coverage \
		--keep failnth unload fuzz races
