# SPDX-License-Identifier: GPL-2.0
#
# Packaging: the module's source for DKMS, the Debian packages, and the
# tests that install the project the way users and distributions do.
#
#   make install-dkms-source  the module's sources (Kbuild, kernel/,
#                       firmware-model/, the uapi header) and dkms.conf into
#                       $(DESTDIR)/usr/src/percs-VERSION; then
#                       dkms install percs/VERSION; uninstall-dkms-source
#   make deb            $(BUILD)/deb/: percs-dkms, libpercs1, libpercs-dev,
#                       percs-tools from debian/ (packaging/make-deb.sh)
#   make pkg-tests      TAP in $(BUILD)/results:
#     pkg-install       make install into a staging root, its files, the
#                       programs of packaging/tests built against it with
#                       pkg-config and the installed percs-cc/percs-oshcc
#                       into $(BUILD)/pkg/bin (selftests/installed.sh runs
#                       them in the VM: make vm-tests), make uninstall
#                       (packaging/test-install.sh; a few seconds)
#     pkg-dkms          the installed source built by dkms for the installed
#                       kernel, in a DKMS tree of its own (test-dkms.sh)
#     pkg-deb           make deb, the packages' contents, lintian
#                       (test-deb.sh)
#
# The version is the library's (LIBPERCS_VERSION, lib/lib.mk): dkms.conf
# gets it here, the Debian packages from debian/changelog, which make deb
# checks against it.

PKG_VERSION := $(LIBPERCS_VERSION)
PKG_OUT := $(BUILD)/pkg
DKMS_SRCDIR := /usr/src/percs-$(PKG_VERSION)
# What Kbuild compiles, relative to the top of the tree.
PKG_KSRCS := Kbuild include/uapi/linux/percs.h \
	$(patsubst $(SRC)/%,%,$(wildcard $(SRC)/kernel/*.[ch] \
	$(SRC)/kernel/verbs/*.[ch] $(SRC)/firmware-model/*.[ch]))

.PHONY: install-dkms-source uninstall-dkms-source deb pkg-tests \
	pkg-install-tests pkg-dkms-tests pkg-deb-tests

install-dkms-source:
	install -d $(DESTDIR)$(DKMS_SRCDIR)
	cd $(SRC) && for f in $(PKG_KSRCS); do \
		install -D -m 644 $$f $(DESTDIR)$(DKMS_SRCDIR)/$$f || exit 1; \
	done
	sed 's/#MODULE_VERSION#/$(PKG_VERSION)/' $(SRC)/packaging/dkms.conf \
		> $(DESTDIR)$(DKMS_SRCDIR)/dkms.conf

# The directory is the module source's alone.
uninstall-dkms-source:
	rm -rf $(DESTDIR)$(DKMS_SRCDIR)

deb:
	$(SRC)/packaging/make-deb.sh $(SRC) $(BUILD)/deb $(PKG_VERSION)

pkg-tests: pkg-install-tests pkg-dkms-tests pkg-deb-tests

# run_pkg_test NAME SCRIPT ARGS...: NAME.expected, then NAME.tap; a
# failure shows in the TAP file and does not stop make.
define run_pkg_test
	@mkdir -p $(BUILD)/results
	@$(2) --count > $(BUILD)/results/$(1).expected
	@$(2) $(3) > $(BUILD)/results/$(1).tap; \
	rc=$$?; cat $(BUILD)/results/$(1).tap; \
	[ $$rc -eq 0 ] || echo "$(1): failures (exit $$rc)"
endef

pkg-install-tests:
	+$(call run_pkg_test,pkg-install,MAKE="$(MAKE)" $(SRC)/packaging/test-install.sh,\
		$(SRC) $(BUILD) $(PKG_OUT))

pkg-dkms-tests:
	+$(call run_pkg_test,pkg-dkms,MAKE="$(MAKE)" $(SRC)/packaging/test-dkms.sh,\
		$(SRC) $(BUILD) $(PKG_OUT)/dkms $(KVER))

pkg-deb-tests:
	+$(call run_pkg_test,pkg-deb,MAKE="$(MAKE)" $(SRC)/packaging/test-deb.sh,\
		$(SRC) $(BUILD) $(PKG_VERSION))
