# SPDX-License-Identifier: GPL-2.0
#
# libpercs: static and shared library, sanitized static library for tests,
# pkg-config file, man page, unit tests against a fake window, install.
#
#   make lib              $(BUILD)/lib/libpercs.{a,so.1,so,pc}, man page
#   make lib-san          $(BUILD)/lib/libpercs-san.a ($(SAN_FLAGS))
#   make lib-unit-tests   $(BUILD)/results/lib.{tap,expected}
#   make lib-examples     $(BUILD)/lib/tests/coll-vm-check (run it in the VM:
#                         tools/vm/percs-vm --module percs.ko -- PROG [N])
#   make install-lib      into $(DESTDIR)$(LIBDIR) etc. (PREFIX, see Makefile):
#                         libpercs.a, libpercs-san.a (percs-cc's
#                         PERCS_CC_SANITIZE), libpercs.so.VERSION and its
#                         soname and development links, <percs/percs.h>,
#                         <linux/percs.h>, libpercs.pc, libpercs.7;
#                         make uninstall-lib removes them

LIBPERCS_VERSION := 1.8.0
LIBPERCS_SONAME := libpercs.so.1

LIB_OUT := $(BUILD)/lib
LIB_SRCS := hfi.c auto.c job.c fifo.c imm.c cq.c clock.c mr.c mr_cache.c rdma.c atomic.c pgas.c \
	coll.c cau.c cau_shape.c cau_tree.c coll_sw.c coll_sched.c
LIB_HDRS := $(SRC)/lib/percs.h $(SRC)/lib/internal.h \
	    $(SRC)/include/uapi/linux/percs.h \
	    $(SRC)/firmware-model/cau.h $(SRC)/firmware-model/fm_env.h
# The collectives combine with the firmware model's CAU ALU, the code the
# kernel's CAU runs: firmware-model/cau.c is compiled into the library (as
# fm_cau.o; its fm_ symbols are not exported from the shared library).
# That file and the two headers it includes are dual-licensed (GPL-2.0 for
# the module, LGPL-2.1-or-later for this library).
LIB_FM_SRCS := $(SRC)/firmware-model/cau.c
# The model's header is included by its path ("firmware-model/cau.h"), not
# as "cau.h", which would read as this directory's cau.c's own header.
LIB_CFLAGS := $(CFLAGS_COMMON) -D_FILE_OFFSET_BITS=64 -iquote $(SRC)
LIB_OBJS := $(LIB_SRCS:%.c=$(LIB_OUT)/obj/%.o) $(LIB_OUT)/obj/fm_cau.o
LIB_PIC_OBJS := $(LIB_SRCS:%.c=$(LIB_OUT)/pic/%.o) $(LIB_OUT)/pic/fm_cau.o
LIB_SAN_OBJS := $(LIB_SRCS:%.c=$(LIB_OUT)/san/%.o) $(LIB_OUT)/san/fm_cau.o
LIB_TEST := $(LIB_OUT)/tests/lib-unit

SCDOC ?= $(shell command -v scdoc 2>/dev/null)

LIB_MAN := $(if $(SCDOC),$(BUILD)/man/libpercs.7)
LIB_PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(LIBPERCS_VERSION)|g'

.PHONY: lib lib-san lib-unit-tests lib-examples unit-tests install-lib uninstall-lib
all: lib lib-examples
lib: $(LIB_OUT)/libpercs.a $(LIB_OUT)/$(LIBPERCS_SONAME) \
     $(LIB_OUT)/libpercs.so $(LIB_OUT)/libpercs.pc $(LIB_MAN)
lib-san: $(LIB_OUT)/libpercs-san.a

$(LIB_OUT)/obj/%.o: $(SRC)/lib/%.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -c -o $@ $<

$(LIB_OUT)/pic/%.o: $(SRC)/lib/%.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -fPIC -c -o $@ $<

$(LIB_OUT)/san/%.o: $(SRC)/lib/%.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) $(SAN_FLAGS) -c -o $@ $<

$(LIB_OUT)/obj/fm_cau.o: $(LIB_FM_SRCS) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -c -o $@ $<

$(LIB_OUT)/pic/fm_cau.o: $(LIB_FM_SRCS) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -fPIC -c -o $@ $<

$(LIB_OUT)/san/fm_cau.o: $(LIB_FM_SRCS) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) $(SAN_FLAGS) -c -o $@ $<

$(LIB_OUT)/libpercs.a: $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(LIB_OUT)/libpercs-san.a: $(LIB_SAN_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(LIB_OUT)/$(LIBPERCS_SONAME): $(LIB_PIC_OBJS) $(SRC)/lib/libpercs.map
	$(CC) -shared -pthread -Wl,-soname,$(LIBPERCS_SONAME) \
		-Wl,--version-script=$(SRC)/lib/libpercs.map -Wl,-z,defs \
		-o $@ $(LIB_PIC_OBJS)

$(LIB_OUT)/libpercs.so: $(LIB_OUT)/$(LIBPERCS_SONAME)
	ln -sf $(LIBPERCS_SONAME) $@

$(LIB_OUT)/libpercs.pc: $(SRC)/lib/libpercs.pc.in $(SRC)/lib/lib.mk
	@mkdir -p $(@D)
	$(LIB_PC_SED) $< > $@

$(BUILD)/man/%.7: $(SRC)/lib/man/%.7.scd
	@mkdir -p $(@D)
	$(SCDOC) < $< > $@.tmp && mv $@.tmp $@

# Unit tests: the ring logic against fake windows, under ASan/UBSan.  A
# failing test shows in the TAP file and does not stop make.
# One file per feature and one per fake (lib/tests/unit.h says which).
LIB_TEST_SRCS := $(filter-out $(SRC)/lib/tests/coll-vm-check.c, \
	$(wildcard $(SRC)/lib/tests/*.c))
# Each file compiled on its own: only what changed is compiled again, and
# a compiler cache can keep the objects.
LIB_TEST_OBJS := $(patsubst $(SRC)/lib/tests/%.c,$(LIB_OUT)/tests/obj/%.o, \
	$(LIB_TEST_SRCS))
$(LIB_OUT)/tests/obj/%.o: $(SRC)/lib/tests/%.c $(SRC)/lib/tests/unit.h \
			  $(SRC)/lib/tests/tap_unit.h \
			  $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) $(SAN_FLAGS) -D_GNU_SOURCE -c -o $@ $<
$(LIB_TEST): $(LIB_TEST_OBJS) $(LIB_OUT)/libpercs-san.a
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) $(SAN_FLAGS) -o $@ $^ \
		-Wl,--wrap=ioctl,--wrap=mmap,--wrap=mmap64,--wrap=munmap,--wrap=fdatasync

# Collectives on the real module, N processes (see the file's comment).
LIB_EXAMPLES := $(LIB_OUT)/tests/coll-vm-check
lib-examples: $(LIB_EXAMPLES)
$(LIB_OUT)/tests/coll-vm-check: $(SRC)/lib/tests/coll-vm-check.c \
				$(LIB_OUT)/libpercs.a $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -o $@ $< $(LIB_OUT)/libpercs.a -lm

lib-unit-tests: $(LIB_TEST)
	@mkdir -p $(BUILD)/results
	@$(LIB_TEST) --count > $(BUILD)/results/lib.expected
	@$(LIB_TEST) > $(BUILD)/results/lib.tap 2> $(BUILD)/results/lib.log; \
	rc=$$?; cat $(BUILD)/results/lib.tap; \
	if [ $$rc -ne 0 ]; then \
		echo "lib-unit-tests: failures (exit $$rc); stderr in $(BUILD)/results/lib.log"; \
		tail -n 40 $(BUILD)/results/lib.log; \
	fi

unit-tests: lib-unit-tests

# The shared library installs under its full version, with the soname link
# the loader follows and the development link the linker follows.
LIB_SHLIB := libpercs.so.$(LIBPERCS_VERSION)
LIB_INSTALLED := $(addprefix $(LIBDIR)/,libpercs.a libpercs-san.a \
	$(LIB_SHLIB) $(LIBPERCS_SONAME) libpercs.so) \
	$(INCLUDEDIR)/percs/percs.h $(INCLUDEDIR)/linux/percs.h \
	$(PKGCONFIGDIR)/libpercs.pc $(MANDIR)/man7/libpercs.7

install: install-lib
uninstall: uninstall-lib
install-lib: $(LIB_OUT)/libpercs.a $(LIB_OUT)/libpercs-san.a \
	     $(LIB_OUT)/$(LIBPERCS_SONAME) $(LIB_MAN)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(INCLUDEDIR)/percs $(DESTDIR)$(INCLUDEDIR)/linux
	install -m 644 $(LIB_OUT)/libpercs.a $(LIB_OUT)/libpercs-san.a \
		$(DESTDIR)$(LIBDIR)/
	install -m 755 $(LIB_OUT)/$(LIBPERCS_SONAME) \
		$(DESTDIR)$(LIBDIR)/$(LIB_SHLIB)
	ln -sf $(LIB_SHLIB) $(DESTDIR)$(LIBDIR)/$(LIBPERCS_SONAME)
	ln -sf $(LIBPERCS_SONAME) $(DESTDIR)$(LIBDIR)/libpercs.so
	install -m 644 $(SRC)/lib/percs.h $(DESTDIR)$(INCLUDEDIR)/percs/percs.h
	install -m 644 $(SRC)/include/uapi/linux/percs.h \
		$(DESTDIR)$(INCLUDEDIR)/linux/percs.h
	$(LIB_PC_SED) $(SRC)/lib/libpercs.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/libpercs.pc
	$(if $(LIB_MAN),install -d $(DESTDIR)$(MANDIR)/man7)
	$(if $(LIB_MAN),install -m 644 $(LIB_MAN) $(DESTDIR)$(MANDIR)/man7/)

uninstall-lib:
	rm -f $(addprefix $(DESTDIR),$(LIB_INSTALLED))
