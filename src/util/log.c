#include "util/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void lb_vwarn(const char *fmt, va_list ap)
{
    int saved_errno = errno;
    char line[512];
    int n = snprintf(line, sizeof line, "lockblame: ");
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    if (m < 0)
        m = 0;
    size_t len = (size_t)n + (size_t)m;
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    /* One line, whole: a signal storm may interrupt the write (EINTR) or
     * cut it short; retry until it is out or stderr is gone. write() is a
     * cancellation point and a warning can come from inside a wrapped
     * call that is not one (pthread_mutex_lock converting a lock), so
     * cancellation is off around it (pthread_setcancelstate is not a
     * cancellation point). */
    int cancel_state;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    for (size_t off = 0; off < len;) {
        ssize_t w = write(STDERR_FILENO, line + off, len - off);
        if (w > 0)
            off += (size_t)w;
        else if (w < 0 && errno == EINTR)
            continue;
        else
            break;
    }
    pthread_setcancelstate(cancel_state, NULL);
    errno = saved_errno;
}

void lb_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    lb_vwarn(fmt, ap);
    va_end(ap);
}

void lb_warn_once(int *once, const char *fmt, ...)
{
    if (__atomic_exchange_n(once, 1, __ATOMIC_RELAXED))
        return;
    va_list ap;
    va_start(ap, fmt);
    lb_vwarn(fmt, ap);
    va_end(ap);
}

void lb_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    lb_vwarn(fmt, ap);
    va_end(ap);
    abort();
}
