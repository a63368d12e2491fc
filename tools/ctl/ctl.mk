# SPDX-License-Identifier: GPL-2.0
#
# percs-ctl: inspect the emulated system (list, windows, topology) and drive
# its network (links, link, reorder, isr: debugfs); links --topology and
# reach ask the firmware model, compiled in, about a topology's links and the
# routes left with links down.
#
#   make ctl              $(BUILD)/tools/percs-ctl (+ man page with scdoc)
#   make ctl-unit-tests   $(BUILD)/results/ctl-san.{tap,expected}: usage,
#                         no-device behaviour, and every command's text and
#                         JSON against an LD_PRELOAD fake of the ioctls and
#                         of the ISR's debugfs files, on the build with
#                         $(SAN_FLAGS) (percs-ctl-san)

CTL_BIN := $(BUILD)/tools/percs-ctl
CTL_LIB := $(BUILD)/lib/libpercs.a
CTL_SAN_BIN := $(BUILD)/tools/percs-ctl-san
CTL_SAN_LIB := $(BUILD)/lib/libpercs-san.a
CTL_SRCS := $(SRC)/tools/ctl/percs-ctl.c $(SRC)/tools/ctl/isr.c \
	$(SRC)/tools/ctl/model.c
# The firmware model's topology, link, route table and route code (model.c).
CTL_FM_SRCS := $(addprefix $(SRC)/firmware-model/,topology.c link.c rtable.c \
	route.c spec.c)
CTL_HDRS := $(SRC)/tools/ctl/ctl.h $(SRC)/lib/percs.h \
	$(SRC)/include/uapi/linux/percs.h $(wildcard $(SRC)/firmware-model/*.h)
CTL_CFLAGS := $(CFLAGS_COMMON) -iquote $(SRC)/firmware-model
SCDOC ?= $(shell command -v scdoc 2>/dev/null)
CTL_MAN := $(if $(SCDOC),$(BUILD)/man/percs-ctl.1)

.PHONY: ctl ctl-unit-tests install-ctl uninstall-ctl
all: ctl
ctl: $(CTL_BIN) $(CTL_MAN)

$(CTL_BIN): $(CTL_SRCS) $(CTL_FM_SRCS) $(CTL_LIB) $(CTL_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CTL_CFLAGS) -o $@ $(CTL_SRCS) $(CTL_FM_SRCS) $(CTL_LIB)

$(CTL_SAN_BIN): $(CTL_SRCS) $(CTL_FM_SRCS) $(CTL_SAN_LIB) $(CTL_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CTL_CFLAGS) $(SAN_FLAGS) -o $@ $(CTL_SRCS) $(CTL_FM_SRCS) \
		$(CTL_SAN_LIB)

$(BUILD)/man/percs-ctl.1: $(SRC)/tools/ctl/percs-ctl.1.scd
	@mkdir -p $(@D)
	$(SCDOC) < $< > $@.tmp && mv $@.tmp $@

# The shim fakes the two query ioctls on plain files named percs-hfiN, and
# the kernel's refusals of writes to the ISR's control files.
$(BUILD)/tools/test-fake-hfi.so: $(SRC)/tools/ctl/test-fake-hfi.c $(CTL_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -shared -fPIC -o $@ $< -ldl

# The sanitized run: the shim is preloaded ahead of the ASan runtime, which
# ASan accepts once told not to check that order; a report fails the test.
# Only the sanitized build: the same source and tests, with every read,
# write and undefined operation checked (running the plain build too
# doubled the suite's time and found nothing the other did not).
ctl-unit-tests: $(CTL_SAN_BIN) $(BUILD)/tools/test-fake-hfi.so
	@mkdir -p $(BUILD)/results
	@$(SRC)/tools/ctl/test-ctl.sh --count > $(BUILD)/results/ctl-san.expected
	@ASAN_OPTIONS=verify_asan_link_order=0 \
	$(SRC)/tools/ctl/test-ctl.sh $(CTL_SAN_BIN) $(BUILD)/tools/test-fake-hfi.so \
		> $(BUILD)/results/ctl-san.tap; \
	rc=$$?; cat $(BUILD)/results/ctl-san.tap; \
	[ $$rc -eq 0 ] || echo "ctl-unit-tests (ASan/UBSan): failures (exit $$rc)"

unit-tests: ctl-unit-tests

install: install-ctl
uninstall: uninstall-ctl
install-ctl: $(CTL_BIN) $(CTL_MAN)
	install -d $(DESTDIR)$(BINDIR)
	install -m 755 $(CTL_BIN) $(DESTDIR)$(BINDIR)/percs-ctl
	$(if $(CTL_MAN),install -d $(DESTDIR)$(MANDIR)/man1)
	$(if $(CTL_MAN),install -m 644 $(CTL_MAN) $(DESTDIR)$(MANDIR)/man1/)

uninstall-ctl:
	rm -f $(DESTDIR)$(BINDIR)/percs-ctl $(DESTDIR)$(MANDIR)/man1/percs-ctl.1
