# SPDX-License-Identifier: GPL-2.0
#
# percs-msg-bench: the MPI layer's figures beside the raw HFI's, one run.
#
#   make msgbench   $(BUILD)/tools/percs-mpi-bench (an MPI program, built
#                   with percs-cc, optimised, no sanitizers) and
#                   $(BUILD)/tools/percs-msg-bench (the script that runs it
#                   under percs-run next to percs-bench lat and rdma)

MSGB_BIN := $(BUILD)/tools/percs-mpi-bench
MSGB_SCRIPT := $(BUILD)/tools/percs-msg-bench

.PHONY: msgbench
all: msgbench
msgbench: $(MSGB_BIN) $(MSGB_SCRIPT) bench run-tool

$(MSGB_BIN): $(SRC)/tools/msgbench/mpi-bench.c $(PERCS_CC) $(MPI_LIB) $(MSG_LIB) \
	     $(BUILD)/lib/libpercs.a $(SRC)/include/mpi/mpi.h
	@mkdir -p $(@D)
	$(PERCS_CC) -std=gnu11 -Wall -Wextra -Werror -O2 -g -o $@ $<

$(MSGB_SCRIPT): $(SRC)/tools/msgbench/percs-msg-bench
	@mkdir -p $(@D)
	install -m 755 $< $@
