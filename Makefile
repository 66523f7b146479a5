# spoolbox — build, test, size and bench.
#
#   make                      static musl + BearSSL binary ./spoolbox (stripped, -Os)
#   make TLS=0                the same without TLS (build/musl-notls/spoolbox)
#   make PROFILE=router       the router profile: no local delivery, no -bs (build/musl-router/spoolbox)
#   make PROFILE=max          every option on, the four the default leaves off included (build/musl-max/spoolbox)
#   make OPTIONS="ENABLE_SMTPD=0 ENABLE_MAILDIR=0" VARIANT=mine   any config/config_default.h options
#   make CROSS_COMPILE=aarch64-linux-gnu-   cross-build (arm64, armhf, ...: see docs/building.md)
#   make CC=gcc SANITIZE=1    glibc ASan+UBSan variant, every option on (PROFILE=max; build/gcc-asan/spoolbox)
#   make test                 everything: product, sanitizer, no-TLS and router builds, unit, fuzz, integration
#   make size | size-options | variants-test | cross-test | bench | demo | fuzz | fuzz-long (FUZZ_SECONDS=600 each)
#   make install DESTDIR= PREFIX=/usr   binary, links, man pages, sample configuration
#
# Sources are found by wildcard: a new lib/*.c or applets/*.c needs no Makefile edit.

# `make` alone builds the binary: the BearSSL rule below comes first in the file
.DEFAULT_GOAL := all

ifeq ($(origin CC),default)
CC := musl-gcc
endif
TLS ?= 1
# The sanitizer build (unit tests, fuzz-regress, the ASan integration run) has every option on,
# so that each option's code runs under ASan/UBSan and each option's tests run (config/profile_max.h).
ifeq ($(SANITIZE),1)
PROFILE ?= max
endif
PROFILE ?= full
OPTIONS ?=
SANITIZE ?= 0
WERROR ?= 0
PYTHON ?= /usr/bin/python3
CROSS_COMPILE ?=

# --- cross-building: the Debian architecture of the triplet, its musl and BearSSL in a sysroot
# that scripts/deps-cross.sh unpacks (build/sysroot/ARCH), the cross binutils
ifneq ($(CROSS_COMPILE),)
TRIPLET := $(CROSS_COMPILE:%-=%)
DEB_ARCH ?= $(strip $(if $(filter aarch64-%,$(TRIPLET)),arm64,\
  $(if $(filter arm-%hf,$(TRIPLET)),armhf,$(if $(filter arm-%,$(TRIPLET)),armel,\
  $(if $(filter mipsel-%,$(TRIPLET)),mipsel,$(if $(filter mips64el-%,$(TRIPLET)),mips64el,\
  $(if $(filter mips-%,$(TRIPLET)),mips,\
  $(if $(filter powerpc64le-%,$(TRIPLET)),ppc64el,$(if $(filter s390x-%,$(TRIPLET)),s390x,\
  $(if $(filter i686-%,$(TRIPLET)),i386,$(if $(filter riscv64-%,$(TRIPLET)),riscv64,$(TRIPLET))))))))))))
SYSROOT ?= $(CURDIR)/build/sysroot/$(DEB_ARCH)
ifeq ($(origin CC),default)
CC := $(CROSS_COMPILE)gcc -specs=$(SYSROOT)/musl-gcc.specs
else ifeq ($(CC),musl-gcc)
CC := $(CROSS_COMPILE)gcc -specs=$(SYSROOT)/musl-gcc.specs
endif
BEARSSL_INC ?= $(SYSROOT)/usr/include
BEARSSL_A ?= $(SYSROOT)/usr/lib/$(TRIPLET)/libbearssl.a
ARCH_PREFIX := $(DEB_ARCH)-
else
DEB_ARCH := amd64
BEARSSL_INC ?= /usr/include
BEARSSL_A ?= /usr/lib/x86_64-linux-gnu/libbearssl.a
ARCH_PREFIX :=
endif
OBJCOPY ?= $(CROSS_COMPILE)objcopy

# --- the variant: its directory under build/ and its options
ifeq ($(SANITIZE),1)
VARIANT ?= gcc-asan
else ifneq ($(PROFILE),full)
VARIANT ?= musl-$(PROFILE)
else ifeq ($(TLS),0)
VARIANT ?= musl-notls
else
VARIANT ?= musl-tls
endif
B := build/$(ARCH_PREFIX)$(VARIANT)
OPT_DEFS := $(addprefix -D,$(OPTIONS))
ifneq ($(PROFILE),full)
OPT_DEFS += -include config/profile_$(PROFILE).h
endif

WARN := -Wall -Wextra -Wundef -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN += -Werror
endif
CPPFLAGS := -D_GNU_SOURCE -DENABLE_TLS=$(TLS) $(OPT_DEFS) -Iconfig -Ilib -Iapplets -I$(B)/inc
ifeq ($(SANITIZE),1)
CFLAGS := -std=c11 -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined $(WARN)
LDFLAGS := -fsanitize=address,undefined
else
# Each size flag is measured in docs/size.md. -Oz (GCC 12) where the compiler has it, else -Os;
# a common page size of 64 lets the data segment start right after the code in the file
# instead of at the next 4 KiB (the kernel's page size, max-page-size, is unchanged).
OPTIMIZE ?= $(shell $(CC) -Oz -E -x c /dev/null >/dev/null 2>&1 && echo -Oz || echo -Os)
# Passes that -Oz still runs and that grow this code (GCC 12, x86-64, each measured alone and
# together in docs/size.md: -3.5 KiB full, -3.1 KiB router, submit's instructions +1 %): jump
# tables of 8 bytes an entry, jump threading and dominator optimisations that copy blocks,
# shrink-wrapping, if-conversion, tail merging, caller-saved spills, loop-invariant motion. Plain
# optimisation switches: no ABI or semantics.
SIZE_FLAGS ?= -fno-jump-tables -fno-expensive-optimizations -fno-thread-jumps -fno-shrink-wrap \
	-fno-if-conversion -fno-tree-tail-merge -fno-tree-dominator-opts -fno-caller-saves \
	-fno-move-loop-invariants -fno-tree-loop-im -fno-ipa-modref -fno-ssa-phiopt
# x86 aligns every static array of 32 bytes or more to 32 for vector loads; the ABI asks for the
# element's alignment only: -976 bytes with BearSSL (docs/size.md, fourth session). Elsewhere the
# compiler has no such option and the probe leaves it out.
ALIGN_FLAGS ?= $(shell $(CC) -malign-data=abi -E -x c /dev/null >/dev/null 2>&1 && echo -malign-data=abi)
CFLAGS := -std=c11 $(OPTIMIZE) $(SIZE_FLAGS) $(ALIGN_FLAGS) -fno-pie -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables \
	-fno-unwind-tables $(WARN) $(EXTRA_CFLAGS)
LDFLAGS := -static -no-pie -Wl,--gc-sections -Wl,-z,noseparate-code,--build-id=none,-z,norelro \
	-Wl,-z,common-page-size=64 -Wl,-T,scripts/no-eh-frame.ld
# the link map of the product binary alone: make size reads it (the simulator's or a test's
# link must not overwrite it)
MAPFLAGS := -Wl,-Map=$(B)/spoolbox.map
# Our own vfprintf and snprintf (lib/fmt.c under musl's whole printf family), getopt, strtol,
# qsort, strstr, mbstowcs, stdio, malloc, the passwd/group lookups, res_query and the set*id
# calls in place of musl's (lib/libc/: 40 KiB less, docs/size.md), linked as objects so that
# libc.a's are never pulled. OWN_LIBC=0 keeps musl's.
OWN_LIBC ?= 1
ifeq ($(OWN_LIBC),1)
LIBC_OBJ := $(patsubst %.c,$(B)/%.o,$(wildcard lib/libc/*.c))
endif
endif
# BearSSL built from Debian's source with the flags above (scripts/bearssl.sh: 4.6 KiB less than
# Debian's -Os, position-independent, hardened library; that library when the source cannot be
# had). BEARSSL_SRC=0, or a BEARSSL_A given to make (the packaging does), links that one as is.
# BearSSL is built without SIZE_FLAGS: with them it is 64 bytes smaller on x86-64 but 1.1 KiB
# larger on arm64 and 0.8 KiB on armhf (docs/size.md).
BEARSSL_SRC ?= 1
ifeq ($(TLS),1)
LIBS := $(BEARSSL_A)
ifeq ($(SANITIZE)$(BEARSSL_SRC)$(origin BEARSSL_A),01file)
LIBS := build/bearssl/$(DEB_ARCH)/libbearssl.a
$(LIBS): scripts/bearssl.sh
	CC="$(CC)" CFLAGS="$(filter-out -std=% $(WARN) $(EXTRA_CFLAGS) $(SIZE_FLAGS),$(CFLAGS))" AR="$(CROSS_COMPILE)ar" \
	  sh scripts/bearssl.sh $@ $(BEARSSL_A)
endif
endif

LIB_SRC := $(sort $(wildcard lib/*.c))
APPLET_SRC := $(sort $(wildcard applets/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o)
APPLET_OBJ := $(APPLET_SRC:%.c=$(B)/%.o)
UNIT_SRC := $(sort $(wildcard tests/unit/*.c))
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))

.PHONY: sim all deps deps-cross variant test unit fuzz-regress integration size size-options variants-test cross-test \
	bench demo clean fuzz fuzz-long help install
all: deps spoolbox

help:
	@sed -n '2,13p' Makefile

deps:
	@sh scripts/deps.sh
ifneq ($(CROSS_COMPILE),)
	@sh scripts/deps-cross.sh $(DEB_ARCH) $(CROSS_COMPILE) >/dev/null
endif

# musl-gcc's -nostdinc hides /usr/include: BearSSL's headers are linked in one by one.
$(B)/inc/bearssl.h:
	@mkdir -p $(B)/inc
	test -f $(BEARSSL_INC)/bearssl.h
	ln -sfn $(BEARSSL_INC)/bearssl $(B)/inc/bearssl
	ln -sf $(BEARSSL_INC)/bearssl.h $(B)/inc/bearssl.h

$(B)/%.o: %.c $(B)/inc/bearssl.h $(wildcard lib/*.h applets/*.h config/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# the libc unit test compiles lib/libc/*.c in itself (tests/unit/libc_own.h)
$(B)/tests/unit/test_libc.o: $(wildcard lib/libc/*.c tests/unit/*.h)

$(B)/libspool.a: $(LIB_OBJ)
	rm -f $@ && $(CROSS_COMPILE)ar rcs $@ $^

$(B)/spoolbox: $(APPLET_OBJ) $(LIBC_OBJ) $(B)/libspool.a $(LIBS) scripts/no-eh-frame.ld
	$(CC) $(LDFLAGS) $(MAPFLAGS) -o $@.unstripped $(APPLET_OBJ) $(LIBC_OBJ) -Wl,--start-group $(B)/libspool.a $(LIBS) -Wl,--end-group
ifneq ($(SANITIZE),1)
	$(OBJCOPY) --strip-all -R .comment $@.unstripped $@
else
	mv $@.unstripped $@
endif

variant: $(B)/spoolbox

spoolbox: $(B)/spoolbox
ifeq ($(B),build/musl-tls)
	cp $< $@
endif

# Unit tests and fuzz regression run in the sanitizer build (glibc + ASan/UBSan).
$(B)/unit: $(UNIT_SRC:%.c=$(B)/%.o) $(B)/libspool.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)
$(B)/fuzz_%: $(B)/tests/fuzz/fuzz_%.o $(B)/tests/fuzz/driver.o $(B)/libspool.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)
# the scheduling simulator (docs/simulate.md): a test binary from the scheduler's own objects
$(B)/schedsim: $(B)/tests/sim/schedsim.o $(B)/libspool.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)
sim: $(B)/schedsim

unit:
	$(MAKE) CC=gcc SANITIZE=1 build/gcc-asan/unit
	build/gcc-asan/unit

FUZZ_BINS := $(FUZZ_SRC:tests/fuzz/%.c=build/gcc-asan/%)
fuzz-regress:
	$(MAKE) CC=gcc SANITIZE=1 $(FUZZ_BINS)
	@for f in $(FUZZ_BINS); do n=$$(basename $$f); \
	  $$f -iterations=20000 tests/fuzz/corpus/$${n#fuzz_} || exit 1; done

# Coverage-guided fuzzing with libFuzzer (clang), for humans: make fuzz T=conf
FUZZ_CFLAGS = -g -O1 -fsanitize=address,undefined $(CPPFLAGS) -Ibuild/gcc-asan/inc -DENABLE_TLS=1 \
	-include config/profile_max.h
build/fuzz/lib/%.o: lib/%.c $(wildcard lib/*.h config/*.h)
	@mkdir -p build/fuzz/lib
	$(MAKE) CC=gcc SANITIZE=1 build/gcc-asan/inc/bearssl.h
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
build/fuzz/libspool.a: $(LIB_SRC:lib/%.c=build/fuzz/lib/%.o)
	rm -f $@ && ar rcs $@ $^
# (Debian's BearSSL: the one scripts/bearssl.sh builds is for the static musl binary)
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c build/fuzz/libspool.a
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< build/fuzz/libspool.a $(BEARSSL_A)
fuzz: build/fuzz/fuzz_$(T)
	build/fuzz/fuzz_$(T) -max_total_time=$${SECONDS_:-60} tests/fuzz/corpus/$(T)

# Every target for FUZZ_SECONDS (at least 10 minutes each: issue 11 point 11). New inputs go to
# build/fuzz/new-T; those that add coverage are merged into tests/fuzz/corpus/T, which is kept
# in the repo so that fuzz-regress replays them. A crash stops it (its input: build/fuzz/).
FUZZ_SECONDS ?= 600
fuzz-long: $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
	@for s in $(FUZZ_SRC); do n=$$(basename $$s .c); t=$${n#fuzz_}; mkdir -p build/fuzz/new-$$t; \
	  build/fuzz/$$n -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -artifact_prefix=build/fuzz/$$n- \
	    build/fuzz/new-$$t tests/fuzz/corpus/$$t >build/fuzz/$$n.log 2>&1 || { tail -40 build/fuzz/$$n.log; exit 1; }; \
	  build/fuzz/$$n -merge=1 tests/fuzz/corpus/$$t build/fuzz/new-$$t >>build/fuzz/$$n.log 2>&1 || exit 1; \
	  echo "$$t: $$(sed -n 's/^stat::number_of_executed_units: //p' build/fuzz/$$n.log) executions, 0 crashes," \
	    "corpus $$(ls tests/fuzz/corpus/$$t | wc -l) files"; done

integration:
	SPOOLBOX=$(CURDIR)/$(B)/spoolbox $(PYTHON) -m pytest -q tests/integration $(PYTEST_ARGS)

test: deps
	$(MAKE) spoolbox
	$(MAKE) TLS=0 variant
	$(MAKE) CC=gcc SANITIZE=1 variant
	$(MAKE) unit
	$(MAKE) sim
	$(MAKE) fuzz-regress
	SPOOLBOX=$(CURDIR)/spoolbox $(PYTHON) -m pytest -q -p no:cacheprovider tests/integration $(PYTEST_ARGS)
	SPOOLBOX=$(CURDIR)/build/musl-notls/spoolbox $(PYTHON) -m pytest -q -p no:cacheprovider -m "not slow" tests/integration $(PYTEST_ARGS)
	SPOOLBOX=$(CURDIR)/build/gcc-asan/spoolbox $(PYTHON) -m pytest -q -p no:cacheprovider -m "not slow" tests/integration $(PYTEST_ARGS)
	$(MAKE) variants-test

# The option profiles besides full and no-TLS, each against the integration tests that apply
# to it (a test of a compiled-out feature skips after asking `spoolbox --version`): the router
# profile against the whole suite, every other option off (musl-lean) against what each
# option leaves in its place (tests/integration/test_options.py), and every option on
# (musl-max: the ASan run has the whole suite with them) against the files of the four options
# that the default leaves off.
MAX_TESTS := test_options.py test_dispatch.py test_smtp_tls.py test_smtp.py test_smtp_hostile.py
LEAN_OPTIONS := ENABLE_SMTPD=0 ENABLE_MAILDIR=0 ENABLE_DELIVER_CMD=0 ENABLE_CRAM_MD5=0 \
	ENABLE_LOCALTIME=0 ENABLE_TLS_CLIENT_CERT=0 ENABLE_CHACHA20=0 ENABLE_VERBOSE_USAGE=0 ENABLE_DSN=0 \
	ENABLE_PREEMPT=0
variants-test:
	$(MAKE) PROFILE=router variant
	$(MAKE) VARIANT=musl-lean OPTIONS="$(LEAN_OPTIONS)" variant
	$(MAKE) PROFILE=max variant
	SPOOLBOX=$(CURDIR)/build/musl-max/spoolbox $(PYTHON) -m pytest -q -p no:cacheprovider -m "not slow" \
	  $(addprefix tests/integration/,$(MAX_TESTS)) $(PYTEST_ARGS)
	SPOOLBOX=$(CURDIR)/build/musl-router/spoolbox $(PYTHON) -m pytest -q -p no:cacheprovider -m "not slow" tests/integration $(PYTEST_ARGS)
	SPOOLBOX=$(CURDIR)/build/musl-lean/spoolbox $(PYTHON) -m pytest -q -p no:cacheprovider tests/integration/test_options.py $(PYTEST_ARGS)

# Every budgeted variant is built, then scripts/size.sh prints and checks them (config/size-budget).
size: deps spoolbox
	@$(MAKE) -s TLS=0 variant
	@$(MAKE) -s PROFILE=router variant
	@$(MAKE) -s PROFILE=max variant
	@sh scripts/size.sh

# What each option of config/config_default.h costs, measured (scripts/size-options.sh).
size-options: deps
	@sh scripts/size-options.sh

# Cross-builds for the CI architectures, each smoke-tested under qemu-user-static.
CROSS_ARCHS ?= aarch64-linux-gnu- arm-linux-gnueabihf-
CROSS_DEB_ARCHS ?= arm64 armhf
cross-test:
	@for c in $(CROSS_ARCHS); do $(MAKE) CROSS_COMPILE=$$c deps variant || exit 1; done
	@for c in $(CROSS_ARCHS); do $(MAKE) -s CROSS_COMPILE=$$c PROFILE=router variant || exit 1; done
	CROSS_ARCHS="$(CROSS_DEB_ARCHS)" $(PYTHON) -m pytest -q -p no:cacheprovider tests/integration/test_cross.py $(PYTEST_ARGS)

# bench_submit's one-process limit: the raw enqueue's steps in the smallest static program
$(B)/enqueue_once: tests/bench/enqueue_once.c
	@mkdir -p $(B)
	$(CC) -static -O2 -Wall -Wextra -o $@ $<

bench: deps spoolbox $(B)/enqueue_once
	@ENQUEUE_ONCE=$(CURDIR)/$(B)/enqueue_once $(PYTHON) tests/bench/bench.py $(CURDIR)/spoolbox

demo: deps spoolbox
	@sh scripts/demo.sh

# Links and their directories come from applets/applets.h as this variant's options leave it
# (a profile without local gets no local link), read by scripts/install.sh.
install: $(B)/spoolbox
	$(CC) $(CPPFLAGS) -E -P -x c -include config/config_default.h applets/applets.h >$(B)/applets.list
	DESTDIR='$(DESTDIR)' PREFIX='$(PREFIX)' SYSCONFDIR='$(SYSCONFDIR)' MANDIR='$(MANDIR)' \
	  SUBMIT_GROUP='$(SUBMIT_GROUP)' APPLETS_LIST=$(B)/applets.list sh scripts/install.sh $(B)/spoolbox

clean:
	rm -rf build spoolbox demo
