# SPDX-License-Identifier: GPL-2.0
#
# firmware-model fuzzing with libFuzzer (clang; Debian packages clang and
# libclang-rt-14-dev, listed in firmware-model/deps.list):
#
#   make fm-fuzz               build both targets, run them side by side
#                              (one CPU each) for FM_FUZZ_SECONDS
#                              (default 15), write
#                              $(BUILD)/results/fuzz.{tap,expected}
#   make fm-fuzz FM_FUZZ_SECONDS=600   a longer run
#
#   fuzz-spec  topology spec strings, and the tables and routes of the
#              topologies that parse (fuzz/fuzz_spec.c)
#   fuzz-pkt   packet headers as the HFI reads them, routed as the engine
#              would (fuzz/fuzz_pkt.c)
#
# Seeds are in fuzz/corpus-*; what a run finds stays in $(BUILD)/fuzz.

FM_FUZZ_CC ?= clang
FM_FUZZ_SECONDS ?= 15
FM_FUZZ_DIR := $(BUILD)/fuzz
FM_FUZZ_CFLAGS := -std=gnu11 -g -O1 -Wall -Wextra -Werror \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-I$(SRC)/include/uapi -I$(FM_DIR)
FM_MODEL_SOURCES := $(wildcard $(FM_DIR)/*.c)
FM_FUZZ_TARGETS := spec pkt

.PHONY: fm-fuzz

$(FM_FUZZ_DIR)/fuzz-%: $(FM_DIR)/fuzz/fuzz_%.c $(FM_DIR)/fuzz/fuzz_check.h \
		       $(FM_MODEL_SOURCES) $(FM_HEADERS)
	@mkdir -p $(@D)
	$(FM_FUZZ_CC) $(FM_FUZZ_CFLAGS) -o $@ $< $(FM_MODEL_SOURCES)

fm-fuzz:
	@mkdir -p $(FM_RESULTS)
	@echo 2 > $(FM_RESULTS)/fuzz.expected
	@if ! command -v $(FM_FUZZ_CC) >/dev/null; then \
		printf '1..2\nok 1 - fuzz: spec # SKIP %s not installed\nok 2 - fuzz: pkt # SKIP %s not installed\n' \
			$(FM_FUZZ_CC) $(FM_FUZZ_CC) > $(FM_RESULTS)/fuzz.tap; \
	else \
		$(MAKE) --no-print-directory $(FM_FUZZ_TARGETS:%=$(FM_FUZZ_DIR)/fuzz-%) && \
		{ $(FM_DIR)/fuzz/run-fuzz.sh 1 "topology spec" $(FM_FUZZ_DIR)/fuzz-spec \
			$(FM_DIR)/fuzz/corpus-spec $(FM_FUZZ_DIR)/spec $(FM_FUZZ_SECONDS) \
			$(FM_DIR)/fuzz/spec.dict > $(FM_FUZZ_DIR)/spec.tap & \
		  $(FM_DIR)/fuzz/run-fuzz.sh 2 "packet header" $(FM_FUZZ_DIR)/fuzz-pkt \
			$(FM_DIR)/fuzz/corpus-pkt $(FM_FUZZ_DIR)/pkt $(FM_FUZZ_SECONDS) \
			> $(FM_FUZZ_DIR)/pkt.tap; \
		  wait; echo 1..2; cat $(FM_FUZZ_DIR)/spec.tap $(FM_FUZZ_DIR)/pkt.tap; \
		} > $(FM_RESULTS)/fuzz.tap; \
	fi; \
	cat $(FM_RESULTS)/fuzz.tap
