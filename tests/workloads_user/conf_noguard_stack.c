/* pthread_create/3-2: a thread on a minimum-size stack with no guard page
 * (guardsize 0, allocated by glibc). Whatever lies directly below the
 * stack is the program's business: lockblame must not put readable memory
 * there, or a stack overflow that faults natively would silently write
 * into lockblame's memory. The thread checks the page below its stack
 * before it calls anything else; the driver compares with native. */
#include "conf.h"

#include <limits.h>

static int pipefd[2];
static int below_readable = -1;

static void *probe(void *arg)
{
    (void)arg;
    pthread_attr_t a;
    void *lo = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
        pthread_attr_getstack(&a, &lo, &size);
        pthread_attr_destroy(&a);
    }
    /* write(2) reads the byte below the stack: EFAULT if not readable. */
    ssize_t w = write(pipefd[1], (char *)lo - 1, 1);
    below_readable = w == 1;
    return NULL;
}

int main(void)
{
    CONF_EXPECT(pipe(pipefd) == 0, "pipe");
    int readable = 0;
    for (int i = 0; i < 8; i++) {
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setguardsize(&a, 0);
        pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN);
        pthread_t t;
        int rc = pthread_create(&t, &a, probe, NULL);
        CONF_EXPECT(rc == 0, "create %d", rc);
        pthread_join(t, NULL);
        pthread_attr_destroy(&a);
        readable += below_readable == 1;
        char c;
        if (below_readable == 1)
            (void)!read(pipefd[0], &c, 1);
    }
    printf("threads with readable memory directly below a no-guard minimum stack: %d of 8\n",
           readable);
    return conf_exit_status();
}
