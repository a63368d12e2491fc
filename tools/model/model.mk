# SPDX-License-Identifier: GPL-2.0
#
# percs-bench model: the collectives' PLogP model measured, written to its
# parameter file, and checked against measurement (tools/model).
#
#   make model     $(BUILD)/tools/percs-mpi-model (the MPI program that
#                  measures, built with percs-cc) and
#                  $(BUILD)/tools/percs-bench-model (the script percs-bench
#                  model runs: it launches the program under percs-run)
#   make model-unit-tests
#                  $(BUILD)/results/model-bench.{tap,expected}: the script's
#                  options, the file it writes and its report, from made-up
#                  measurements (tools/model/test-model.sh; no VM)

MODEL_BIN := $(BUILD)/tools/percs-mpi-model
MODEL_SCRIPT := $(BUILD)/tools/percs-bench-model

.PHONY: model model-unit-tests
all: model
model: $(MODEL_BIN) $(MODEL_SCRIPT) $(BUILD)/tools/percs_plot.py run-tool

$(MODEL_BIN): $(SRC)/tools/model/model-bench.c $(PERCS_CC) $(MPI_LIB) \
	      $(MPI_HDRS) $(MSG_LIB) $(BUILD)/lib/libpercs.a
	@mkdir -p $(@D)
	$(PERCS_CC) -std=gnu11 -Wall -Wextra -Werror -O2 -g -I$(SRC)/lib/mpi \
		-I$(SRC)/lib/msg -I$(SRC)/lib -I$(SRC)/include/uapi -o $@ $<

$(MODEL_SCRIPT): $(SRC)/tools/model/percs-bench-model
	@mkdir -p $(@D)
	install -m 755 $< $@

model-unit-tests: $(MODEL_SCRIPT) $(BUILD)/tools/percs_plot.py
	@mkdir -p $(BUILD)/results
	@$(SRC)/tools/model/test-model.sh --count > $(BUILD)/results/model-bench.expected
	@$(SRC)/tools/model/test-model.sh $(MODEL_SCRIPT) > $(BUILD)/results/model-bench.tap; \
	rc=$$?; cat $(BUILD)/results/model-bench.tap; \
	[ $$rc -eq 0 ] || echo "model-unit-tests: failures (exit $$rc)"

unit-tests: model-unit-tests
