/* Limits of lockblame's sampled accounting that the CLI names in its
 * notes: how many signal intervals of a sampled cond or semaphore one
 * measured interval stands for (src/blame/signal_sampled.h), and how many
 * mutexes can be blamed by holder samples at once
 * (src/blame/mutex_sampled.h). */
#ifndef LB_COMMON_SAMPLED_LIMITS_H
#define LB_COMMON_SAMPLED_LIMITS_H
#define LB_SIGNAL_SAMPLE_EVERY 16
#define LB_MUTEX_HOT_SLOTS 64
#endif
