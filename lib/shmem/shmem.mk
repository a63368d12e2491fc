# SPDX-License-Identifier: GPL-2.0
#
# libpercs-shmem: OpenSHMEM 1.5 for C programs run with percs-run, over
# libpercs (RDMA, atomics, CAU) and libpercs-msg (startup, software
# collectives); percs-oshcc, the compiler wrapper, and percs-oshrun.
#
#   make shmem  $(BUILD)/lib/libpercs-shmem.a (+ -san.a),
#               $(BUILD)/tools/percs-oshcc, percs-oshrun, man pages
#   make install-shmem  both libraries, shmem.h as <percs/shmem/shmem.h>,
#               percs-oshcc (naming the installed directories), percs-oshrun
#               (a link to percs-run, as is its man page), percs-shmem.pc,
#               the man page; uninstall-shmem
#
# The header is include/shmem/shmem.h: percs-oshcc adds that directory.
# Static libraries: a call outside the subset fails to link.

SHMEM_SRCS := init.c heap.c alloc.c pes.c red_arith.c xchg.c ctx.c rma.c rma_typed.c signal.c amo.c sync.c lock.c \
	team.c coll.c reduce.c
SHMEM_HDRS := $(SRC)/include/shmem/shmem.h $(SRC)/lib/shmem/shmem_internal.h \
	$(SRC)/lib/shmem/xchg.h $(SRC)/lib/shmem/team.h $(SRC)/lib/shmem/alloc.h \
	$(SRC)/lib/shmem/pes.h $(SRC)/lib/shmem/red_arith.h $(MSG_HDRS)
SHMEM_CFLAGS := $(CFLAGS_COMMON) -I$(SRC)/include/shmem -I$(SRC)/lib/msg
SHMEM_OBJS := $(SHMEM_SRCS:%.c=$(BUILD)/lib/shmem/obj/%.o)
SHMEM_SAN_OBJS := $(SHMEM_SRCS:%.c=$(BUILD)/lib/shmem/san/%.o)
SHMEM_LIB := $(BUILD)/lib/libpercs-shmem.a
SHMEM_SAN_LIB := $(BUILD)/lib/libpercs-shmem-san.a
PERCS_OSHCC := $(BUILD)/tools/percs-oshcc
PERCS_OSHRUN := $(BUILD)/tools/percs-oshrun
SHMEM_SCDOC ?= $(shell command -v scdoc 2>/dev/null)
SHMEM_MAN := $(if $(SHMEM_SCDOC),$(BUILD)/man/percs-oshcc.1)

.PHONY: shmem install-shmem uninstall-shmem
all: shmem
shmem: $(SHMEM_LIB) $(SHMEM_SAN_LIB) $(PERCS_OSHCC) $(PERCS_OSHRUN) \
	$(SHMEM_MAN) msg lib lib-san

$(BUILD)/man/percs-oshcc.1: $(SRC)/lib/shmem/percs-oshcc.1.scd
	@mkdir -p $(@D)
	$(SHMEM_SCDOC) < $< > $@.tmp && mv $@.tmp $@

$(BUILD)/lib/shmem/obj/%.o: $(SRC)/lib/shmem/%.c $(SHMEM_HDRS)
	@mkdir -p $(@D)
	$(CC) $(SHMEM_CFLAGS) -c -o $@ $<

$(BUILD)/lib/shmem/san/%.o: $(SRC)/lib/shmem/%.c $(SHMEM_HDRS)
	@mkdir -p $(@D)
	$(CC) $(SHMEM_CFLAGS) $(SAN_FLAGS) -c -o $@ $<

$(SHMEM_LIB): $(SHMEM_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(SHMEM_SAN_LIB): $(SHMEM_SAN_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

# The wrapper with this build's paths filled in.
$(PERCS_OSHCC): $(SRC)/lib/shmem/percs-oshcc.in $(SRC)/lib/shmem/shmem.mk
	@mkdir -p $(@D)
	$(call CC_WRAPPER_SED,$(SRC)/include/shmem,$(BUILD)/lib) $< > $@.tmp
	chmod 755 $@.tmp && mv $@.tmp $@

# oshrun's name for percs-run: the same launcher.
$(PERCS_OSHRUN): $(BUILD)/tools/percs-run
	ln -sf percs-run $@

SHMEM_INSTALLED := $(LIBDIR)/libpercs-shmem.a $(LIBDIR)/libpercs-shmem-san.a \
	$(INCLUDEDIR)/percs/shmem/shmem.h $(BINDIR)/percs-oshcc \
	$(BINDIR)/percs-oshrun $(PKGCONFIGDIR)/percs-shmem.pc \
	$(MANDIR)/man1/percs-oshcc.1 $(MANDIR)/man1/percs-oshrun.1

install: install-shmem
uninstall: uninstall-shmem
install-shmem: $(SHMEM_LIB) $(SHMEM_SAN_LIB) $(SHMEM_MAN)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/percs/shmem \
		$(DESTDIR)$(BINDIR) $(DESTDIR)$(PKGCONFIGDIR)
	install -m 644 $(SHMEM_LIB) $(SHMEM_SAN_LIB) $(DESTDIR)$(LIBDIR)/
	install -m 644 $(SRC)/include/shmem/shmem.h \
		$(DESTDIR)$(INCLUDEDIR)/percs/shmem/
	$(call CC_WRAPPER_SED,$(INCLUDEDIR)/percs/shmem,$(LIBDIR)) \
		$(SRC)/lib/shmem/percs-oshcc.in > $(DESTDIR)$(BINDIR)/percs-oshcc
	chmod 755 $(DESTDIR)$(BINDIR)/percs-oshcc
	ln -sf percs-run $(DESTDIR)$(BINDIR)/percs-oshrun
	$(LIB_PC_SED) $(SRC)/lib/shmem/percs-shmem.pc.in \
		> $(DESTDIR)$(PKGCONFIGDIR)/percs-shmem.pc
	$(if $(SHMEM_MAN),install -d $(DESTDIR)$(MANDIR)/man1)
	$(if $(SHMEM_MAN),install -m 644 $(SHMEM_MAN) $(DESTDIR)$(MANDIR)/man1/)
	$(if $(SHMEM_MAN),ln -sf percs-run.1 $(DESTDIR)$(MANDIR)/man1/percs-oshrun.1)

uninstall-shmem:
	rm -f $(addprefix $(DESTDIR),$(SHMEM_INSTALLED))
	[ ! -d $(DESTDIR)$(INCLUDEDIR)/percs/shmem ] || \
		rmdir --ignore-fail-on-non-empty $(DESTDIR)$(INCLUDEDIR)/percs/shmem

# Unit tests of the library's pure logic on the host (no HFI, no job),
# under ASan/UBSan, linked against the sanitized archives: one file per
# part (lib/shmem/tests/unit.h).  TAP in $(BUILD)/results/shmem-unit.tap.
SHMEM_UNIT := $(BUILD)/lib/shmem/tests/shmem-unit
SHMEM_UNIT_SRCS := $(wildcard $(SRC)/lib/shmem/tests/*.c) \
	$(SRC)/lib/tests/tap_unit.c
.PHONY: shmem-unit-tests
$(SHMEM_UNIT): $(SHMEM_UNIT_SRCS) $(SRC)/lib/shmem/tests/unit.h \
	       $(SRC)/lib/tests/tap_unit.h $(SHMEM_HDRS) \
	       $(SHMEM_SAN_LIB) $(MSG_SAN_LIB) $(BUILD)/lib/libpercs-san.a
	@mkdir -p $(@D)
	$(CC) $(SHMEM_CFLAGS) $(SAN_FLAGS) -I$(SRC)/lib/shmem -o $@ $(SHMEM_UNIT_SRCS) \
		$(SHMEM_SAN_LIB) $(MSG_SAN_LIB) $(BUILD)/lib/libpercs-san.a -lm

shmem-unit-tests: $(SHMEM_UNIT)
	@mkdir -p $(BUILD)/results
	@$(SHMEM_UNIT) > $(BUILD)/results/shmem-unit.tap; \
	rc=$$?; cat $(BUILD)/results/shmem-unit.tap; \
	[ $$rc -eq 0 ] || echo "shmem-unit-tests: failures (exit $$rc)"

unit-tests: shmem-unit-tests
