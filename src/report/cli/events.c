/*
 * events.c - `lockblame events`: the perf events libpfm4 knows for the PMUs
 * present on this machine, each marked '*' when perf_event_open accepts it
 * here (user space only, this thread, opened and closed at once). The
 * software clocks lockblame falls back to are always listed.
 */
#include <errno.h>
#include <getopt.h>
#include <linux/perf_event.h>
#include <perfmon/pfmlib.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/pfm_encode.h"
#include "util/lazy_deps.h"
#include "report/cli/commands.h"
#include "report/cli/util.h"

static const char events_usage[] =
    "usage: lockblame events [-a]\n"
    "\n"
    "List the perf events libpfm4 knows for this machine's PMUs. '*' marks the\n"
    "events that open here (user space, this thread); use one with\n"
    "'lockblame run -e EVENT[@PERIOD]' or LOCKBLAME_EVENT. task-clock and\n"
    "cpu-clock are the software fallbacks and always listed.\n"
    "\n"
    "options:\n"
    "  -a, --all   also list the events of PMUs not present (not tried)\n"
    "  -h, --help  this help\n";

static bool try_open(struct perf_event_attr *attr)
{
    attr->size = sizeof *attr;
    attr->exclude_kernel = 1;
    attr->exclude_hv = 1;
    attr->disabled = 1;
    int fd = (int)syscall(SYS_perf_event_open, attr, 0, -1, -1, 0);

    if (fd < 0)
        return false;
    close(fd);
    return true;
}

static bool try_pfm(const char *name)
{
    struct perf_event_attr attr;

    if (lb_pfm_encode(name, &attr) != PFM_SUCCESS)
        return false;
    return try_open(&attr);
}

static void print_event(const char *mark, const char *name, const char *pmu, const char *desc)
{
    char d[120];

    snprintf(d, sizeof d, "%s", desc ? desc : "");
    for (char *c = d; *c; c++)
        if (*c == '\n' || *c == '\t')
            *c = ' ';
    printf("%s %-36s %-12s %s\n", mark, name, pmu, d);
}

static void software_fallbacks(void)
{
    static const struct {
        const char *name;
        unsigned long long config;
        const char *desc;
    } sw[] = {
        { "task-clock", PERF_COUNT_SW_TASK_CLOCK,
          "CPU time of the thread (software fallback, ns)" },
        { "cpu-clock", PERF_COUNT_SW_CPU_CLOCK, "CPU clock (software fallback, ns)" },
    };

    for (size_t i = 0; i < sizeof sw / sizeof *sw; i++) {
        struct perf_event_attr attr;

        memset(&attr, 0, sizeof attr);
        attr.type = PERF_TYPE_SOFTWARE;
        attr.config = sw[i].config;
        print_event(try_open(&attr) ? "*" : " ", sw[i].name, "software", sw[i].desc);
    }
}

int lb_cmd_events(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "help", no_argument, NULL, 'h' },
        { "all", no_argument, NULL, 'a' },
        { NULL, 0, NULL, 0 },
    };
    bool all = false;
    int c;

    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":ha", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            fputs(events_usage, stdout);
            return LB_EXIT_OK;
        case 'a':
            all = true;
            break;
        default:
            lb_bad_option("events", c == ':' ? ':' : optopt, argv[optind - 1]);
        }
    }
    if (optind < argc)
        cli_die(LB_EXIT_USAGE, "events: unexpected argument '%s'", argv[optind]);

    printf("  %-36s %-12s %s\n", "EVENT", "PMU", "DESCRIPTION");
    software_fallbacks();
    char why[256];
    if (!lb_pfm_open(why, sizeof why)) {
        cli_warn("events: libpfm4 could not be loaded (%s); only the software clocks are listed",
                 why);
        return LB_EXIT_OK;
    }
    int rc = pfm_initialize();

    if (rc != PFM_SUCCESS) {
        cli_warn("events: libpfm4 did not initialise (%s); only the software clocks are listed",
                 pfm_strerror(rc));
        return LB_EXIT_OK;
    }
    int listed = 0, usable = 0;
    pfm_pmu_t pmu;

    pfm_for_all_pmus(pmu)
    {
        pfm_pmu_info_t pinfo;

        memset(&pinfo, 0, sizeof pinfo);
        pinfo.size = sizeof pinfo;
        if (pfm_get_pmu_info(pmu, &pinfo) != PFM_SUCCESS)
            continue;
        bool present = pinfo.is_present;

        if (!present && !all)
            continue;
        for (int idx = pinfo.first_event; idx != -1; idx = pfm_get_event_next(idx)) {
            pfm_event_info_t info;
            char full[256];

            memset(&info, 0, sizeof info);
            info.size = sizeof info;
            if (pfm_get_event_info(idx, PFM_OS_NONE, &info) != PFM_SUCCESS)
                continue;
            snprintf(full, sizeof full, "%s::%s", pinfo.name, info.name);
            bool ok = present && try_pfm(full);

            print_event(ok ? "*" : " ", info.name, pinfo.name, info.desc);
            listed++;
            usable += ok;
        }
    }
    printf("(%d events from libpfm4, %d open here; plus the software clocks)\n", listed, usable);
    return LB_EXIT_OK;
}
