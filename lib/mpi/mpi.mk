# SPDX-License-Identifier: GPL-2.0
#
# libpercs-mpi: MPI for C programs run with percs-run, over libpercs-msg;
# percs-cc, the compiler wrapper.
#
#   make mpi   $(BUILD)/lib/libpercs-mpi.a (+ -san.a), $(BUILD)/tools/percs-cc
#              and its man page
#
# The header is include/mpi/mpi.h: percs-cc adds that directory, nothing is
# installed as a system-wide mpi.h.  Static libraries: a program links
# only the calls it uses, and a call outside the subset fails to link.

MPI_SRCS := env.c errors.c comm.c group.c datatype.c op.c request.c p2p.c \
	bsend.c nbc.c coll.c coll_v.c
MPI_HDRS := $(SRC)/include/mpi/mpi.h $(SRC)/lib/mpi/mpi_internal.h $(MSG_HDRS)
MPI_CFLAGS := $(CFLAGS_COMMON) -I$(SRC)/include/mpi -I$(SRC)/lib/msg
MPI_OBJS := $(MPI_SRCS:%.c=$(BUILD)/lib/mpi/obj/%.o)
MPI_SAN_OBJS := $(MPI_SRCS:%.c=$(BUILD)/lib/mpi/san/%.o)
MPI_LIB := $(BUILD)/lib/libpercs-mpi.a
MPI_SAN_LIB := $(BUILD)/lib/libpercs-mpi-san.a
PERCS_CC := $(BUILD)/tools/percs-cc
MPI_SCDOC ?= $(shell command -v scdoc 2>/dev/null)
MPI_MAN := $(if $(MPI_SCDOC),$(BUILD)/man/percs-cc.1)

.PHONY: mpi
all: mpi
mpi: $(MPI_LIB) $(MPI_SAN_LIB) $(PERCS_CC) $(MPI_MAN) msg lib lib-san

$(BUILD)/man/percs-cc.1: $(SRC)/lib/mpi/percs-cc.1.scd
	@mkdir -p $(@D)
	$(MPI_SCDOC) < $< > $@.tmp && mv $@.tmp $@

$(BUILD)/lib/mpi/obj/%.o: $(SRC)/lib/mpi/%.c $(MPI_HDRS)
	@mkdir -p $(@D)
	$(CC) $(MPI_CFLAGS) -c -o $@ $<

$(BUILD)/lib/mpi/san/%.o: $(SRC)/lib/mpi/%.c $(MPI_HDRS)
	@mkdir -p $(@D)
	$(CC) $(MPI_CFLAGS) $(SAN_FLAGS) -c -o $@ $<

$(MPI_LIB): $(MPI_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(MPI_SAN_LIB): $(MPI_SAN_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

# The wrapper with this build's paths filled in.
$(PERCS_CC): $(SRC)/lib/mpi/percs-cc.in $(SRC)/lib/mpi/mpi.mk
	@mkdir -p $(@D)
	sed -e 's|@INCDIR@|$(SRC)/include/mpi|g' -e 's|@LIBDIR@|$(BUILD)/lib|g' \
		-e 's|@CC@|$(CC)|g' $< > $@.tmp
	chmod 755 $@.tmp && mv $@.tmp $@
