# SPDX-License-Identifier: GPL-2.0
#
# percs-shmem-bench: OpenSHMEM's figures beside the raw HFI's, one run.
#
#   make shmembench  $(BUILD)/tools/percs-shmem-bench (an OpenSHMEM program
#                    built with percs-oshcc, optimised, no sanitizers, that
#                    also drives a window of its own through libpercs)

SHMB_BIN := $(BUILD)/tools/percs-shmem-bench

.PHONY: shmembench
all: shmembench
shmembench: $(SHMB_BIN)

$(SHMB_BIN): $(SRC)/tools/shmembench/shmem-bench.c $(PERCS_OSHCC) $(SHMEM_LIB) \
	     $(MSG_LIB) $(BUILD)/lib/libpercs.a $(SRC)/include/shmem/shmem.h
	@mkdir -p $(@D)
	$(PERCS_OSHCC) -std=gnu11 -Wall -Wextra -Werror -O2 -g \
		-I$(SRC)/lib -I$(SRC)/include/uapi -o $@ $<
