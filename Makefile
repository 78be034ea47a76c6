# kinstr: `make` builds kinstr.ko against the target kernel's headers, libkinstr and the kinstr CLI.
#   make            everything          make kmod     the module only
#   make user       library + CLI       make test     the whole test suite (tests/run)
#   make man        the manual pages, build/man/*.8 (kinstr help --man; cli/man.mk)
#   make kmods      the modules for every installed kernel of the test matrix (tests/kernels; the debug
#                   kernel's are built by its lane, tests/runner.py), each in
#                   build/kmod/RELEASE (scripts/build-kmod), as the VM suite boots them; and, for the
#                   default kernel, each of kinstr.ko's files compiled alone (kmod/all.c says why)
#   make KINSTR_KERNEL=RELEASE   the module for another installed kernel (default: scripts/kernel-release)
#   make install    the CLI, libkinstr (shared, static, headers, pkg-config), man pages, completion, docs,
#                   examples, kinstr-serve.service; PREFIX (/usr/local), DESTDIR and the *DIR variables below
#   make uninstall  removes what make install wrote     make install-dkms   kinstr.ko's source for DKMS
VERSION   := $(shell cat VERSION)
# a command-line KINSTR_KERNEL reaches $(shell) only when passed on explicitly
KVER      ?= $(shell KINSTR_KERNEL='$(KINSTR_KERNEL)' scripts/kernel-release)
KDIR      ?= /lib/modules/$(KVER)/build
B         := build

CC        ?= cc
CFLAGS    ?= -O2 -g
WARN      := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CPPFLAGS  += -Iinclude -I. -D_GNU_SOURCE -DKINSTR_VERSION='"$(VERSION)"'
ALLCFLAGS  = $(CPPFLAGS) $(WARN) $(CFLAGS) -MMD -MP

# lib/ is in folders by layer (docs/design.md's map; tests/unit/test_layers.sh checks the order)
LIB_SRCS  := $(filter-out %.bpf.c,$(wildcard lib/*/*.c)) ring/ring.c
CLI_SRCS  := $(wildcard cli/*.c cli/*/*.c)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
LIB_OBJS  := $(LIB_SRCS:%.c=$(B)/%.o) $(B)/lib/bpf/stack_obj.o $(B)/lib/report/report_assets.o
CLI_OBJS  := $(CLI_SRCS:%.c=$(B)/%.o)
UNIT_BINS := $(UNIT_SRCS:%.c=$(B)/%)
PROG_SRCS := $(wildcard tests/vm/progs/*.c)
PROG_BINS := $(PROG_SRCS:%.c=$(B)/%)
LIBS      := -lZydis -lbpf -ldw -lelf -lz -lmicrohttpd
# BPF programs: the examples (examples/README.md) and the tests', built against the target kernel's BTF
BPF_SRCS  := $(wildcard examples/*.bpf.c tests/vm/bpf/*.bpf.c lib/bpf/*.bpf.c)
BPF_OBJS  := $(BPF_SRCS:%.bpf.c=$(B)/%.bpf.o)
CLANG     ?= $(shell command -v clang || command -v clang-14)

.PHONY: all user kmod kmods testmods test clean
all: user kmod testmods
user: $(B)/kinstr $(UNIT_BINS) $(PROG_BINS) $(BPF_OBJS)
.PHONY: examples
examples: $(BPF_OBJS)

$(B)/vmlinux.h: scripts/vmlinux-h
	@mkdir -p $(dir $@)
	scripts/vmlinux-h $@ $(KVER)

$(B)/%.bpf.o: %.bpf.c $(B)/vmlinux.h
	@mkdir -p $(dir $@)
	$(CLANG) -target bpf -D__TARGET_ARCH_x86 -O2 -g -Wall -Werror -I$(B) -c -o $@ $<

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) $(PICFLAGS) -c -o $@ $<

# count --by stack's BPF program, inside the library
$(B)/lib/bpf/stack_obj.o: lib/bpf/stack_obj.S $(B)/lib/bpf/stack.bpf.o
	@mkdir -p $(dir $@)
	$(CC) -DSTACK_OBJ='"$(B)/lib/bpf/stack.bpf.o"' -c -o $@ $<

# kinstr report --html's libraries, from the npm registry at build time (versions pinned), inlined
# into every page with lib/report/ by lib/report/report_assets.S
NPM_DIR   := $(B)/npm
NPM_PKGS  := d3@7.9.0 d3-flame-graph@4.1.3
$(NPM_DIR)/.installed:
	@mkdir -p $(NPM_DIR)
	npm install --silent --no-audit --no-fund --prefix $(NPM_DIR) $(NPM_PKGS)
	@touch $@
REPORT_ASSETS := -DREPORT_JS='"lib/report/report.js"' -DREPORT_CSS='"lib/report/report.css"' \
	-DD3_JS='"$(NPM_DIR)/node_modules/d3/dist/d3.min.js"' \
	-DFLAME_JS='"$(NPM_DIR)/node_modules/d3-flame-graph/dist/d3-flamegraph.min.js"' \
	-DFLAME_CSS='"$(NPM_DIR)/node_modules/d3-flame-graph/dist/d3-flamegraph.css"'
$(B)/lib/report/report_assets.o: lib/report/report_assets.S lib/report/report.js lib/report/report.css $(NPM_DIR)/.installed
	@mkdir -p $(dir $@)
	$(CC) $(REPORT_ASSETS) -c -o $@ $<

# the library's objects are position-independent: the same ones make libkinstr.a and libkinstr.so
$(filter $(B)/lib/%.o $(B)/ring/%.o,$(LIB_OBJS)): PICFLAGS := -fPIC

$(B)/libkinstr.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

# libkinstr.so.MAJOR: the kinstr_* API only (lib/libkinstr.map); the CLI links the static library, so that
# a CLI and the module it drives are always one build (the ABI check needs no second library version)
SONAME    := libkinstr.so.$(firstword $(subst ., ,$(VERSION)))
$(B)/libkinstr.so.$(VERSION): $(LIB_OBJS) lib/libkinstr.map
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=lib/libkinstr.map -Wl,-z,defs $(CFLAGS) $(LDFLAGS) \
		-o $@ $(LIB_OBJS) $(LIBS)

$(B)/kinstr: $(CLI_OBJS) $(B)/libkinstr.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJS) $(B)/libkinstr.a $(LIBS)

$(B)/tests/unit/%: tests/unit/%.c $(B)/libkinstr.a
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -Itests/unit -o $@ $< $(B)/libkinstr.a $(LIBS)

# Programs that VM tests run in the guest.
$(B)/tests/vm/progs/%: tests/vm/progs/%.c $(B)/libkinstr.a
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -o $@ $< $(B)/libkinstr.a $(LIBS)

kmod:
	@test -d $(KDIR) || { echo "no kernel headers at $(KDIR): run scripts/setup" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR)/kmod KINSTR_VERSION=$(VERSION) modules

MATRIX_RELEASES = $(shell sed -e 's/\#.*//' -e '/^[[:space:]]*$$/d' tests/kernels | \
	while read -r s f _; do [ "$$f" = debug ] || KINSTR_KERNEL_SERIES=$$s KINSTR_KERNEL_FLAVOUR=$$f scripts/kernel-release 2>/dev/null; done | sort -u)
# the kernels of the full suites: also a KINSTR_PLANT=abi build, for kinstr doctor's test (install.t)
FULL_RELEASES = $(shell sed -e 's/\#.*//' -e '/^[[:space:]]*$$/d' tests/kernels | \
	while read -r s f suite _; do [ "$$suite" = full ] && KINSTR_KERNEL_SERIES=$$s KINSTR_KERNEL_FLAVOUR=$$f scripts/kernel-release 2>/dev/null; done | sort -u)
kmods:
	@test -n "$(MATRIX_RELEASES)" || { echo "no kernel of tests/kernels is installed: run scripts/setup --matrix" >&2; exit 1; }
	+@for r in $(MATRIX_RELEASES); do echo "  KMOD    $$r"; scripts/build-kmod $$r || exit 1; done
	+@for r in $(FULL_RELEASES); do echo "  KMOD    $$r (plant abi)"; scripts/build-kmod $$r --plant abi || exit 1; done
	+@echo "  KMOD    $(KVER) (each file alone)"; scripts/build-kmod $(KVER) --separate

# Test-only modules (e.g. one that WARNs, to prove the harness's splat scan fails a run).
testmods:
	@test -d $(KDIR) || { echo "no kernel headers at $(KDIR): run scripts/setup" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/vm/modules modules

test: all
	tests/run

clean:
	rm -rf $(B)
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/kmod clean
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/vm/modules clean
	rm -rf $(B)/kmod

# Installing (scripts/install holds the one list of what goes where; uninstall removes exactly that).
PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
DATADIR     ?= $(PREFIX)/share
MANDIR      ?= $(DATADIR)/man
DOCDIR      ?= $(DATADIR)/doc/kinstr
PKGDATADIR  ?= $(DATADIR)/kinstr
PKGLIBDIR   ?= $(PREFIX)/lib/kinstr
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
SYSCONFDIR  ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
UNITDIR     ?= $(if $(filter /usr,$(PREFIX)),/lib/systemd/system,$(PREFIX)/lib/systemd/system)
DKMSDIR     ?= /usr/src/kinstr-$(VERSION)
INSTALL_ENV  = B=$(B) VERSION=$(VERSION) DESTDIR=$(DESTDIR) PREFIX=$(PREFIX) BINDIR=$(BINDIR) LIBDIR=$(LIBDIR) \
	INCLUDEDIR=$(INCLUDEDIR) DATADIR=$(DATADIR) MANDIR=$(MANDIR) DOCDIR=$(DOCDIR) PKGDATADIR=$(PKGDATADIR) PKGLIBDIR=$(PKGLIBDIR) \
	BASHCOMPDIR=$(BASHCOMPDIR) SYSCONFDIR=$(SYSCONFDIR) UNITDIR=$(UNITDIR) DKMSDIR=$(DKMSDIR)
subst_dirs   = sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g'

# what make install needs built (the module is not among it: DKMS builds that, or make kmod)
.PHONY: installables install uninstall install-dkms uninstall-dkms FORCE
installables: $(B)/kinstr $(B)/libkinstr.a $(B)/libkinstr.so.$(VERSION) $(B)/libkinstr.pc man \
	$(B)/service/kinstr-serve.service $(B)/dkms/dkms.conf examples
# the directories are baked into these: rewritten on every make, each only when it changes
$(B)/libkinstr.pc: lib/libkinstr.pc.in FORCE
	@mkdir -p $(dir $@)
	@$(subst_dirs) $< > $@.tmp && if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi
$(B)/service/kinstr-serve.service: dist/kinstr-serve.service.in FORCE
	@mkdir -p $(dir $@)
	@$(subst_dirs) $< > $@.tmp && if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi
$(B)/dkms/dkms.conf: kmod/dkms.conf.in VERSION
	@mkdir -p $(dir $@)
	$(subst_dirs) $< > $@
FORCE:
install: installables
	$(INSTALL_ENV) scripts/install install
uninstall:
	$(INSTALL_ENV) scripts/install uninstall
install-dkms: $(B)/dkms/dkms.conf
	$(INSTALL_ENV) scripts/install install-dkms
uninstall-dkms:
	$(INSTALL_ENV) scripts/install uninstall-dkms

# The Debian packages (debian/), built by dpkg-buildpackage -b -us -uc from a copy of the tree's files
# (git ls-files: what a fresh clone holds) in build/deb/src, so that they land in build/deb/; install.t
# installs them in the guest, tests/unit/test_install.sh runs lintian on them.
# Rebuilt only when a committed file changed since (its stamp is newer than every one of them).
DEB_SRCS := $(wildcard $(shell git ls-files 2>/dev/null))
.PHONY: deb
deb: $(B)/deb/.stamp
$(B)/deb/.stamp: $(DEB_SRCS)
	@rm -rf $(B)/deb && mkdir -p $(B)/deb/src/kinstr-$(VERSION)
	git ls-files -z | xargs -0 cp --parents -t $(B)/deb/src/kinstr-$(VERSION)
	cd $(B)/deb/src/kinstr-$(VERSION) && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		dpkg-buildpackage -b -us -uc > ../../build.log 2>&1 || { tail -30 ../../build.log; exit 1; }
	mv $(B)/deb/src/*.deb $(B)/deb/src/*.changes $(B)/deb/src/*.buildinfo $(B)/deb/
	@rm -rf $(B)/deb/src
	@touch $@

# every target's header dependencies (-MMD): editing ring/ring.h rebuilds the ring tests too
-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(UNIT_BINS:=.d) $(PROG_BINS:=.d)

# Sub-makefiles owned by their folders: benchmarks (make bench) and fuzz targets (make fuzz).
-include bench/bench.mk
-include tests/fuzz/fuzz.mk
# Manual pages (make man, into build/man) and where the bash completion is.
-include cli/man.mk

# The whole-kernel sweep (tests/vm/sweep: tests/vm/progs/sweep.py's slices of 100 over guests, two at
# once, resumable): every probeable core function, counted at every entry and return, profiled, a sample
# traced, text restored, no splat. Not part of `make test` (hours under TCG); tests/vm/tests/sweep.t
# runs a fixed sample of slices.
.PHONY: sweep
sweep: all
	tests/vm/sweep --out $(CURDIR)/$(B)/vm/sweep
