# Benchmarks: included by the root Makefile.
#
#   make bench      build the library and the bench programs, run bench/run.sh
#                   (one table on stdout, also written to build/bench/results.txt),
#                   then bench/cli_perf.sh (the CLI's CPU time on a 1M-node profile)
#
# bench/NAME.c -> $(BUILD)/bench/NAME: plain pthread programs, never linked
# with lockblame; bench/run.sh runs each natively and under LD_PRELOAD.
# bench/sample_cost.c is the exception: it links the sampler itself (no
# interposition) to time one sample's unwind + CCT insert; built only if the
# file is there.

BENCH_PROGS := uncontended lockmix handoff pingpong taskq condpp stackuse churn cctgen spawn threads forktree mmapcost
BENCH_BINS  := $(addprefix $(BUILD)/bench/,$(BENCH_PROGS))
BENCH_CFLAGS := -std=gnu11 -O2 -g -pthread -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter

BENCH_SAMPLE_COST := $(if $(wildcard bench/sample_cost.c),$(BUILD)/bench/sample_cost)
BENCH_SAMPLER_SRCS := $(filter-out src/sampler/adopt.c src/sampler/foreign.c,$(wildcard src/sampler/*.c)) \
                      $(wildcard src/util/*.c src/common/*.c) src/core/undirected.c src/core/real.c \
                      src/core/whatif.c src/core/whatif_progress.c

# bench/hold_cost.c links the library's objects less the interposition and
# the runtime's constructor (as the unit tests do): one contended hold.
BENCH_CORE_OBJS := $(filter-out $(BUILD)/obj/src/interpose/% $(BUILD)/obj/src/core/runtime.o,$(LIB_OBJS))

.PHONY: bench bench-progs
bench-progs: $(BENCH_BINS) $(BENCH_SAMPLE_COST) $(BUILD)/bench/hold_cost $(BUILD)/bench/progress_cost $(BUILD)/bench/libforward.so \
	$(BUILD)/bench/libmechanism.so

# bench/forward.c: a forwarding-only interposer, the hand-off rows' reference.
$(BUILD)/bench/libforward.so: bench/forward.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -shared -fPIC -o $@ $< -ldl

# bench/mechanism.c: the sampling mechanisms alone (a scale.sh variant).
$(BUILD)/bench/libmechanism.so: bench/mechanism.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -shared -fPIC -o $@ $< -ldl

bench: $(LIB) $(CLI) bench-progs
	@BUILD=$(BUILD) bench/run.sh
	@BUILD=$(BUILD) bench/cli_perf.sh

$(BUILD)/bench/%: bench/%.c bench/bench.h
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -o $@ $< -lrt

$(BUILD)/bench/sample_cost: bench/sample_cost.c $(BENCH_SAMPLER_SRCS) $(wildcard src/sampler/*.h src/util/*.h)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -D_GNU_SOURCE -Isrc -pthread -fno-omit-frame-pointer \
	    -fno-optimize-sibling-calls \
	    -o $@ bench/sample_cost.c $(BENCH_SAMPLER_SRCS) \
	    -lpfm -lsqlite3 -ldl -lrt

# bench/progress_cost.c: a whatif progress point's cost a call.
$(BUILD)/bench/progress_cost: bench/progress_cost.c src/core/whatif_progress.c src/core/whatif_progress.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -D_GNU_SOURCE -Isrc -o $@ bench/progress_cost.c src/core/whatif_progress.c

$(BUILD)/bench/hold_cost: bench/hold_cost.c $(BENCH_CORE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -D_GNU_SOURCE -Isrc -pthread -o $@ bench/hold_cost.c \
	    $(BENCH_CORE_OBJS) $(LIB_LIBS) -lm
