# The demo: included by the root Makefile.
#
#   make demo   install missing packages (scripts/install-deps.sh), build the
#               library, the CLI and demo/taskqueue.c, profile the task queue
#               with 4 workers and show where its idleness came from.
#
# The build runs in a sub-make so that it starts after `deps` (even under -j)
# and re-reads pkg-config output once packages are installed.

DEMO_BIN     := $(BUILD)/demo/taskqueue
DEMO_DB      := $(BUILD)/demo.db
DEMO_WORKERS ?= 4
DEMO_CFLAGS  := -std=gnu11 -O2 -g -fno-omit-frame-pointer -pthread -D_GNU_SOURCE \
                -Wall -Wextra

.PHONY: demo
demo: deps
	@$(MAKE) --no-print-directory all $(DEMO_BIN)
	rm -f $(DEMO_DB)
	$(CLI) run -o $(DEMO_DB) -- $(DEMO_BIN) $(DEMO_WORKERS)
	$(CLI) report --by-release-site $(DEMO_DB)

$(DEMO_BIN): demo/taskqueue.c
	@mkdir -p $(dir $@)
	$(CC) $(DEMO_CFLAGS) -o $@ $<
