# SPDX-License-Identifier: GPL-2.0
#
# The MPI test programs (selftests/mpi/*.c), built with percs-cc against
# the ASan/UBSan builds of the libraries, into $(BUILD)/mpi-tests (not
# $(BUILD)/selftests: they run under percs-run, from selftests/mpi.sh,
# which run-vm-tests.sh runs as the program "mpi").
#
#   make mpi-tests

MPIT_DIR := $(SRC)/selftests/mpi
MPIT_OUT := $(BUILD)/mpi-tests
MPIT_BINS := $(patsubst $(MPIT_DIR)/%.c,$(MPIT_OUT)/%,$(wildcard $(MPIT_DIR)/*.c))

.PHONY: mpi-tests
all: mpi-tests
mpi-tests: $(MPIT_BINS)

# Compiled and linked in two steps, so that a compiler cache can keep
# the object (a compile that also links is not cacheable).
MPIT_FLAGS := -std=gnu11 -Wall -Wextra -Werror -O2 -g -fno-sanitize-recover=all

.PRECIOUS: $(MPIT_OUT)/%.o
$(MPIT_OUT)/%.o: $(MPIT_DIR)/%.c $(MPIT_DIR)/check.h $(PERCS_CC) \
		 $(SRC)/include/mpi/mpi.h
	@mkdir -p $(@D)
	PERCS_CC_SANITIZE=1 $(PERCS_CC) $(MPIT_FLAGS) -c -o $@ $<

$(MPIT_OUT)/%: $(MPIT_OUT)/%.o $(PERCS_CC) $(MPI_SAN_LIB) $(MSG_SAN_LIB) \
	       $(BUILD)/lib/libpercs-san.a
	PERCS_CC_SANITIZE=1 $(PERCS_CC) $(MPIT_FLAGS) -o $@ $<

# The same sources built as Debian's Open MPI builds them (mpicc from
# libopenmpi-dev), for selftests/verbs.sh: Open MPI over UCX on the percs
# verbs devices.  Into $(BUILD)/ompi-tests.
OMPIT_OUT := $(BUILD)/ompi-tests
OMPIT_BINS := $(OMPIT_OUT)/pingpong $(OMPIT_OUT)/coll
MPICC ?= mpicc

.PHONY: ompi-tests
all: ompi-tests
ompi-tests: $(OMPIT_BINS)

$(OMPIT_OUT)/%: $(MPIT_DIR)/%.c $(MPIT_DIR)/check.h
	@mkdir -p $(@D)
	$(MPICC) -std=gnu11 -Wall -Wextra -Werror -O2 -g -o $@ $<
