# SPDX-License-Identifier: GPL-2.0
#
# tools/vm: the test VM runner (tools/vm/percs-vm; see its --help).
#
#   make vm-selftest   check percs-vm itself: exit status, argument passing,
#                      the output share, ASan binaries, --module, --timeout,
#                      the kernel-log oracle, a panic, the arguments it adds
#                      for the kernel it boots (and a debug kernel's boot if
#                      one is built). Boots about fifteen VMs (a minute or
#                      two); writes
#                      $(BUILD)/results/percs-vm.{tap,expected}.
#                      Part of vm-tests unless VM_SELFTEST=0.
#
# The cached initramfs and uncompressed kernel live in $(BUILD)/vm.

export PERCS_VM_CACHE ?= $(BUILD)/vm
VM_SELFTEST ?= 1

.PHONY: vm-selftest
ifeq ($(VM_SELFTEST),1)
vm-tests: vm-selftest
endif

vm-selftest:
	@mkdir -p $(BUILD)/results
	@$(SRC)/tools/vm/selftest.sh --count > $(BUILD)/results/percs-vm.expected
	@$(SRC)/tools/vm/selftest.sh | tee $(BUILD)/results/percs-vm.tap; \
	if grep -q '^not ok' $(BUILD)/results/percs-vm.tap; then \
		echo "vm-selftest: failures, see $(BUILD)/results/percs-vm.tap"; \
	fi

# coverage-cover.py (how the debug kernels' lists are chosen) on made-up
# coverage files: no VM, well under a second.
.PHONY: vm-unit-tests
vm-unit-tests:
	@mkdir -p $(BUILD)/results
	@$(SRC)/tools/vm/test-coverage-cover.sh --count > $(BUILD)/results/coverage-cover.expected
	@$(SRC)/tools/vm/test-coverage-cover.sh $(SRC)/tools/vm/coverage-cover.py \
		> $(BUILD)/results/coverage-cover.tap; \
	rc=$$?; cat $(BUILD)/results/coverage-cover.tap; \
	[ $$rc -eq 0 ] || echo "vm-unit-tests: failures (exit $$rc)"

unit-tests: vm-unit-tests
