# apctools - one GNU Makefile.  Sources are found by wildcard: a new file
# in lib/, formats/, cmd/, tools/ or tests/unit/ needs no edit here.

PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
# bash-completion finds a command's completion by the command's name
COMPDIR ?= $(PREFIX)/share/bash-completion/completions
DESTDIR ?=
CC      ?= cc
PKG_CONFIG ?= pkg-config
VERSION := 0.1.0

ifeq ($(SANITIZE),1)
BUILD   ?= build/san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else ifeq ($(SANITIZE),thread)
# ThreadSanitizer, for make check-threads.  At -O1 gcc's instrumented
# code draws -Wmaybe-uninitialized on values that are set on every path.
BUILD   ?= build/tsan
SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer
OPT     ?= -O1 -g -Wno-maybe-uninitialized
else
BUILD   ?= build/rel
SANFLAGS :=
endif

# A 64-bit target only: times are scaled with 128-bit products
# (unsigned __int128), which 32-bit gcc and clang lack.  Said here, not
# by the first compile error.  (No compiler yet, as on a fresh machine
# before make check installs one: nothing to say.)
INT128 := $(shell echo __SIZEOF_INT128__ | $(CC) $(CFLAGS) -E -P - 2>/dev/null | tr -d ' \n')
ifeq ($(INT128),__SIZEOF_INT128__)
$(error apctools builds for 64-bit machines only (x86-64, aarch64, ...): $(CC) has no unsigned __int128, which its time scaling uses)
endif

PKGS    := libxml-2.0 zlib libarchive liblzma
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
# libbz2 ships no pkg-config file
PKG_LIBS   := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null) -lbz2

OPT     ?= -O2 -g
CFLAGS  ?= $(OPT)
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE -DAPC_VERSION='"$(VERSION)"' $(WARN) $(CFLAGS) $(SANFLAGS) \
	-Ilib -Iformats $(PKG_CFLAGS) -MMD -MP
ALL_LDFLAGS := $(LDFLAGS) $(SANFLAGS)
LIBS    := $(PKG_LIBS) -lm -pthread

LIB_SRC   := $(wildcard lib/*.c formats/*.c)
CMD_SRC   := $(wildcard cmd/*.c)
TOOL_SRC  := $(wildcard tools/*.c)
UNIT_SRC  := $(wildcard tests/unit/test_*.c)
UNIT_HELP := $(filter-out $(UNIT_SRC),$(wildcard tests/unit/*.c))

LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/%.o)
LIBA      := $(BUILD)/libapc.a
CMDS      := $(CMD_SRC:cmd/%.c=$(BUILD)/bin/%)
TOOLS     := $(TOOL_SRC:tools/%.c=$(BUILD)/tools/%)
UNITS     := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
UNIT_HOBJ := $(UNIT_HELP:%.c=$(BUILD)/%.o)

.PHONY: all deps check check-threads check-cross check-aarch64 unit bats demo bench fuzz install uninstall clean
all: $(CMDS) $(TOOLS)

# Every object and binary depends on the flags it was built with, kept in
# $(BUILD)/.flags and rewritten only when they change: a tree once built
# with another OPT or CC is rebuilt whole, never left a mix of both.
FLAGS_FILE := $(BUILD)/.flags
FLAGS_NOW  := $(strip $(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) $(LIBS))
ifneq ($(FLAGS_NOW),$(strip $(shell cat $(FLAGS_FILE) 2>/dev/null)))
$(shell mkdir -p $(BUILD))
$(file >$(FLAGS_FILE),$(FLAGS_NOW))
endif

$(BUILD)/%.o: %.c $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# The mains' objects are reached only through pattern rules, so make
# would delete them as intermediates and compile them again next time.
.SECONDARY: $(CMD_SRC:cmd/%.c=$(BUILD)/cmd/%.o) $(TOOL_SRC:tools/%.c=$(BUILD)/tools/%.o) \
	$(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/unit/%.o) $(UNIT_HOBJ)

$(LIBA): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/bin/%: $(BUILD)/cmd/%.o $(LIBA) $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIBA) $(LIBS)

$(BUILD)/tools/%: $(BUILD)/tools/%.o $(LIBA) $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIBA) $(LIBS)

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(UNIT_HOBJ) $(LIBA) $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(UNIT_HOBJ) $(LIBA) $(LIBS)

deps:
	@sh scripts/deps.sh

# The README's test command.  deps first, so a fresh machine works.
check: deps
	@$(MAKE) --no-print-directory all $(UNITS)
	@BUILD=$(BUILD) sh tests/run.sh $(UNITS)

# The threaded paths (read-ahead, write-behind) under ThreadSanitizer:
# their unit test and the CLI tests that compare threaded and unthreaded
# conversions.  A race report fails the run (exit status 66).
check-threads: deps
	@$(MAKE) --no-print-directory SANITIZE=thread all build/tsan/tests/test_owrite
	@BUILD=build/tsan BATS_FILTER=threads TSAN_OPTIONS="halt_on_error=1 exitcode=66" \
		sh tests/run.sh build/tsan/tests/test_owrite

# The packed-integer and clock-scaling unit tests built for aarch64, where
# the NEON variant is compiled in, and run under qemu-user: the
# differential tests then check NEON against the scalar reference.  They
# need nothing beyond libc, linked statically so qemu needs no sysroot.
CROSS       ?= aarch64-linux-gnu-
CROSS_DIR   := build/aarch64
CROSS_SRC   := lib/packed.c lib/cpu.c lib/util.c lib/err.c tests/unit/t.c
CROSS_UNITS := $(addprefix $(CROSS_DIR)/,test_packed test_packed_simd test_scale)

check-cross:
	@CROSS=$(CROSS) sh scripts/deps.sh --cross
	@$(MAKE) --no-print-directory $(CROSS_UNITS)
	@RUNNER=qemu-aarch64 sh tests/run.sh --unit-only $(CROSS_UNITS)

$(CROSS_DIR)/%: tests/unit/%.c $(CROSS_SRC) $(wildcard lib/*.h tests/unit/*.h)
	@mkdir -p $(dir $@)
	$(CROSS)gcc -std=c11 -D_GNU_SOURCE $(WARN) -O2 -g -Ilib -static -o $@ $< $(CROSS_SRC) -lm -pthread

# The whole suite built for aarch64 against Debian's arm64 libraries
# (multiarch) and run under qemu-user: every command and generator
# through a wrapper that starts qemu, the unit tests through RUNNER.
# Where check-cross runs the packed-integer tests only, this runs every
# conversion with the NEON variant, unsigned char and Arm's alignment.
# About 9 minutes here (three times make check), so not in CI; for
# changes that may behave differently on an Arm machine.
ARM64_DIR := build/arm64
ARM64_PKG := env PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig $(PKG_CONFIG)

check-aarch64:
	@CROSS=$(CROSS) sh scripts/deps.sh --aarch64
	@$(MAKE) --no-print-directory BUILD=$(ARM64_DIR) CC=$(CROSS)gcc PKG_CONFIG="$(ARM64_PKG)" \
		all $(UNIT_SRC:tests/unit/%.c=$(ARM64_DIR)/tests/%)
	@sh scripts/qemu-wrap.sh $(ARM64_DIR)
	@BUILD=$(ARM64_DIR) RUNNER=qemu-aarch64 BIN_DIR="$(CURDIR)/$(ARM64_DIR)/qemu/bin" \
		TOOLS_DIR="$(CURDIR)/$(ARM64_DIR)/qemu/tools" \
		sh tests/run.sh $(UNIT_SRC:tests/unit/%.c=$(ARM64_DIR)/tests/%)

unit: $(UNITS)
	@BUILD=$(BUILD) sh tests/run.sh --unit-only $(UNITS)

demo: deps
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) sh scripts/demo.sh

# The benchmark builds a tree of its own at -O3, so that switching
# between make bench and make check does not rebuild either tree.
BENCH_BUILD ?= build/bench
bench: deps
	@$(MAKE) --no-print-directory all BUILD=$(BENCH_BUILD) OPT="-O3 -g"
	@BUILD=$(BENCH_BUILD) sh scripts/bench.sh

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5
	install -m 755 $(CMDS) $(DESTDIR)$(BINDIR)/
	install -m 644 $(wildcard man/*.1) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(wildcard man/*.5) $(DESTDIR)$(MANDIR)/man5/
	install -d $(DESTDIR)$(COMPDIR)
	for c in $(notdir $(CMDS)); do \
		install -m 644 scripts/apctools.bash $(DESTDIR)$(COMPDIR)/$$c || exit 1; \
	done

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(CMDS)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(wildcard man/*.1)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man5/,$(notdir $(wildcard man/*.5)))
	rm -f $(addprefix $(DESTDIR)$(COMPDIR)/,$(notdir $(CMDS)))

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# ---- fuzzing (issue 7) ------------------------------------------------
# `make fuzz` builds one libFuzzer binary per reader into build/fuzz/,
# every library source compiled again with clang, ASan and UBSan.
# Seed corpora: sh fuzz/seed.sh.  Run: build/fuzz/fuzz_NAME CORPUS_DIR.
FUZZ_CC    ?= clang
FUZZ_DIR   := build/fuzz
FUZZ_FLAGS := -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
	-fno-sanitize-recover=undefined
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -DAPC_VERSION='"$(VERSION)"' $(WARN) $(FUZZ_FLAGS) \
	-Ilib -Iformats -Ifuzz $(PKG_CFLAGS)
FUZZ_NAMES := $(patsubst fuzz/fuzz_%.c,%,$(wildcard fuzz/fuzz_*.c))
FUZZ_BINS  := $(FUZZ_NAMES:%=$(FUZZ_DIR)/fuzz_%)
FUZZ_OBJ   := $(LIB_SRC:%.c=$(FUZZ_DIR)/%.o) $(FUZZ_DIR)/fuzz/targets.o

fuzz: $(FUZZ_BINS)

$(FUZZ_DIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

$(FUZZ_DIR)/fuzz_%: $(FUZZ_DIR)/fuzz/fuzz_%.o $(FUZZ_OBJ)
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ $(PKG_LIBS) -lm -pthread

-include $(shell find $(FUZZ_DIR) -name '*.d' 2>/dev/null)
