/*
 * select.c - --pid N and --comm NAME, parsed and described the same way
 * for `report` and `compare` (select.h). Which processes match is
 * load.c's business (lb_profile_load_select).
 */
#include <inttypes.h>
#include <stdlib.h>

#include "report/cli/select.h"

static int64_t parse_pid(const char *cmd, const char *s)
{
    char *end;
    long long v = strtoll(s, &end, 10);

    if (!*s || *end || v <= 0 || v > 0x7fffffff)
        cli_die(LB_EXIT_USAGE, "%s: --pid wants a process id, not '%s'", cmd, s);
    return v;
}

void lb_select_option(struct lb_select *sel, const char *cmd, int opt, const char *arg)
{
    if (opt == LB_OPT_PID) {
        sel->pid = parse_pid(cmd, arg);
    } else if (opt == LB_OPT_WINDOW || opt == LB_OPT_SINCE || opt == LB_OPT_UNTIL) {
        if (!*arg)
            cli_die(LB_EXIT_USAGE, "%s: --%s wants a value", cmd,
                    opt == LB_OPT_WINDOW  ? "window"
                    : opt == LB_OPT_SINCE ? "since"
                                          : "until");
        *(opt == LB_OPT_WINDOW  ? &sel->window
          : opt == LB_OPT_SINCE ? &sel->since
                                : &sel->until) = arg;
    } else {
        if (!*arg)
            cli_die(LB_EXIT_USAGE, "%s: --comm wants a command name", cmd);
        sel->comm = arg;
    }
}

bool lb_select_any(const struct lb_select *sel)
{
    return sel->pid || sel->comm;
}

void lb_select_describe(const struct lb_select *sel, struct lb_buf *out)
{
    if (sel->pid)
        lb_buf_printf(out, "pid=%" PRId64, sel->pid);
    if (sel->comm)
        lb_buf_printf(out, "%scomm=%s", sel->pid ? " " : "", sel->comm);
    const char *names[] = { "window", "since", "until" };
    const char *values[] = { sel->window, sel->since, sel->until };
    bool first = !sel->pid && !sel->comm;

    for (int i = 0; i < 3; i++) {
        if (values[i]) {
            lb_buf_printf(out, "%s%s=%s", first ? "" : " ", names[i], values[i]);
            first = false;
        }
    }
}
