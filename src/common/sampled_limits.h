/* Limits of lockblame's sampled accounting that the CLI names in its
 * notes: how many signal intervals of a sampled cond or semaphore one
 * measured interval stands for (src/blame/signal_sampled.h: at least
 * LB_SIGNAL_SAMPLE_EVERY, at most LB_SIGNAL_SAMPLE_MAX, more for a thread
 * that signals faster than LB_SIGNAL_MARKS_PER_S of them a second), how
 * long an interval between signals is measured whole (LB_SIGNAL_GAP_NS,
 * "Gaps" there), and how many mutexes can be blamed by holder samples at
 * once (src/blame/mutex_sampled.h). */
#ifndef LB_COMMON_SAMPLED_LIMITS_H
#define LB_COMMON_SAMPLED_LIMITS_H
#define LB_SIGNAL_SAMPLE_EVERY      16
#define LB_SIGNAL_SAMPLE_EVERY_LOG2 4
#define LB_SIGNAL_SAMPLE_MAX        64
#define LB_SIGNAL_SAMPLE_MAX_LOG2   6
#define LB_SIGNAL_MARKS_PER_S       4000
#define LB_SIGNAL_GAP_NS            250000u
#define LB_MUTEX_HOT_SLOTS          64
#endif
