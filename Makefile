# heapprof build. `make` builds the shim and the report tool; `make check` runs every test;
# `make bench` runs the benchmarks (never part of check).
CC      ?= gcc
CLANG   ?= clang
BUILD   := build
WARN    := -Wall -Wextra -Wstrict-prototypes -Wundef -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN    += -Werror
endif
OPT     ?= -O2 -g

# The injected library: no builtins (calloc must not become calloc), frame pointers for the
# fp unwinder, initial-exec TLS, hidden by default with a version script. -O2: fewer
# instructions and i-cache misses than -O3 on the allocation path (callgrind), and no slower in
# time (bench/ab.sh, python3 and alloc_bench, 2026-11-25).
SHIM_OPT ?= -O2 -g
# gcc turns copy and clear loops into calls of memcpy, memmove and memset even with
# -fno-builtin; the shim's own data must never go through those (they may be interposed, and
# sanitizer runtimes watch them), so gcc is told not to (clang does not do it under -fno-builtin).
SHIM_NOLIBCALLS := $(shell echo 'int f(void){return 0;}' | $(CC) -fno-tree-loop-distribute-patterns \
	-Werror -x c -c -o /dev/null - 2>/dev/null && echo -fno-tree-loop-distribute-patterns)
# No vectorizing: the allocation path updates scalar counters here and there in a few cache
# lines, which gcc 12 at -O2 packs into vector registers with shuffles around them (python3's
# model: 10M more instructions with it). gcc: -fno-tree-vectorize; clang: -fno-vectorize and
# -fno-slp-vectorize.
SHIM_NOVECTOR := $(shell for f in "-fno-vectorize -fno-slp-vectorize" -fno-tree-vectorize; do \
	echo 'int f(void){return 0;}' | $(CC) $$f -Werror -x c -c -o /dev/null - 2>/dev/null && echo $$f && break; done)
SHIM_CFLAGS := $(SHIM_OPT) $(WARN) -std=gnu11 -fPIC -fno-builtin $(SHIM_NOLIBCALLS) $(SHIM_NOVECTOR) -fno-omit-frame-pointer \
	-ftls-model=initial-exec -fvisibility=hidden -fno-stack-protector -pthread \
	-D_GNU_SOURCE -Ishim -Ibackend -Ibootstrap -I.
# -z initfirst: the shim's constructor runs before every other object's (shim/init.c).
SHIM_LDFLAGS := -shared -Wl,--version-script=shim/libheapprof.map -Wl,-z,now -Wl,-z,nodelete -Wl,-z,initfirst \
	-pthread -ldl -Wl,--no-undefined
# Link-time optimisation of the injected library (the allocation path crosses several files),
# when the compiler and linker can do it; SHIM_LTO= turns it off. Unit-test objects never use it.
# (gcc takes -flto=auto, which runs its back end in parallel without a warning; clang -flto.)
ifeq ($(origin SHIM_LTO),undefined)
SHIM_LTO := $(shell for f in -flto=auto -flto; do echo 'int f(void){return 0;}' | \
	$(CC) $$f -fPIC -shared -x c -o /dev/null - 2>/dev/null && echo $$f && break; done)
endif

SHIM_SRCS := $(wildcard shim/*.c) $(wildcard backend/*.c) $(wildcard bootstrap/*.c)
SHIM_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(SHIM_SRCS))
# Objects for unit tests: the shim's modules built without -fvisibility=hidden and with
# HP_UNIT_TEST (no constructors), minus the interposed entry points, so a test binary keeps
# libc's allocator and can drive the internals against fakes.
ENTRY_SRCS := shim/malloc.c shim/memalign.c shim/new_delete.c shim/ext.c shim/mi.c shim/signals.c shim/creds.c shim/dlopen.c shim/thread.c shim/api.c \
              shim/exit.c
TEST_OBJS := $(patsubst %.c,$(BUILD)/tobj/%.o,$(filter-out $(ENTRY_SRCS),$(SHIM_SRCS)))

# The report tool: ordinary C, links elfutils' libdw for DWARF symbolisation.
REPORT_CFLAGS := $(OPT) $(WARN) -std=gnu11 -D_GNU_SOURCE -Ishim -Ireport
REPORT_LIBS   := -ldw -lelf -lm
# shim/hib.c: the reader merges HIB records with the same code the shim merges them with.
REPORT_SRCS   := $(wildcard report/*.c) shim/hib.c
REPORT_LIB_SRCS := $(filter-out report/main.c,$(REPORT_SRCS))
SAN           := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lm -lrt -lpthread)

UNIT_SRCS  := $(wildcard test/unit/test_*.c)
UNIT_BINS  := $(patsubst test/unit/%.c,$(BUILD)/unit/%,$(UNIT_SRCS))
RUNIT_SRCS := $(wildcard report/test/test_*.c)
RUNIT_BINS := $(patsubst report/test/%.c,$(BUILD)/runit/%,$(RUNIT_SRCS))
PROG_SRCS  := $(wildcard test/progs/*.c) $(wildcard test/progs/*.cc)

.PHONY: all check unit integration progs bench bench-model clean shim report demo
.DEFAULT_GOAL := all
# Keep the unit-test objects (make would delete them as intermediates after each test build).
.SECONDARY:
all: $(BUILD)/libheapprof_shim.so $(BUILD)/heapprof-report $(BUILD)/demo
demo: $(BUILD)/demo

shim: $(BUILD)/libheapprof_shim.so
report: $(BUILD)/heapprof-report

$(BUILD)/obj/%.o: %.c $(wildcard shim/*.h backend/*.h bootstrap/*.h shim/*.def)
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_CFLAGS) $(SHIM_LTO) -c $< -o $@

$(BUILD)/tobj/%.o: %.c $(wildcard shim/*.h backend/*.h bootstrap/*.h shim/*.def)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -fvisibility=hidden,$(SHIM_CFLAGS)) -DHP_UNIT_TEST -c $< -o $@

$(BUILD)/libheapprof_shim.so: $(SHIM_OBJS) shim/libheapprof.map
	$(CC) -o $@ $(SHIM_OBJS) $(if $(SHIM_LTO),$(SHIM_CFLAGS) $(SHIM_LTO)) $(SHIM_LDFLAGS)

$(BUILD)/heapprof-report: $(REPORT_SRCS) $(wildcard report/*.h) shim/hpf_format.h
	@mkdir -p $(BUILD)
	$(CC) $(REPORT_CFLAGS) -o $@ $(REPORT_SRCS) $(REPORT_LIBS)

# The bundled example the README profiles.
$(BUILD)/demo: examples/demo.c
	@mkdir -p $(BUILD)
	$(CC) -O2 -g -fno-omit-frame-pointer -pthread $(WARN) -o $@ $<

# Sanitized build of the report tool, used by the tests.
$(BUILD)/heapprof-report-san: $(REPORT_SRCS) $(wildcard report/*.h) shim/hpf_format.h
	@mkdir -p $(BUILD)
	$(CC) $(REPORT_CFLAGS) $(SAN) -o $@ $(REPORT_SRCS) $(REPORT_LIBS)

# Shim unit tests link the test objects (not the preloaded .so).
$(BUILD)/unit/%: test/unit/%.c test/unit/unit_support.h $(TEST_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $(WARN) -std=gnu11 -D_GNU_SOURCE -DHP_UNIT_TEST -Ishim -Ibackend -Ibootstrap -I. \
		$(CHECK_CFLAGS) -o $@ $< $(TEST_OBJS) $(CHECK_LIBS) -ldl -pthread

# Report unit tests, sanitized.
$(BUILD)/runit/%: report/test/%.c $(REPORT_LIB_SRCS) $(wildcard report/*.h) $(wildcard report/test/*.h) shim/hpf_format.h
	@mkdir -p $(dir $@)
	$(CC) $(REPORT_CFLAGS) $(SAN) $(CHECK_CFLAGS) $(RUNIT_DEFS) -o $@ $< $(REPORT_LIB_SRCS) $(REPORT_LIBS) $(CHECK_LIBS)

# test_symbolize loads a stripped, versioned shared object (report/test/symtest_lib.c).
$(BUILD)/runit/libsymtest.so: report/test/symtest_lib.c report/test/symtest_lib.map
	@mkdir -p $(dir $@)
	$(CC) -O1 -fPIC -shared -s -Wl,--version-script=report/test/symtest_lib.map -o $@ $<
$(BUILD)/runit/test_symbolize: $(BUILD)/runit/libsymtest.so
$(BUILD)/runit/test_symbolize: RUNIT_DEFS = -DHR_SYMTEST_LIB='"$(abspath $(BUILD))/runit/libsymtest.so"'

# Test programs: built with gcc and clang, sanitized where they are not about the allocator
# itself (see test/progs/README); and the profiling programs several cases share.
progs: $(BUILD)/libheapprof_shim.so
	@sh test/progs/build.sh $(BUILD)/progs
	@bash test/profiling/build.sh

unit: $(UNIT_BINS) $(RUNIT_BINS)
	@set -e; for t in $(UNIT_BINS) $(RUNIT_BINS); do echo "== $$t"; CK_FORK=yes $$t; done

# test/run.sh runs the cases (test/README); T=PATTERN... runs only those that match (a glob, or
# a substring of SUITE/NAME: make check T=fork-threads). set -f: T's globs are the runner's.
integration: all $(BUILD)/heapprof-report-san progs
	@set -f; bash test/run.sh -s integration -s profiling $(T)

check: all $(UNIT_BINS) $(RUNIT_BINS) $(BUILD)/heapprof-report-san progs
	@set -f; HEAPPROF_UNIT_BINS="$(UNIT_BINS) $(RUNIT_BINS)" bash test/run.sh $(T)

bench: all
	@sh bench/run.sh

# Instructions and simulated cache misses under valgrind: steady where timings drift.
bench-model: all
	@sh bench/model.sh

clean:
	rm -rf $(BUILD)
