# SPDX-License-Identifier: GPL-2.0
#
# percs-bench: latency, bandwidth and the machine's limits in one run.
#
#   make bench     $(BUILD)/tools/percs-bench, man page (if scdoc is installed)

BENCH_SRCS := percs-bench.c pair.c limits.c lat.c bw.c report.c cost.c targets.c \
	rdma.c atomic.c coll.c
BENCH_OBJS := $(BENCH_SRCS:%.c=$(BUILD)/tools/bench/%.o)
BENCH_BIN := $(BUILD)/tools/percs-bench
BENCH_CFLAGS := $(CFLAGS_COMMON) -std=gnu11 -D_FILE_OFFSET_BITS=64
BENCH_SCDOC ?= $(shell command -v scdoc 2>/dev/null)
BENCH_MAN := $(if $(BENCH_SCDOC),$(BUILD)/man/percs-bench.1)
BENCH_LIBA := $(BUILD)/lib/libpercs.a
PREFIX ?= /usr/local
MANDIR ?= $(PREFIX)/share/man

.PHONY: bench install-bench
all: bench
bench: $(BENCH_BIN) $(BENCH_MAN)

$(BUILD)/tools/bench/%.o: $(SRC)/tools/bench/%.c $(SRC)/tools/bench/bench.h \
			  $(SRC)/lib/percs.h $(SRC)/include/uapi/linux/percs.h
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -c -o $@ $<

$(BENCH_BIN): $(BENCH_OBJS) $(BENCH_LIBA)
	@mkdir -p $(@D)
	$(CC) -pthread -o $@ $(BENCH_OBJS) $(BENCH_LIBA) -lm

$(BUILD)/man/percs-bench.1: $(SRC)/tools/bench/percs-bench.1.scd
	@mkdir -p $(@D)
	$(BENCH_SCDOC) < $< > $@

install: install-bench
install-bench: bench
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BENCH_BIN) $(DESTDIR)$(PREFIX)/bin/percs-bench
	$(if $(BENCH_MAN),install -d $(DESTDIR)$(MANDIR)/man1)
	$(if $(BENCH_MAN),install -m 644 $(BENCH_MAN) $(DESTDIR)$(MANDIR)/man1/)
