/* How many signal intervals of a sampled cond or semaphore one measured
 * interval stands for (src/blame/signal_sampled.h). Shared with the CLI,
 * whose notes name it. */
#ifndef LB_COMMON_SIGNAL_SAMPLE_RATE_H
#define LB_COMMON_SIGNAL_SAMPLE_RATE_H
#define LB_SIGNAL_SAMPLE_EVERY 16
#endif
