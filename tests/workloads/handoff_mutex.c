/*
 * handoff_mutex: ground truth for mutex blame (see handoff.h).
 * One slow holder (2 ms holds) and FAST_THREADS fast holders (20 us holds)
 * share one pthread mutex. Most of the waiting happens while the slow holder
 * holds, so slow_release_site must take most of the blame.
 */
#include "handoff.h"

static pthread_mutex_t the_lock = PTHREAD_MUTEX_INITIALIZER;

/* The release sites. noipa: never inlined, cloned or merged with each other
 * (they are otherwise identical), so each is its own frame in the call path. */
__attribute__((noipa)) void slow_release_site(void);
__attribute__((noipa)) void fast_release_site(void);
__attribute__((noipa)) void wait_site(void);

void slow_release_site(void)
{
    int rc = pthread_mutex_unlock(&the_lock);
    if (rc)
        ho_die("pthread_mutex_unlock (slow)", rc);
}

void fast_release_site(void)
{
    int rc = pthread_mutex_unlock(&the_lock);
    if (rc)
        ho_die("pthread_mutex_unlock (fast)", rc);
}

void wait_site(void)
{
    int rc = pthread_mutex_lock(&the_lock);
    if (rc)
        ho_die("pthread_mutex_lock", rc);
}

static const struct handoff_cfg cfg = {
    .workload = "handoff_mutex",
    .object = "mutex",
    .address = &the_lock,
    .lock = wait_site,
    .release = { [SITE_SLOW] = slow_release_site, [SITE_FAST] = fast_release_site },
    .hold_ns = { [SITE_SLOW] = 2000000, [SITE_FAST] = 20000 },
    .think_ns = { [SITE_SLOW] = 1000000, [SITE_FAST] = 20000 },
    .think_sleeps = 1, /* steadier under machine load than spinning */
    .default_fast_threads = 3,
};

int main(int argc, char **argv)
{
    return handoff_main(&cfg, argc, argv);
}
