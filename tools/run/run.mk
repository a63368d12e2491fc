# SPDX-License-Identifier: GPL-2.0
#
# percs-run: the job launcher (tools/run/percs-run.c, placement.c; the
# socket protocol it speaks with the ranks is lib/msg/pmi.h).
#
#   make run-tool   $(BUILD)/tools/percs-run, man page (with scdoc)
#   make install-run-tool, uninstall-run-tool
#
# Its tests run in the VM: selftests/mpi.sh (make vm-tests).

RUN_BIN := $(BUILD)/tools/percs-run
RUN_SRCS := $(SRC)/tools/run/percs-run.c $(SRC)/tools/run/placement.c
RUN_HDRS := $(SRC)/tools/run/placement.h $(SRC)/lib/msg/pmi.h \
	$(SRC)/lib/percs.h $(SRC)/include/uapi/linux/percs.h
RUN_SCDOC ?= $(shell command -v scdoc 2>/dev/null)
RUN_MAN := $(if $(RUN_SCDOC),$(BUILD)/man/percs-run.1)

.PHONY: run-tool install-run-tool uninstall-run-tool
all: run-tool
run-tool: $(RUN_BIN) $(RUN_MAN)

$(RUN_BIN): $(RUN_SRCS) $(RUN_HDRS) $(BUILD)/lib/libpercs.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -D_GNU_SOURCE -I$(SRC)/lib/msg -I$(SRC)/tools/run \
		-o $@ $(RUN_SRCS) $(BUILD)/lib/libpercs.a

$(BUILD)/man/percs-run.1: $(SRC)/tools/run/percs-run.1.scd
	@mkdir -p $(@D)
	$(RUN_SCDOC) < $< > $@.tmp && mv $@.tmp $@

install: install-run-tool
uninstall: uninstall-run-tool
install-run-tool: $(RUN_BIN) $(RUN_MAN)
	install -d $(DESTDIR)$(BINDIR)
	install -m 755 $(RUN_BIN) $(DESTDIR)$(BINDIR)/percs-run
	$(if $(RUN_MAN),install -d $(DESTDIR)$(MANDIR)/man1)
	$(if $(RUN_MAN),install -m 644 $(RUN_MAN) $(DESTDIR)$(MANDIR)/man1/)

uninstall-run-tool:
	rm -f $(DESTDIR)$(BINDIR)/percs-run $(DESTDIR)$(MANDIR)/man1/percs-run.1
