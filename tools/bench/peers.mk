# SPDX-License-Identifier: GPL-2.0
#
# percs beside its peers in one VM boot (tools/bench/peers.sh).
#
#   make peers-bins  $(BUILD)/tools/mpi-peer-percs and mpi-peer-ompi: one
#                    source (tools/bench/mpi-peer.c) built with percs-cc and
#                    with Open MPI's mpicc
#   make bench-peers the full comparison in the VM (about 15 minutes on TCG;
#                    PEERS_ARGS for peers.sh, e.g. --ranks "2 8"): the table
#                    on stdout, $(BUILD)/results/peers/peers.{txt,json,csv,png}
#   make peers-unit-tests
#                    $(BUILD)/results/peers-report.{tap,expected}: the report
#                    from made-up measurements (tools/bench/test-peers-report.sh)
#
# make check's short version (peers.sh --quick) runs in the stock VM pass as
# the program "peers" (selftests/peers.sh).

PEERS_PERCS := $(BUILD)/tools/mpi-peer-percs
PEERS_OMPI := $(BUILD)/tools/mpi-peer-ompi
PEERS_OUT := $(BUILD)/results/peers
PEERS_VM_TIMEOUT ?= 2400
PEERS_ARGS ?=
MPICC ?= mpicc

.PHONY: peers-bins bench-peers peers-unit-tests
all: peers-bins
peers-bins: $(PEERS_PERCS) $(PEERS_OMPI)

$(PEERS_PERCS): $(SRC)/tools/bench/mpi-peer.c $(PERCS_CC) $(MPI_LIB) $(MSG_LIB) \
		$(BUILD)/lib/libpercs.a $(SRC)/include/mpi/mpi.h
	@mkdir -p $(@D)
	$(PERCS_CC) -std=gnu11 -Wall -Wextra -Werror -O2 -g -o $@ $<

$(PEERS_OMPI): $(SRC)/tools/bench/mpi-peer.c
	@mkdir -p $(@D)
	$(MPICC) -std=gnu11 -Wall -Wextra -Werror -O2 -g -o $@ $<

bench-peers: module bench run-tool peers-bins
	@mkdir -p $(PEERS_OUT)
	$(SRC)/tools/vm/percs-vm --timeout $(PEERS_VM_TIMEOUT) --cpus 2 \
		--out $(PEERS_OUT) --module $(SRC)/percs.ko --env PERCS_BUILD=$(BUILD) -- \
		$(SRC)/tools/bench/peers.sh --out $(PEERS_OUT) $(PEERS_ARGS)

peers-unit-tests:
	@mkdir -p $(BUILD)/results
	@$(SRC)/tools/bench/test-peers-report.sh --count > $(BUILD)/results/peers-report.expected
	@$(SRC)/tools/bench/test-peers-report.sh > $(BUILD)/results/peers-report.tap; \
	rc=$$?; cat $(BUILD)/results/peers-report.tap; \
	[ $$rc -eq 0 ] || echo "peers-unit-tests: failures (exit $$rc)"

unit-tests: peers-unit-tests
