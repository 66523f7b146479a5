# spoolbox — build, test, size and bench.
#
#   make                      static musl + BearSSL binary ./spoolbox (stripped, -Os)
#   make TLS=0                the same without TLS (build/musl-notls/spoolbox)
#   make CC=gcc SANITIZE=1    glibc ASan+UBSan variant (build/gcc-asan/spoolbox)
#   make test                 everything: product, sanitizer and no-TLS builds, unit, fuzz, integration
#   make size | bench | demo | fuzz
#   make install DESTDIR= PREFIX=/usr   binary, links, man pages, sample configuration
#
# Sources are found by wildcard: a new lib/*.c or applets/*.c needs no Makefile edit.

ifeq ($(origin CC),default)
CC := musl-gcc
endif
TLS ?= 1
SANITIZE ?= 0
WERROR ?= 0
PYTHON ?= /usr/bin/python3
BEARSSL_A ?= /usr/lib/x86_64-linux-gnu/libbearssl.a

ifeq ($(SANITIZE),1)
VARIANT := gcc-asan
else ifeq ($(TLS),0)
VARIANT := musl-notls
else
VARIANT := musl-tls
endif
B := build/$(VARIANT)

WARN := -Wall -Wextra -Wundef -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN += -Werror
endif
CPPFLAGS := -D_GNU_SOURCE -DENABLE_TLS=$(TLS) -Iconfig -Ilib -Iapplets -Ibuild/inc
ifeq ($(SANITIZE),1)
CFLAGS := -std=c11 -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined $(WARN)
LDFLAGS := -fsanitize=address,undefined
else
CFLAGS := -std=c11 -Os -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables -fno-unwind-tables $(WARN)
LDFLAGS := -static -Wl,--gc-sections -s
endif
ifeq ($(TLS),1)
LIBS := $(BEARSSL_A)
endif

LIB_SRC := $(sort $(wildcard lib/*.c))
APPLET_SRC := $(sort $(wildcard applets/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o)
APPLET_OBJ := $(APPLET_SRC:%.c=$(B)/%.o)
UNIT_SRC := $(sort $(wildcard tests/unit/*.c))
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))

.PHONY: all deps variant test unit fuzz-regress integration size bench demo clean fuzz help install
all: deps spoolbox

help:
	@sed -n '2,11p' Makefile

deps:
	@sh scripts/deps.sh

build/inc/bearssl.h:
	@mkdir -p build/inc
	ln -sfn /usr/include/bearssl build/inc/bearssl
	ln -sf /usr/include/bearssl.h build/inc/bearssl.h

$(B)/%.o: %.c build/inc/bearssl.h $(wildcard lib/*.h applets/*.h config/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(B)/libspool.a: $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

$(B)/spoolbox: $(APPLET_OBJ) $(B)/libspool.a
	$(CC) $(LDFLAGS) -o $@ $(APPLET_OBJ) -Wl,--start-group $(B)/libspool.a $(LIBS) -Wl,--end-group
ifneq ($(SANITIZE),1)
	@# unwind tables from libc.a/libbearssl.a: a C program that never unwinds needs none
	objcopy -R .eh_frame -R .comment $@ 2>/dev/null
endif

variant: $(B)/spoolbox

spoolbox: $(B)/spoolbox
ifeq ($(VARIANT),musl-tls)
	cp $< $@
endif

# Unit tests and fuzz regression run in the sanitizer build (glibc + ASan/UBSan).
$(B)/unit: $(UNIT_SRC:%.c=$(B)/%.o) $(B)/libspool.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)
$(B)/fuzz_%: $(B)/tests/fuzz/fuzz_%.o $(B)/tests/fuzz/driver.o $(B)/libspool.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

unit:
	$(MAKE) CC=gcc SANITIZE=1 build/gcc-asan/unit
	build/gcc-asan/unit

FUZZ_BINS := $(FUZZ_SRC:tests/fuzz/%.c=build/gcc-asan/%)
fuzz-regress:
	$(MAKE) CC=gcc SANITIZE=1 $(FUZZ_BINS)
	@for f in $(FUZZ_BINS); do n=$$(basename $$f); \
	  $$f -iterations=20000 tests/fuzz/corpus/$${n#fuzz_} || exit 1; done

# Coverage-guided fuzzing with libFuzzer (clang), for humans: make fuzz T=conf
fuzz:
	@mkdir -p build/fuzz
	clang -g -O1 -fsanitize=fuzzer,address,undefined $(CPPFLAGS) -DENABLE_TLS=1 -o build/fuzz/fuzz_$(T) \
	  tests/fuzz/fuzz_$(T).c $(LIB_SRC) $(LIBS)
	build/fuzz/fuzz_$(T) -max_total_time=$${SECONDS_:-60} tests/fuzz/corpus/$(T)

integration:
	SPOOLBOX=$(CURDIR)/$(B)/spoolbox $(PYTHON) -m pytest -q tests/integration $(PYTEST_ARGS)

test: deps
	$(MAKE) spoolbox
	$(MAKE) TLS=0 variant
	$(MAKE) CC=gcc SANITIZE=1 variant
	$(MAKE) unit
	$(MAKE) fuzz-regress
	SPOOLBOX=$(CURDIR)/spoolbox $(PYTHON) -m pytest -q -p no:cacheprovider tests/integration $(PYTEST_ARGS)
	SPOOLBOX=$(CURDIR)/build/musl-notls/spoolbox $(PYTHON) -m pytest -q -p no:cacheprovider -m "not slow" tests/integration $(PYTEST_ARGS)
	SPOOLBOX=$(CURDIR)/build/gcc-asan/spoolbox $(PYTHON) -m pytest -q -p no:cacheprovider -m "not slow" tests/integration $(PYTEST_ARGS)

size: deps spoolbox
	@$(MAKE) -s TLS=0 variant
	@sh scripts/size.sh

bench: deps spoolbox
	@$(PYTHON) tests/bench/bench.py $(CURDIR)/spoolbox

demo: deps spoolbox
	@sh scripts/demo.sh

# Links and their directories come from applets/applets.h (scripts/install.sh).
install: $(B)/spoolbox
	DESTDIR='$(DESTDIR)' PREFIX='$(PREFIX)' SYSCONFDIR='$(SYSCONFDIR)' MANDIR='$(MANDIR)' \
	  SUBMIT_GROUP='$(SUBMIT_GROUP)' sh scripts/install.sh $(B)/spoolbox

clean:
	rm -rf build spoolbox demo
