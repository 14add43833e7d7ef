/*
 * handoff_spin: ground truth for spin-lock blame (see handoff.h).
 * One slow holder (1 ms holds) and FAST_THREADS fast holders (10 us holds,
 * default 2: spinning waiters on a 2-core machine steal the holder's CPU)
 * share one pthread spin lock. slow_release_site must take most of the blame.
 */
#include "handoff.h"

static pthread_spinlock_t the_lock;

/* noipa: see handoff_mutex.c. */
__attribute__((noipa)) void slow_release_site(void);
__attribute__((noipa)) void fast_release_site(void);
__attribute__((noipa)) void wait_site(void);

void slow_release_site(void)
{
    int rc = pthread_spin_unlock(&the_lock);
    if (rc)
        ho_die("pthread_spin_unlock (slow)", rc);
}

void fast_release_site(void)
{
    int rc = pthread_spin_unlock(&the_lock);
    if (rc)
        ho_die("pthread_spin_unlock (fast)", rc);
}

void wait_site(void)
{
    int rc = pthread_spin_lock(&the_lock);
    if (rc)
        ho_die("pthread_spin_lock", rc);
}

static const struct handoff_cfg cfg = {
    .workload = "handoff_spin",
    .object = "spin",
    .address = (const void *)(uintptr_t)&the_lock, /* it is volatile */
    .lock = wait_site,
    .release = { [SITE_SLOW] = slow_release_site, [SITE_FAST] = fast_release_site },
    .hold_ns = { [SITE_SLOW] = 1000000, [SITE_FAST] = 20000 },
    .think_ns = { [SITE_SLOW] = 1000000, [SITE_FAST] = 20000 },
    .think_sleeps = 1, /* fewer runnable threads than cores while nobody waits */
    .default_fast_threads = 2,
};

int main(int argc, char **argv)
{
    int rc = pthread_spin_init(&the_lock, PTHREAD_PROCESS_PRIVATE);
    if (rc)
        ho_die("pthread_spin_init", rc);
    return handoff_main(&cfg, argc, argv);
}
