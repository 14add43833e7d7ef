# Tests: included by the root Makefile.
#
#   make check                 build everything, then run tests/run.sh: the unit
#                              tests and tests/integration/*.sh, which assert
#                              results only (never a time, rate or resource limit)
#   make check TESTS=handoff   run only tests whose name contains "handoff"
#   make check-slow            the slow tier, tests/slow/*.sh (tests/run.sh --slow):
#                              soak and scale tests with stated, generous limits,
#                              for a quiet machine; TESTS selects as for check
#
# Unit tests: tests/unit/NAME.c -> $(BUILD)/tests/unit/NAME, one file per
# module. They compile against src/ headers and tests/check.h, and link the
# library's objects minus src/interpose (the exported pthread_* wrappers
# would interpose on the test itself) and core/runtime.o (its constructor
# would start lockblame in the test). All the others are linked, not an
# archive's pick, so every layer's hooks are there (core/hooks.h) and
# lb_thread_attach gives a test a complete thread record: no stubs.
#
# Workloads: tests/workloads/NAME.c -> $(BUILD)/tests/workloads/NAME, plain
# pthread programs, never linked with lockblame; the integration drivers in
# tests/integration/*.sh run them under LD_PRELOAD. -fno-optimize-sibling-calls
# keeps every call site a real call, so release sites stay in the call path.
#
# User-built workloads: tests/workloads_user/NAME.c or NAME.cc ->
# $(BUILD)/tests/workloads_user/NAME, built the way users build: gcc/g++
# -O2 -g -pthread, so tail calls, inlining and gcc clones are all on and
# the frame pointer is omitted. One file per program; they may include
# tests/workloads/gt.h. The drivers find them in $WORKLOADS_USER.

TEST_UNIT_SRCS := $(wildcard tests/unit/*.c)
TEST_UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(TEST_UNIT_SRCS))
TEST_WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
TEST_WORKLOAD_BINS := $(patsubst tests/workloads/%.c,$(BUILD)/tests/workloads/%,$(TEST_WORKLOAD_SRCS))

TEST_USER_C_SRCS  := $(filter-out tests/workloads_user/gt_futex_glib.c,$(wildcard tests/workloads_user/*.c))
TEST_USER_CC_SRCS := $(wildcard tests/workloads_user/*.cc)
TEST_USER_BINS := $(patsubst tests/workloads_user/%.c,$(BUILD)/tests/workloads_user/%,$(TEST_USER_C_SRCS)) \
                  $(patsubst tests/workloads_user/%.cc,$(BUILD)/tests/workloads_user/%,$(TEST_USER_CC_SRCS))

# The futex workloads: C++20 (gt_futex_cxx.cc, std::latch and the like),
# and where their toolchains are installed GLib (gt_futex_glib.c, with
# pkg-config's flags) and Rust (gt_futex_rust.rs, with the first rustc on
# PATH, -O -g as cargo's release profile with debug info builds); their
# tests skip when a binary is missing.
$(BUILD)/tests/workloads_user/gt_futex_cxx: TEST_USER_CXXFLAGS += -std=c++20
GLIB_FLAGS := $(shell pkg-config --cflags --libs glib-2.0 2>/dev/null)
ifneq ($(GLIB_FLAGS),)
TEST_USER_BINS += $(BUILD)/tests/workloads_user/gt_futex_glib
$(BUILD)/tests/workloads_user/gt_futex_glib: tests/workloads_user/gt_futex_glib.c
	@mkdir -p $(dir $@)
	gcc $(TEST_USER_CFLAGS) -MMD -MP -o $@ $< $(GLIB_FLAGS)
endif
ifneq ($(shell command -v rustc 2>/dev/null),)
TEST_USER_BINS += $(BUILD)/tests/workloads_user/gt_futex_rust
TEST_USER_BINS += $(BUILD)/tests/workloads_user/gt_futex_rust_v0
$(BUILD)/tests/workloads_user/gt_futex_rust: tests/workloads_user/gt_futex_rust.rs
	@mkdir -p $(dir $@)
	rustc -O -g -o $@ $<
# the same program with rustc's v0 symbol names ("_R...")
$(BUILD)/tests/workloads_user/gt_futex_rust_v0: tests/workloads_user/gt_futex_rust.rs
	@mkdir -p $(dir $@)
	rustc -O -g -C symbol-mangling-version=v0 -o $@ $<
endif

# whatif_gt.c is built a second time with its named holds really shortened
# (WHATIF_FIX): the real fix that `lockblame whatif` predicts. Both builds
# call plt_update, the release site of their plt program, in a library of
# their own, libwhatif_plt.so (tests/workloads_user/lib/whatif_plt_lib.c),
# through the PLT, found beside them (rpath $ORIGIN).
TEST_USER_BINS += $(BUILD)/tests/workloads_user/libwhatif_plt.so \
                  $(BUILD)/tests/workloads_user/whatif_gt_fixed
$(BUILD)/tests/workloads_user/libwhatif_plt.so: tests/workloads_user/lib/whatif_plt_lib.c
	@mkdir -p $(dir $@)
	gcc $(TEST_USER_CFLAGS) -shared -fPIC -MMD -MP -o $@ $<
$(BUILD)/tests/workloads_user/whatif_gt_fixed: WHATIF_GT_FLAGS := -DWHATIF_FIX
$(BUILD)/tests/workloads_user/whatif_gt $(BUILD)/tests/workloads_user/whatif_gt_fixed: \
                  tests/workloads_user/whatif_gt.c $(BUILD)/tests/workloads_user/libwhatif_plt.so
	@mkdir -p $(dir $@)
	gcc $(TEST_USER_CFLAGS) $(WHATIF_GT_FLAGS) -MMD -MP -o $@ $< -lm \
	    -L$(BUILD)/tests/workloads_user -lwhatif_plt -Wl,-rpath,'$$ORIGIN'

# names_tree.c is built a second time as a fixed-address executable
# (ET_EXEC, -no-pie): its addresses are absolute, and a module offset is an
# address less the page of its first loadable segment, not less a load
# bias of 0 as in a position-independent one.
TEST_USER_BINS += $(BUILD)/tests/workloads_user/names_tree_nopie
$(BUILD)/tests/workloads_user/names_tree_nopie: tests/workloads_user/names_tree.c
	@mkdir -p $(dir $@)
	gcc $(TEST_USER_CFLAGS) -no-pie -MMD -MP -o $@ $< -lm

# go_note.c is built a second time without its Go build id note
# (go_note_plain): the same program, which lockblame profiles.
TEST_USER_BINS += $(BUILD)/tests/workloads_user/go_note_plain
$(BUILD)/tests/workloads_user/go_note_plain: tests/workloads_user/go_note.c
	@mkdir -p $(dir $@)
	gcc $(TEST_USER_CFLAGS) -DNO_GO_NOTE -MMD -MP -o $@ $<

# std_threads starts its std::threads in a shared library of its own,
# libstd_threads.so (tests/workloads_user/lib/std_threads_lib.cc), found
# beside it (rpath $ORIGIN).
TEST_USER_BINS += $(BUILD)/tests/workloads_user/libstd_threads.so
$(BUILD)/tests/workloads_user/libstd_threads.so: tests/workloads_user/lib/std_threads_lib.cc
	@mkdir -p $(dir $@)
	g++ $(TEST_USER_CXXFLAGS) -shared -fPIC -MMD -MP -o $@ $<
$(BUILD)/tests/workloads_user/std_threads: tests/workloads_user/std_threads.cc \
                                           $(BUILD)/tests/workloads_user/libstd_threads.so
	@mkdir -p $(dir $@)
	g++ $(TEST_USER_CXXFLAGS) -MMD -MP -o $@ $< -L$(BUILD)/tests/workloads_user -lstd_threads \
	    -Wl,-rpath,'$$ORIGIN'

TEST_CORE_OBJS := $(filter-out $(BUILD)/obj/src/interpose/% $(BUILD)/obj/src/core/runtime.o,$(LIB_OBJS))

TEST_UNIT_CFLAGS := $(CFLAGS_COMMON) -Itests -pthread -fno-omit-frame-pointer
TEST_WORKLOAD_CFLAGS := -std=gnu11 -O1 -g -fno-omit-frame-pointer \
                        -fno-optimize-sibling-calls -pthread -D_GNU_SOURCE \
                        -Wall -Wextra -Wno-unused-parameter
TEST_USER_CFLAGS  := -O2 -g -pthread -D_GNU_SOURCE -Itests/workloads -Wall -Wextra
TEST_USER_CXXFLAGS := -O2 -g -pthread -Itests/workloads -Wall -Wextra

.PHONY: check check-slow tests
tests: $(TEST_UNIT_BINS) $(TEST_WORKLOAD_BINS) $(TEST_USER_BINS)

check: all $(TEST_UNIT_BINS) $(TEST_WORKLOAD_BINS) $(TEST_USER_BINS) $(BUILD)/demo/taskqueue bench-progs
	@tests/run.sh $(TESTS)

check-slow: all $(TEST_UNIT_BINS) $(TEST_WORKLOAD_BINS) $(TEST_USER_BINS) bench-progs
	@tests/run.sh --slow $(TESTS)

$(BUILD)/tests/unit/%: tests/unit/%.c $(TEST_CORE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_UNIT_CFLAGS) -MMD -MP -o $@ $< $(TEST_CORE_OBJS) $(LIB_LIBS) -lm

$(BUILD)/tests/workloads/%: tests/workloads/%.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_WORKLOAD_CFLAGS) -MMD -MP -o $@ $< -lm

$(BUILD)/tests/workloads_user/%: tests/workloads_user/%.c
	@mkdir -p $(dir $@)
	gcc $(TEST_USER_CFLAGS) -MMD -MP -o $@ $< -lm

# OpenMP programs (omp_*.c) are built as their users build them, with libgomp.
$(BUILD)/tests/workloads_user/omp_%: tests/workloads_user/omp_%.c
	@mkdir -p $(dir $@)
	gcc $(TEST_USER_CFLAGS) -fopenmp -MMD -MP -o $@ $< -lm

$(BUILD)/tests/workloads_user/%: tests/workloads_user/%.cc
	@mkdir -p $(dir $@)
	g++ $(TEST_USER_CXXFLAGS) -MMD -MP -o $@ $< -lm

-include $(TEST_UNIT_BINS:=.d) $(TEST_WORKLOAD_BINS:=.d) $(TEST_USER_BINS:=.d)
