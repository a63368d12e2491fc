# SPDX-License-Identifier: GPL-2.0
#
# libpercs-msg: point-to-point messaging between the ranks of a percs-run
# job (tagged eager/rendezvous protocol over libpercs windows).
#
#   make msg        $(BUILD)/lib/libpercs-msg.a, libpercs-msg-san.a ($(SAN_FLAGS))
#   make install-msg  both libraries and <percs/percs_msg.h> (it includes
#                   percs.h from the same directory); uninstall-msg
#
# A library of its own beside libpercs (Documentation/design.rst,
# "Messaging layer"): the driver library stays the thin HFI layer, and
# programs that only drive windows do not carry the protocol.

MSG_SRCS := endpoint.c wire.c send.c recv.c job.c failure.c rcache.c
MSG_HDRS := $(SRC)/lib/msg/percs_msg.h $(SRC)/lib/msg/msg_internal.h \
	$(SRC)/lib/msg/pmi.h $(SRC)/lib/percs.h $(SRC)/include/uapi/linux/percs.h
MSG_CFLAGS := $(CFLAGS_COMMON) -D_FILE_OFFSET_BITS=64 -I$(SRC)/lib/msg
MSG_OBJS := $(MSG_SRCS:%.c=$(BUILD)/lib/msg/obj/%.o)
MSG_SAN_OBJS := $(MSG_SRCS:%.c=$(BUILD)/lib/msg/san/%.o)
MSG_LIB := $(BUILD)/lib/libpercs-msg.a
MSG_SAN_LIB := $(BUILD)/lib/libpercs-msg-san.a

.PHONY: msg install-msg uninstall-msg
all: msg
msg: $(MSG_LIB) $(MSG_SAN_LIB)

$(BUILD)/lib/msg/obj/%.o: $(SRC)/lib/msg/%.c $(MSG_HDRS)
	@mkdir -p $(@D)
	$(CC) $(MSG_CFLAGS) -c -o $@ $<

$(BUILD)/lib/msg/san/%.o: $(SRC)/lib/msg/%.c $(MSG_HDRS)
	@mkdir -p $(@D)
	$(CC) $(MSG_CFLAGS) $(SAN_FLAGS) -c -o $@ $<

$(MSG_LIB): $(MSG_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(MSG_SAN_LIB): $(MSG_SAN_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

MSG_INSTALLED := $(LIBDIR)/libpercs-msg.a $(LIBDIR)/libpercs-msg-san.a \
	$(INCLUDEDIR)/percs/percs_msg.h

install: install-msg
uninstall: uninstall-msg
install-msg: $(MSG_LIB) $(MSG_SAN_LIB)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/percs
	install -m 644 $(MSG_LIB) $(MSG_SAN_LIB) $(DESTDIR)$(LIBDIR)/
	install -m 644 $(SRC)/lib/msg/percs_msg.h $(DESTDIR)$(INCLUDEDIR)/percs/

uninstall-msg:
	rm -f $(addprefix $(DESTDIR),$(MSG_INSTALLED))
