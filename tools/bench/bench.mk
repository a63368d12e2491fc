# SPDX-License-Identifier: GPL-2.0
#
# percs-bench: latency, bandwidth and the machine's limits in one run.
#
#   make bench     $(BUILD)/tools/percs-bench, man page (if scdoc is installed)
#   make bench-unit-tests
#                  $(BUILD)/results/bench-san.{tap,expected}: tools/bench/test-bench.sh
#                  on the build with $(SAN_FLAGS) (percs-bench-san, only it: the
#                  plain build's run doubled the time and found nothing more),
#                  no kernel needed: --help, every option's bad values, unknown
#                  options and subcommands (exit 2, the message on stderr,
#                  nothing on stdout), values at the edges of their ranges (they
#                  reach the device check), no device (exit 1, the documented
#                  message), a file that is not an HFI, the hub checks against
#                  percs-ctl's fake HFI shim
#
# The benchmarks themselves run in the stock-kernel VM pass (make vm-tests):
# selftests/bench.sh, results vm-bench.tap.

BENCH_SRCS := percs-bench.c pair.c limits.c lat.c bw.c report.c cost.c targets.c \
	rdma.c atomic.c coll.c
BENCH_OBJS := $(BENCH_SRCS:%.c=$(BUILD)/tools/bench/%.o)
BENCH_BIN := $(BUILD)/tools/percs-bench
BENCH_CFLAGS := $(CFLAGS_COMMON) -std=gnu11 -D_FILE_OFFSET_BITS=64
BENCH_SCDOC ?= $(shell command -v scdoc 2>/dev/null)
BENCH_MAN := $(if $(BENCH_SCDOC),$(BUILD)/man/percs-bench.1)
BENCH_LIBA := $(BUILD)/lib/libpercs.a
BENCH_SAN_OBJS := $(BENCH_SRCS:%.c=$(BUILD)/tools/bench/san/%.o)
BENCH_SAN_BIN := $(BUILD)/tools/percs-bench-san
BENCH_SAN_LIBA := $(BUILD)/lib/libpercs-san.a
BENCH_SHIM := $(BUILD)/tools/test-fake-hfi.so

.PHONY: bench bench-unit-tests install-bench uninstall-bench
all: bench
bench: $(BENCH_BIN) $(BENCH_MAN) $(BUILD)/tools/verbs-floor

$(BUILD)/tools/bench/%.o: $(SRC)/tools/bench/%.c $(SRC)/tools/bench/bench.h \
			  $(SRC)/lib/percs.h $(SRC)/include/uapi/linux/percs.h
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -c -o $@ $<

$(BENCH_BIN): $(BENCH_OBJS) $(BENCH_LIBA)
	@mkdir -p $(@D)
	$(CC) -pthread -o $@ $(BENCH_OBJS) $(BENCH_LIBA) -lm

# The cost of one verbs command, for tools/bench/verbs-vs-rxe.sh's floor.
$(BUILD)/tools/verbs-floor: $(SRC)/tools/bench/verbs-floor.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -o $@ $< -libverbs

$(BUILD)/tools/bench/san/%.o: $(SRC)/tools/bench/%.c $(SRC)/tools/bench/bench.h \
			      $(SRC)/lib/percs.h $(SRC)/include/uapi/linux/percs.h
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) $(SAN_FLAGS) -c -o $@ $<

$(BENCH_SAN_BIN): $(BENCH_SAN_OBJS) $(BENCH_SAN_LIBA)
	@mkdir -p $(@D)
	$(CC) -pthread $(SAN_FLAGS) -o $@ $(BENCH_SAN_OBJS) $(BENCH_SAN_LIBA) -lm

# As ctl-unit-tests: the shim goes ahead of the ASan runtime, which ASan
# accepts once told not to check that order; a report fails the test.
bench-unit-tests: $(BENCH_SAN_BIN) $(BENCH_SHIM)
	@mkdir -p $(BUILD)/results
	@$(SRC)/tools/bench/test-bench.sh --count > $(BUILD)/results/bench-san.expected
	@ASAN_OPTIONS=verify_asan_link_order=0 \
	$(SRC)/tools/bench/test-bench.sh $(BENCH_SAN_BIN) $(BENCH_SHIM) \
		> $(BUILD)/results/bench-san.tap; \
	rc=$$?; cat $(BUILD)/results/bench-san.tap; \
	[ $$rc -eq 0 ] || echo "bench-unit-tests (ASan/UBSan): failures (exit $$rc)"

unit-tests: bench-unit-tests

$(BUILD)/man/percs-bench.1: $(SRC)/tools/bench/percs-bench.1.scd
	@mkdir -p $(@D)
	$(BENCH_SCDOC) < $< > $@

# verbs-floor is the verbs benchmark's helper, not installed.
install: install-bench
uninstall: uninstall-bench
install-bench: $(BENCH_BIN) $(BENCH_MAN)
	install -d $(DESTDIR)$(BINDIR)
	install -m 755 $(BENCH_BIN) $(DESTDIR)$(BINDIR)/percs-bench
	$(if $(BENCH_MAN),install -d $(DESTDIR)$(MANDIR)/man1)
	$(if $(BENCH_MAN),install -m 644 $(BENCH_MAN) $(DESTDIR)$(MANDIR)/man1/)

uninstall-bench:
	rm -f $(DESTDIR)$(BINDIR)/percs-bench $(DESTDIR)$(MANDIR)/man1/percs-bench.1
