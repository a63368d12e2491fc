# SPDX-License-Identifier: GPL-2.0
#
# The OpenSHMEM test programs (selftests/shmem/*.c), built with percs-oshcc
# against the ASan/UBSan builds of the libraries, into $(BUILD)/shmem-tests
# (they run under percs-run, from selftests/shmem.sh, which
# run-vm-tests.sh runs as the program "shmem").
#
#   make shmem-tests

SHMT_DIR := $(SRC)/selftests/shmem
SHMT_OUT := $(BUILD)/shmem-tests
SHMT_BINS := $(patsubst $(SHMT_DIR)/%.c,$(SHMT_OUT)/%,$(wildcard $(SHMT_DIR)/*.c))

.PHONY: shmem-tests
all: shmem-tests
shmem-tests: $(SHMT_BINS)

# Compiled and linked in two steps, as the MPI programs (selftests/mpi.mk).
SHMT_FLAGS := -std=gnu11 -Wall -Wextra -Werror -O2 -g -fno-sanitize-recover=all

.PRECIOUS: $(SHMT_OUT)/%.o
$(SHMT_OUT)/%.o: $(SHMT_DIR)/%.c $(SHMT_DIR)/check.h $(PERCS_OSHCC) \
		 $(SRC)/include/shmem/shmem.h
	@mkdir -p $(@D)
	PERCS_OSHCC_SANITIZE=1 $(PERCS_OSHCC) $(SHMT_FLAGS) -c -o $@ $<

$(SHMT_OUT)/%: $(SHMT_OUT)/%.o $(PERCS_OSHCC) $(SHMEM_SAN_LIB) $(MSG_SAN_LIB) \
	       $(BUILD)/lib/libpercs-san.a
	PERCS_OSHCC_SANITIZE=1 $(PERCS_OSHCC) $(SHMT_FLAGS) -o $@ $<
