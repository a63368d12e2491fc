# SPDX-License-Identifier: GPL-2.0
#
# firmware-model: the hardware's logic in freestanding C.  The kernel module
# compiles its .c files through Kbuild; this fragment builds the same
# sources into a userspace unit-test program under ASan/UBSan (fuzz.mk
# into libFuzzer targets, tools/topo/topo.mk into percs-topo).
#
#   make fm-unit-tests   build $(BUILD)/fm/fm-tests, run it, write
#                        $(BUILD)/results/fm.tap and fm.expected
#
# A failing test does not stop make: the summary counts "not ok" lines and,
# from fm.expected, the tests missing from the TAP (a crashed runner).

FM_DIR := $(SRC)/firmware-model
FM_BIN := $(BUILD)/fm/fm-tests
FM_RESULTS := $(BUILD)/results
FM_CFLAGS := $(CFLAGS_COMMON) $(SAN_FLAGS) -I$(FM_DIR) \
	-Wmissing-prototypes -Wstrict-prototypes -Wdeclaration-after-statement \
	-Wshadow -Wvla
FM_SOURCES := $(wildcard $(FM_DIR)/*.c) $(wildcard $(FM_DIR)/tests/*.c)
FM_HEADERS := $(wildcard $(FM_DIR)/*.h $(FM_DIR)/tests/*.h) \
	$(SRC)/include/uapi/linux/percs.h

.PHONY: fm-unit-tests
unit-tests: fm-unit-tests

$(FM_BIN): $(FM_SOURCES) $(FM_HEADERS) $(FM_DIR)/fm.mk
	@mkdir -p $(@D)
	$(CC) $(FM_CFLAGS) -o $@ $(FM_SOURCES) -lm

fm-unit-tests: $(FM_BIN)
	@mkdir -p $(FM_RESULTS)
	@$(FM_BIN) --count > $(FM_RESULTS)/fm.expected
	@$(FM_BIN) > $(FM_RESULTS)/fm.tap; \
	status=$$?; \
	cat $(FM_RESULTS)/fm.tap; \
	if [ $$status -gt 1 ]; then \
		echo "# fm-tests: runner exited with status $$status" | \
			tee -a $(FM_RESULTS)/fm.tap; \
	fi; \
	true
