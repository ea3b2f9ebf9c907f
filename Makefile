# iolayer — build, test and demo.  `make help` lists the targets.
# Tools are found by convention: bpf/NAME.bpf.c + user/NAME.c (+ bpf/NAME.h shared types)
# give the binary NAME with '_' turned into '-' (writeback_ret -> writeback-ret).

BUILD   ?= build
PREFIX  ?= /usr/local
DESTDIR ?=
# Put before every installed program and man page name: PROGRAM_PREFIX=il- installs
# il-biolatency and il-biolatency.8, beside Debian's libbpf-tools of the same names.
PROGRAM_PREFIX ?=
CLANG   ?= clang
BPFTOOL ?= bpftool
LLVM_OBJDUMP ?= llvm-objdump
CC      ?= gcc
ARCH    ?= x86
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo 0.1)

TOOLS    := $(filter $(patsubst user/%.c,%,$(wildcard user/*.c)),$(patsubst bpf/%.bpf.c,%,$(wildcard bpf/*.bpf.c)))
BINS     := $(foreach t,$(TOOLS),$(BUILD)/bin/$(subst _,-,$(t)))
LIB_SRC  := $(wildcard user/lib/*.c)
LIB_OBJ  := $(patsubst user/lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRC))
LIB      := $(BUILD)/libiolayer.a
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNITS    := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
WL_SRC   := $(wildcard tests/workloads/*.c)
WLS      := $(patsubst tests/workloads/%.c,$(BUILD)/workloads/%,$(WL_SRC))
MANS     := $(wildcard docs/man/*.8)

PKGS     := libbpf libelf zlib json-c libdw libmicrohttpd
WARN     := -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wmissing-prototypes
CFLAGS   ?= -g -O2
override CFLAGS += $(WARN) -Werror -std=gnu11 -D_GNU_SOURCE -Iuser/lib -Ibpf -I$(BUILD) \
                   -DIL_VERSION='"$(VERSION)"'
LDLIBS   := $(LIB) -lbpf -lelf -lz -ljson-c -ldw -lpthread -lm
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux -Ibpf -Werror -Wall \
              -Wno-unused-function -Wno-compare-distinct-pointer-types

.PHONY: all deps demo check check-unit check-integration vmtest bench install clean help
.DELETE_ON_ERROR:
.SECONDARY:

all: $(BINS) $(WLS)

help:
	@echo "make [all]              build the tools into $(BUILD)/bin and test workloads"
	@echo "make deps               install what building and testing need (Debian packages)"
	@echo "sudo make demo          deps + build + the tools on a bundled workload (loop ext4 in /dev/shm)"
	@echo "sudo make check         deps + build + unit tests + integration tests (root)"
	@echo "make check-unit         unit tests only (cmocka, no root), and the include rules (tools/include-graph)"
	@echo "sudo make check-integration   integration tests only (TAP, prove, root)"
	@echo "sudo make vmtest [KERNELS='5.10 6.1 6.12'|KERNELS=/path/bzImage]  integration suite in virtme-ng guests"
	@echo "sudo make bench         benchmarks beside the peers (libbpf-tools, bpftrace): docs/benchmarks.md"
	@echo "make install [PREFIX=/usr/local DESTDIR= PROGRAM_PREFIX=]   install binaries and man pages"
	@echo "                         (PROGRAM_PREFIX=il- -> il-biolatency: keeps Debian's libbpf-tools biolatency, fsslower visible)"
	@echo "make deb                 the Debian package into $(BUILD)/deb (tools/debian: iolayer, il-biolatency...)"
	@echo "sudo make check-deb      make deb, then install it beside libbpf-tools, run its tools, remove it"

deps:
	@tools/install-deps

# --- BPF objects and skeletons -------------------------------------------------
$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/lib/*.h) $(wildcard bpf/*.h) vmlinux/vmlinux.h | $(BUILD)/bpf
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	@# atomics other than add (or, and, xor, xchg, fetch) need 5.12: 5.10 refuses the program
	@if $(LLVM_OBJDUMP) -d --no-show-raw-insn $@.tmp | grep -E 'lock .*[|&^]=|xchg|atomic|fetch'; then \
		echo "$<: an atomic other than add (above) that 5.10 refuses ('BPF_STX uses reserved fields')" >&2; \
		rm -f $@.tmp; exit 1; fi
	$(BPFTOOL) gen object $@ $@.tmp
	@rm -f $@.tmp

$(BUILD)/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@  # struct NAME_bpf, NAME_bpf__open() ...

# --- user space ------------------------------------------------------------------
$(BUILD)/lib/%.o: user/lib/%.c $(wildcard user/lib/*.h user/lib/layers/*.h) $(wildcard bpf/lib/*.h) $(wildcard bpf/*.h) | $(BUILD)/lib
	$(CC) $(CFLAGS) -c $< -o $@

# The HTML report's page (user/lib/report/), embedded in report.o with .incbin
$(BUILD)/lib/report.o: $(wildcard user/lib/report/*)

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/obj/%.o: user/%.c $(BUILD)/%.skel.h $(wildcard user/lib/*.h user/lib/layers/*.h) $(wildcard bpf/*.h) $(wildcard bpf/lib/*.h) | $(BUILD)/obj
	$(CC) $(CFLAGS) -c $< -o $@

define tool_rule
$(BUILD)/bin/$(subst _,-,$(1)): $(BUILD)/obj/$(1).o $(LIB) | $(BUILD)/bin
	$$(CC) $$(CFLAGS) $$< -o $$@ $$(LDLIBS)
endef
$(foreach t,$(TOOLS),$(eval $(call tool_rule,$(t))))
# libmicrohttpd is not linked: iolayer --serve opens it (dlopen, user/lib/serve.c), so that
# no other run loads it and the TLS libraries it brings

$(BUILD)/workloads/%: tests/workloads/%.c tests/workloads/wl.h | $(BUILD)/workloads
	$(CC) $(CFLAGS) $< -o $@ -lpthread

# The benchmark's raw tracepoint floor loads BPF programs itself.
$(BUILD)/workloads/raw_floor: tests/workloads/raw_floor.c | $(BUILD)/workloads
	$(CC) $(CFLAGS) $< -o $@ -lbpf

# The slow-disk fixture is a FUSE daemon (libfuse3-dev: tests/integration/slowdisk-lib.sh).
$(BUILD)/workloads/slowdisk: tests/workloads/slowdisk.c | $(BUILD)/workloads
	$(CC) $(CFLAGS) $$(pkg-config --cflags fuse3) $< -o $@ $$(pkg-config --libs fuse3)

# A known user stack for iowaitstack -U: frame pointers, and no inlining or tail calls.
$(BUILD)/workloads/fsync_levels: tests/workloads/fsync_levels.c tests/workloads/wl.h | $(BUILD)/workloads
	$(CC) $(CFLAGS) -O0 -fno-omit-frame-pointer -fno-optimize-sibling-calls $< -o $@

$(BUILD)/tests/%: tests/unit/%.c $(LIB) $(wildcard user/lib/*.h user/lib/layers/*.h) $(wildcard bpf/lib/*.h) | $(BUILD)/tests
	$(CC) $(CFLAGS) -Itests/unit $< -o $@ $(LDLIBS) -lcmocka

$(BUILD)/bpf $(BUILD)/lib $(BUILD)/obj $(BUILD)/bin $(BUILD)/tests $(BUILD)/workloads:
	@mkdir -p $@

# --- running ----------------------------------------------------------------------
demo: deps
	@$(MAKE) --no-print-directory all
	tools/demo $(BUILD)

check: deps
	@$(MAKE) --no-print-directory all $(UNITS)
	@$(MAKE) --no-print-directory check-unit check-integration

check-unit: $(UNITS) $(patsubst %,$(BUILD)/bpf/%.bpf.o,$(TOOLS))
	@fail=0; for t in $(abspath $(UNITS)); do CMOCKA_MESSAGE_OUTPUT=stdout $$t tests/unit || fail=1; done; \
	tools/include-graph -q || fail=1; exit $$fail

# iolayer-html.t opens the large page test_report generates
check-integration: $(BUILD)/tests/test_report
# a file that fails runs once more: twice is a failure, once a FLAKY: line (tools/check-integration)
check-integration: all
	tools/check-integration $(BUILD)

vmtest: all
	tools/vmtest $(KERNELS)

bench:
	@tools/install-deps --peers
	@$(MAKE) --no-print-directory all
	tools/bench $(BUILD)

install: all
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/share/man/man8
	@set -e; for f in $(BINS); do \
		echo "install -m 0755 $$f $(DESTDIR)$(PREFIX)/sbin/$(PROGRAM_PREFIX)$${f##*/}"; \
		install -m 0755 $$f $(DESTDIR)$(PREFIX)/sbin/$(PROGRAM_PREFIX)$${f##*/}; done
	@set -e; for f in $(MANS); do \
		echo "install -m 0644 $$f $(DESTDIR)$(PREFIX)/share/man/man8/$(PROGRAM_PREFIX)$${f##*/}"; \
		install -m 0644 $$f $(DESTDIR)$(PREFIX)/share/man/man8/$(PROGRAM_PREFIX)$${f##*/}; done

# The Debian package (tools/debian): what building needs, copied to $(BUILD)/deb/iolayer with
# tools/debian as debian/, built there; the .deb (iolayer, il-NAME commands) lands in $(BUILD)/deb/.
.PHONY: deb
deb:
	rm -rf $(BUILD)/deb && mkdir -p $(BUILD)/deb/iolayer
	cp -a Makefile README.md bpf user vmlinux docs $(BUILD)/deb/iolayer/
	cp -a tools/debian $(BUILD)/deb/iolayer/debian
	cd $(BUILD)/deb/iolayer && IOLAYER_COMMIT=$(VERSION) dpkg-buildpackage -b -us -uc
	lintian --fail-on error $(BUILD)/deb/iolayer_*.changes

# The package installed beside Debian's libbpf-tools, its tools run once, then removed (root).
.PHONY: check-deb
check-deb: deps
	@$(MAKE) --no-print-directory deb
	IOLAYER_BUILD=$(abspath $(BUILD)) prove -v tests/package/deb.t

clean:
	rm -rf $(BUILD)
