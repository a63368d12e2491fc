# SPDX-License-Identifier: GPL-2.0
#
# percs-topo: route traffic patterns over full-size PERCS topologies with
# the firmware model (firmware-model/*.c compiled in, optimized).
#
#   make topo              $(BUILD)/tools/percs-topo (+ man page with scdoc)
#   make topo-unit-tests   $(BUILD)/results/topo.{tap,expected}: flags and
#                          their errors, section VII.A's figures, aggregated
#                          against per-flow loads, CSV, JSON and plot

TOPO_DIR := $(SRC)/tools/topo
TOPO_BIN := $(BUILD)/tools/percs-topo
TOPO_SRCS := $(addprefix $(TOPO_DIR)/,percs-topo.c pattern.c sim.c report.c \
	plot.c progress.c bench.c)
TOPO_FM_SRCS := $(filter-out %/packet.c,$(wildcard $(SRC)/firmware-model/*.c))
TOPO_HDRS := $(TOPO_DIR)/topo.h $(wildcard $(SRC)/firmware-model/*.h) \
	$(SRC)/include/uapi/linux/percs.h
TOPO_CFLAGS := $(CFLAGS_COMMON) -D_GNU_SOURCE -I$(SRC)/firmware-model \
	-Wmissing-prototypes -Wshadow -Wvla
TOPO_SCDOC ?= $(shell command -v scdoc 2>/dev/null)
TOPO_MAN := $(if $(TOPO_SCDOC),$(BUILD)/man/percs-topo.1)

.PHONY: topo topo-unit-tests install-topo uninstall-topo
all: topo
topo: $(TOPO_BIN) $(TOPO_MAN)

$(TOPO_BIN): $(TOPO_SRCS) $(TOPO_FM_SRCS) $(TOPO_HDRS) $(TOPO_DIR)/topo.mk
	@mkdir -p $(@D)
	$(CC) $(TOPO_CFLAGS) -o $@ $(TOPO_SRCS) $(TOPO_FM_SRCS) -lm

$(BUILD)/man/percs-topo.1: $(TOPO_DIR)/percs-topo.1.scd
	@mkdir -p $(@D)
	$(TOPO_SCDOC) < $< > $@.tmp && mv $@.tmp $@

topo-unit-tests: $(TOPO_BIN)
	@mkdir -p $(BUILD)/results
	@$(TOPO_DIR)/test-topo.sh --count > $(BUILD)/results/topo.expected
	@$(TOPO_DIR)/test-topo.sh $(TOPO_BIN) > $(BUILD)/results/topo.tap; \
	rc=$$?; cat $(BUILD)/results/topo.tap; \
	[ $$rc -eq 0 ] || echo "topo-unit-tests: failures (exit $$rc)"

unit-tests: topo-unit-tests

install: install-topo
uninstall: uninstall-topo
install-topo: $(TOPO_BIN) $(TOPO_MAN)
	install -d $(DESTDIR)$(BINDIR)
	install -m 755 $(TOPO_BIN) $(DESTDIR)$(BINDIR)/percs-topo
	$(if $(TOPO_MAN),install -d $(DESTDIR)$(MANDIR)/man1)
	$(if $(TOPO_MAN),install -m 644 $(TOPO_MAN) $(DESTDIR)$(MANDIR)/man1/)

uninstall-topo:
	rm -f $(DESTDIR)$(BINDIR)/percs-topo $(DESTDIR)$(MANDIR)/man1/percs-topo.1
