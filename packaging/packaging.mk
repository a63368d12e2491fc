# SPDX-License-Identifier: GPL-2.0
#
# Packaging: the module's source for DKMS, the Debian packages.
#
#   make install-dkms-source  the module's sources (Kbuild, kernel/,
#                       firmware-model/, the uapi header) and dkms.conf into
#                       $(DESTDIR)/usr/src/percs-VERSION; then
#                       dkms install percs/VERSION; uninstall-dkms-source
#   make deb            $(BUILD)/deb/: percs-dkms, libpercs1, libpercs-dev,
#                       percs-tools from debian/ (packaging/make-deb.sh)
#
# The version is the library's (LIBPERCS_VERSION, lib/lib.mk): dkms.conf
# gets it here, the Debian packages from debian/changelog, which make deb
# checks against it.

PKG_VERSION := $(LIBPERCS_VERSION)
DKMS_SRCDIR := /usr/src/percs-$(PKG_VERSION)
# What Kbuild compiles, relative to the top of the tree.
PKG_KSRCS := Kbuild include/uapi/linux/percs.h \
	$(patsubst $(SRC)/%,%,$(wildcard $(SRC)/kernel/*.[ch] \
	$(SRC)/kernel/verbs/*.[ch] $(SRC)/firmware-model/*.[ch]))

.PHONY: install-dkms-source uninstall-dkms-source deb

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
