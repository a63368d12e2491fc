# SPDX-License-Identifier: GPL-2.0
#
# selftests: kselftest-harness programs run inside a VM against percs.ko.
#
#   make selftests   build $(BUILD)/selftests/NAME from every
#                    selftests/NAME.c (common.c is linked into each)
#   make vm-tests    boot a VM with percs.ko, run selftests/run-vm-tests.sh
#                    in it, copy the TAP files to $(BUILD)/results/vm-*
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

.PHONY: selftests vm-tests
all: selftests
selftests: $(ST_BINS) $(ST_HELPER)

# Extract both headers in one go; the harness header is the stamp.
$(ST_KSFT_DIR)/kselftest_harness.h:
	@mkdir -p $(BUILD)/ksrc
	tar -C $(BUILD)/ksrc -xJf $(ST_KSRC_TAR) \
		$(ST_KSRC_TOP)/tools/testing/selftests/kselftest_harness.h \
		$(ST_KSRC_TOP)/tools/testing/selftests/kselftest.h
	touch $@
$(ST_KSFT_DIR)/kselftest.h: $(ST_KSFT_DIR)/kselftest_harness.h

$(ST_BINS): $(ST_OUT)/%: $(ST_DIR)/%.c $(ST_DIR)/common.c $(ST_DIR)/common.h \
		$(ST_KSFT_HDRS) $(ST_LIBSAN) $(SRC)/lib/percs.h \
		$(SRC)/include/uapi/linux/percs.h
	@mkdir -p $(@D)
	$(CC) $(ST_CFLAGS) -o $@ $< $(ST_DIR)/common.c $(ST_LIBSAN)

# Helpers for module.sh; kept out of $(ST_OUT) so the runner does not take
# them for test programs.
$(ST_HELPER): $(ST_DIR)/helpers/pt-helper.c $(SRC)/include/uapi/linux/percs.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) -D_GNU_SOURCE -Wno-unused-parameter \
		-o $@ $<

# The VM sees the host's file system read-only at the same paths, so the
# binaries, the module and these scripts are used in place.  Only a VM that
# could not run the suite at all (no TAP came back), or whose exit status is
# not the runner's own 0/1 (3: the kernel log shows a bug, 124: timeout,
# 125: VM failure), is recorded as a failure in vm-boot.tap; test failures
# are in the other TAP files.
vm-tests: module lib $(ST_LIBSAN) selftests
	@rm -rf $(ST_VM_OUT) && mkdir -p $(ST_VM_OUT) $(BUILD)/results
	@rm -f $(BUILD)/results/vm-*
	@$(SRC)/tools/vm/percs-vm --out $(ST_VM_OUT) \
		--timeout $(ST_VM_TIMEOUT) --module $(SRC)/percs.ko \
		--env PERCS_SRC=$(SRC) --env PERCS_BUILD=$(BUILD) \
		--env PERCS_MODULE=$(SRC)/percs.ko \
		-- $(ST_DIR)/run-vm-tests.sh; \
	rc=$$?; \
	for f in $(ST_VM_OUT)/*.tap $(ST_VM_OUT)/*.expected; do \
		[ -e "$$f" ] && cp "$$f" $(BUILD)/results/vm-$${f##*/}; \
	done; \
	if ! ls $(ST_VM_OUT)/*.tap >/dev/null 2>&1; then \
		echo "vm-tests: the VM produced no TAP (percs-vm exit $$rc)"; \
		printf 'TAP version 13\n1..1\nnot ok 1 - VM run (percs-vm exit %s, no TAP)\n' \
			"$$rc" > $(BUILD)/results/vm-boot.tap; \
		echo 1 > $(BUILD)/results/vm-boot.expected; \
	elif [ $$rc -ne 0 ] && [ $$rc -ne 1 ]; then \
		echo "vm-tests: percs-vm exit $$rc (kernel oracle, timeout or VM failure)"; \
		printf 'TAP version 13\n1..1\nnot ok 1 - VM run: percs-vm exit %s (see %s)\n' \
			"$$rc" "$(ST_VM_OUT)/dmesg.txt" > $(BUILD)/results/vm-boot.tap; \
		echo 1 > $(BUILD)/results/vm-boot.expected; \
	else \
		printf 'TAP version 13\n1..1\nok 1 - VM run: percs-vm exit %s\n' \
			"$$rc" > $(BUILD)/results/vm-boot.tap; \
		echo 1 > $(BUILD)/results/vm-boot.expected; \
	fi; \
	echo "vm-tests: percs-vm exit $$rc; results in $(BUILD)/results/vm-*"
