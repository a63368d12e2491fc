# SPDX-License-Identifier: GPL-2.0
#
# percs-msg-bench: the MPI layer's figures beside the raw HFI's, one run.
#
#   make msgbench   $(BUILD)/tools/percs-mpi-bench (an MPI program, built
#                   with percs-cc, optimised, no sanitizers) and
#                   $(BUILD)/tools/percs-msg-bench (the script that runs it
#                   under percs-run next to percs-bench lat and rdma)
#   make msgbench-unit-tests
#                   $(BUILD)/results/msg-bench.{tap,expected}: the report,
#                   JSON and plot made from made-up measurements
#                   (tools/msgbench/test-msg-bench.sh; no VM)

MSGB_BIN := $(BUILD)/tools/percs-mpi-bench
MSGB_SCRIPT := $(BUILD)/tools/percs-msg-bench
# The plotter percs-msg-bench imports from its own directory.
MSGB_PLOT := $(BUILD)/tools/percs_plot.py

.PHONY: msgbench msgbench-unit-tests
all: msgbench
msgbench: $(MSGB_BIN) $(MSGB_SCRIPT) $(MSGB_PLOT) bench run-tool

# raw.c drives libpercs directly (the raw ping-pong beside the MPI one).
MSGB_SRCS := $(SRC)/tools/msgbench/mpi-bench.c $(SRC)/tools/msgbench/raw.c

$(MSGB_BIN): $(MSGB_SRCS) $(SRC)/tools/msgbench/raw.h $(PERCS_CC) $(MPI_LIB) \
	     $(MSG_LIB) $(BUILD)/lib/libpercs.a $(SRC)/include/mpi/mpi.h \
	     $(SRC)/lib/percs.h $(SRC)/lib/msg/percs_msg.h
	@mkdir -p $(@D)
	$(PERCS_CC) -std=gnu11 -Wall -Wextra -Werror -O2 -g \
		-I$(SRC)/lib -I$(SRC)/lib/msg -I$(SRC)/include/uapi -o $@ $(MSGB_SRCS)

$(MSGB_SCRIPT): $(SRC)/tools/msgbench/percs-msg-bench
	@mkdir -p $(@D)
	install -m 755 $< $@

$(MSGB_PLOT): $(SRC)/tools/plot/percs_plot.py
	@mkdir -p $(@D)
	install -m 644 $< $@

msgbench-unit-tests: $(MSGB_SCRIPT) $(MSGB_PLOT)
	@mkdir -p $(BUILD)/results
	@$(SRC)/tools/msgbench/test-msg-bench.sh --count > $(BUILD)/results/msg-bench.expected
	@$(SRC)/tools/msgbench/test-msg-bench.sh $(MSGB_SCRIPT) > $(BUILD)/results/msg-bench.tap; \
	rc=$$?; cat $(BUILD)/results/msg-bench.tap; \
	[ $$rc -eq 0 ] || echo "msgbench-unit-tests: failures (exit $$rc)"

unit-tests: msgbench-unit-tests
