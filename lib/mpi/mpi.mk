# SPDX-License-Identifier: GPL-2.0
#
# libpercs-mpi: MPI for C programs run with percs-run, over libpercs-msg;
# percs-cc, the compiler wrapper.
#
#   make mpi   $(BUILD)/lib/libpercs-mpi.a (+ -san.a), $(BUILD)/tools/percs-cc
#              and its man page
#   make install-mpi  both libraries, mpi.h as <percs/mpi/mpi.h>, percs-cc
#              (naming the installed directories), percs-mpi.pc, the man
#              page; uninstall-mpi
#
# The header is include/mpi/mpi.h: percs-cc adds that directory, nothing is
# installed as a system-wide mpi.h (it is $(INCLUDEDIR)/percs/mpi/mpi.h).
# Static libraries: a program links only the calls it uses, and a call
# outside the subset fails to link.

MPI_SRCS := env.c errors.c comm.c group.c datatype.c op.c request.c p2p.c \
	bsend.c nbc.c coll.c coll_v.c coll_select.c coll_barrier.c \
	coll_bcast.c coll_reduce.c coll_allreduce.c coll_allgather.c \
	coll_alltoall.c coll_reduce_scatter.c coll_cau.c coll_model.c
MPI_HDRS := $(SRC)/include/mpi/mpi.h $(SRC)/lib/mpi/mpi_internal.h \
	$(SRC)/lib/mpi/coll_model.h $(MSG_HDRS)
MPI_CFLAGS := $(CFLAGS_COMMON) -I$(SRC)/include/mpi -I$(SRC)/lib/msg
MPI_OBJS := $(MPI_SRCS:%.c=$(BUILD)/lib/mpi/obj/%.o)
MPI_SAN_OBJS := $(MPI_SRCS:%.c=$(BUILD)/lib/mpi/san/%.o)
MPI_LIB := $(BUILD)/lib/libpercs-mpi.a
MPI_SAN_LIB := $(BUILD)/lib/libpercs-mpi-san.a
PERCS_CC := $(BUILD)/tools/percs-cc
MPI_SCDOC ?= $(shell command -v scdoc 2>/dev/null)
MPI_MAN := $(if $(MPI_SCDOC),$(BUILD)/man/percs-cc.1)

.PHONY: mpi install-mpi uninstall-mpi
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

# The wrapper with this build's paths filled in; make install fills in
# the installed ones.  $(call CC_WRAPPER_SED,INCDIR,LIBDIR) (percs-oshcc's
# too).
CC_WRAPPER_SED = sed -e 's|@INCDIR@|$(1)|g' -e 's|@LIBDIR@|$(2)|g' \
	-e 's|@CC@|$(CC)|g'
$(PERCS_CC): $(SRC)/lib/mpi/percs-cc.in $(SRC)/lib/mpi/mpi.mk
	@mkdir -p $(@D)
	$(call CC_WRAPPER_SED,$(SRC)/include/mpi,$(BUILD)/lib) $< > $@.tmp
	chmod 755 $@.tmp && mv $@.tmp $@

MPI_INSTALLED := $(LIBDIR)/libpercs-mpi.a $(LIBDIR)/libpercs-mpi-san.a \
	$(INCLUDEDIR)/percs/mpi/mpi.h $(BINDIR)/percs-cc \
	$(PKGCONFIGDIR)/percs-mpi.pc $(MANDIR)/man1/percs-cc.1

install: install-mpi
uninstall: uninstall-mpi
install-mpi: $(MPI_LIB) $(MPI_SAN_LIB) $(MPI_MAN)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/percs/mpi \
		$(DESTDIR)$(BINDIR) $(DESTDIR)$(PKGCONFIGDIR)
	install -m 644 $(MPI_LIB) $(MPI_SAN_LIB) $(DESTDIR)$(LIBDIR)/
	install -m 644 $(SRC)/include/mpi/mpi.h $(DESTDIR)$(INCLUDEDIR)/percs/mpi/
	$(call CC_WRAPPER_SED,$(INCLUDEDIR)/percs/mpi,$(LIBDIR)) \
		$(SRC)/lib/mpi/percs-cc.in > $(DESTDIR)$(BINDIR)/percs-cc
	chmod 755 $(DESTDIR)$(BINDIR)/percs-cc
	$(LIB_PC_SED) $(SRC)/lib/mpi/percs-mpi.pc.in \
		> $(DESTDIR)$(PKGCONFIGDIR)/percs-mpi.pc
	$(if $(MPI_MAN),install -d $(DESTDIR)$(MANDIR)/man1)
	$(if $(MPI_MAN),install -m 644 $(MPI_MAN) $(DESTDIR)$(MANDIR)/man1/)

uninstall-mpi:
	rm -f $(addprefix $(DESTDIR),$(MPI_INSTALLED))
	[ ! -d $(DESTDIR)$(INCLUDEDIR)/percs/mpi ] || \
		rmdir --ignore-fail-on-non-empty $(DESTDIR)$(INCLUDEDIR)/percs/mpi

# Unit tests of the model (coll_model.c) on the host, under ASan/UBSan:
# the parameter file's parser and the predictions (no HFI, no job).
# TAP in $(BUILD)/results/mpi-unit.tap.
MPI_UNIT := $(BUILD)/lib/mpi/tests/mpi-unit
MPI_UNIT_SRCS := $(SRC)/lib/mpi/tests/model.c $(SRC)/lib/mpi/coll_model.c \
	$(SRC)/lib/tests/tap_unit.c
.PHONY: mpi-unit-tests
$(MPI_UNIT): $(MPI_UNIT_SRCS) $(MPI_HDRS) $(SRC)/lib/tests/tap_unit.h
	@mkdir -p $(@D)
	$(CC) $(MPI_CFLAGS) $(SAN_FLAGS) -I$(SRC)/lib/mpi -o $@ $(MPI_UNIT_SRCS) -lm

mpi-unit-tests: $(MPI_UNIT)
	@mkdir -p $(BUILD)/results
	@$(MPI_UNIT) --count > $(BUILD)/results/mpi-unit.expected
	@$(MPI_UNIT) > $(BUILD)/results/mpi-unit.tap; \
	rc=$$?; cat $(BUILD)/results/mpi-unit.tap; \
	[ $$rc -eq 0 ] || echo "mpi-unit-tests: failures (exit $$rc)"

unit-tests: mpi-unit-tests
