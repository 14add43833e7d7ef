# lockblame: one GNU Makefile. Out-of-tree build in build/, -MMD dependencies,
# strict warnings. Local overrides go in config.mak (not committed).
-include config.mak

BUILD    ?= build
CC       ?= cc
OPT      ?= -O2 -g
WARN     := -Wall -Wextra -Werror=implicit-function-declaration -Wshadow \
            -Wstrict-prototypes -Wmissing-prototypes -Wpointer-arith \
            -Wformat=2 -Wundef -Wno-unused-parameter
CFLAGS_COMMON := -std=gnu11 $(OPT) $(WARN) -D_GNU_SOURCE -fno-strict-aliasing \
                 -Isrc $(shell pkg-config --cflags sqlite3 libdw 2>/dev/null)

LIB_DIRS := src/util src/common src/core src/interpose src/locks src/blame src/sampler src/report/writer
LIB_SRCS := $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c))
LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
# SQLite, libdw, libelf, liblzma and libpfm4 are not linked: the library
# opens them on first use (src/util/lazy_lib.h), so a process start does
# not pay for their loading. Their headers are still needed.
LIB_LIBS := -ldl -lrt -lpthread

# libpfm4 is opened on first use by the CLI too (`lockblame events`).
CLI_SRCS := $(wildcard src/common/*.c src/report/cli/*.c) src/util/lazy_pfm.c src/util/lazy_lib.c
CLI_OBJS := $(patsubst %.c,$(BUILD)/cli/%.o,$(CLI_SRCS))
CLI_LIBS := $(shell pkg-config --libs sqlite3 2>/dev/null || echo -lsqlite3) -lstdc++ -lm -lz $(shell pkg-config --libs libdw 2>/dev/null || echo -ldw -lelf) -llzma

LIB := $(BUILD)/liblockblame.so
CLI := $(BUILD)/lockblame

.PHONY: all deps demo check bench clean
all: $(LIB) $(CLI)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -fPIC -fvisibility=hidden -ftls-model=initial-exec -MMD -MP -c $< -o $@

$(BUILD)/cli/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -MMD -MP -c $< -o $@

# -z now: every import bound at load (tests/integration/bind_now.sh), so
# that no first call enters the dynamic linker later: not in the sampling
# signal handler, not in each fork child (a lookup through every module).
$(LIB): $(LIB_OBJS) src/liblockblame.map src/liblockblame.ld
	$(CC) -shared -Wl,-z,now -Wl,-z,defs -Wl,--no-undefined -Wl,--version-script=src/liblockblame.map -Wl,-T,src/liblockblame.ld -o $@ $(filter %.o,$^) $(LIB_LIBS)

$(CLI): $(CLI_OBJS)
	$(CC) -o $@ $^ $(CLI_LIBS)

# report --format html embeds these with .incbin, which -MMD does not see.
$(BUILD)/cli/src/report/cli/html_assets.o: $(wildcard src/report/cli/html/*)

deps:
	@scripts/install-deps.sh

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d)
-include tests/tests.mak
-include bench/bench.mak
-include demo/demo.mak
