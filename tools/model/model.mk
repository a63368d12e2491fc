# SPDX-License-Identifier: GPL-2.0
#
# percs-bench model: the collectives' PLogP model measured, written to its
# parameter file, and checked against measurement (tools/model).
#
#   make model     $(BUILD)/tools/percs-mpi-model (the MPI program that
#                  measures, built with percs-cc) and
#                  $(BUILD)/tools/percs-bench-model (the script percs-bench
#                  model runs: it launches the program under percs-run)
#                  $(BUILD)/tools/percs-project-calc and
#                  $(BUILD)/tools/percs-bench-project: percs-bench project,
#                  the model projected to full scale (the calculator links
#                  the model, libpercs's CAU tree shapes and the firmware
#                  model's topology)
#   make model-unit-tests
#                  $(BUILD)/results/model-bench.{tap,expected}: the script's
#                  options, the file it writes and its report, from made-up
#                  measurements (tools/model/test-model.sh; no VM), and
#                  $(BUILD)/results/project.{tap,expected}: the projection's
#                  arithmetic, options and errors on a hand-made parameter
#                  file (tools/model/test-project.sh, under ASan/UBSan)

MODEL_BIN := $(BUILD)/tools/percs-mpi-model
MODEL_SCRIPT := $(BUILD)/tools/percs-bench-model
PROJECT_CALC := $(BUILD)/tools/percs-project-calc
PROJECT_SCRIPT := $(BUILD)/tools/percs-bench-project
PROJECT_SRCS := $(SRC)/tools/model/project-calc.c \
	$(SRC)/tools/model/projection.c $(SRC)/lib/mpi/coll_model.c \
	$(filter-out %/packet.c,$(wildcard $(SRC)/firmware-model/*.c))
PROJECT_HDRS := $(SRC)/tools/model/projection.h $(SRC)/lib/mpi/coll_model.h \
	$(SRC)/lib/mpi/mpi_internal.h $(SRC)/lib/percs.h \
	$(wildcard $(SRC)/firmware-model/*.h)

.PHONY: model model-unit-tests
all: model
model: $(MODEL_BIN) $(MODEL_SCRIPT) $(BUILD)/tools/percs_plot.py run-tool \
	$(PROJECT_CALC) $(PROJECT_SCRIPT)

$(MODEL_BIN): $(SRC)/tools/model/model-bench.c $(PERCS_CC) $(MPI_LIB) \
	      $(MPI_HDRS) $(MSG_LIB) $(BUILD)/lib/libpercs.a
	@mkdir -p $(@D)
	$(PERCS_CC) -std=gnu11 -Wall -Wextra -Werror -O2 -g -I$(SRC)/lib/mpi \
		-I$(SRC)/lib/msg -I$(SRC)/lib -I$(SRC)/include/uapi -o $@ $<

$(MODEL_SCRIPT): $(SRC)/tools/model/percs-bench-model
	@mkdir -p $(@D)
	install -m 755 $< $@

# With the sanitizers: the unit tests run this build of the calculator.
$(PROJECT_CALC): $(PROJECT_SRCS) $(PROJECT_HDRS) $(BUILD)/lib/libpercs-san.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) -Wmissing-prototypes -Wshadow -Wvla \
		-I$(SRC)/lib/mpi -I$(SRC)/include/mpi -I$(SRC)/lib/msg \
		-I$(SRC)/firmware-model -o $@ $(PROJECT_SRCS) \
		$(BUILD)/lib/libpercs-san.a -lm

$(PROJECT_SCRIPT): $(SRC)/tools/model/percs-bench-project
	@mkdir -p $(@D)
	install -m 755 $< $@

model-unit-tests: $(MODEL_SCRIPT) $(BUILD)/tools/percs_plot.py $(PROJECT_CALC) \
		  $(PROJECT_SCRIPT)
	@mkdir -p $(BUILD)/results
	@$(SRC)/tools/model/test-model.sh --count > $(BUILD)/results/model-bench.expected
	@$(SRC)/tools/model/test-model.sh $(MODEL_SCRIPT) > $(BUILD)/results/model-bench.tap; \
	rc=$$?; cat $(BUILD)/results/model-bench.tap; \
	[ $$rc -eq 0 ] || echo "model-unit-tests: failures (exit $$rc)"
	@$(SRC)/tools/model/test-project.sh --count > $(BUILD)/results/project.expected
	@$(SRC)/tools/model/test-project.sh $(PROJECT_SCRIPT) > $(BUILD)/results/project.tap; \
	rc=$$?; cat $(BUILD)/results/project.tap; \
	[ $$rc -eq 0 ] || echo "model-unit-tests (project): failures (exit $$rc)"

unit-tests: model-unit-tests
