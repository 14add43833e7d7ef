/*
 * check.h: assertions and a tiny runner for lockblame unit tests.
 *
 * Header-only; include it from exactly one file per test program.
 * A unit test file looks like this:
 *
 *     #include "check.h"
 *     static void test_convert_race(void) { ASSERT_EQ(f(1), 2); }
 *     static void test_reclaim(void)      { ASSERT_NOT_NULL(p); }
 *     CHECK_MAIN(test_convert_race, test_reclaim)
 *
 * The program runs each named test in its own forked child with an alarm
 * (CHECK_TIMEOUT seconds, default 60), prints "ok NAME" or
 * "not ok NAME (reason)" per test, and exits 1 if any failed. Given
 * arguments, it runs only the tests whose names contain one of them.
 * CHECK_NOFORK=1 runs tests in-process (handy under gdb).
 *
 * Failed assertions print file:line, the expression and both operands, then
 * abort(). They are real checks, not assert(): NDEBUG does not remove them.
 */
#ifndef LOCKBLAME_TESTS_CHECK_H
#define LOCKBLAME_TESTS_CHECK_H

#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK_FAIL_(...)                                \
    do {                                                \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                   \
        fputc('\n', stderr);                            \
        fflush(NULL);                                   \
        abort();                                        \
    } while (0)

/* Integer comparison; both sides are converted to intmax_t once each. */
#define ASSERT_CMP_(a, op, b)                                                 \
    do {                                                                      \
        intmax_t check_a_ = (intmax_t)(a);                                    \
        intmax_t check_b_ = (intmax_t)(b);                                    \
        if (!(check_a_ op check_b_))                                          \
            CHECK_FAIL_("assertion failed: %s %s %s\n"                        \
                        "  left:  %jd (0x%jx)\n  right: %jd (0x%jx)",         \
                        #a, #op, #b, check_a_, (uintmax_t)check_a_, check_b_, \
                        (uintmax_t)check_b_);                                 \
    } while (0)

#define ASSERT_EQ(a, b) ASSERT_CMP_(a, ==, b)
#define ASSERT_NE(a, b) ASSERT_CMP_(a, !=, b)
#define ASSERT_LT(a, b) ASSERT_CMP_(a, <, b)
#define ASSERT_LE(a, b) ASSERT_CMP_(a, <=, b)
#define ASSERT_GT(a, b) ASSERT_CMP_(a, >, b)
#define ASSERT_GE(a, b) ASSERT_CMP_(a, >=, b)

/* Unsigned comparison, for values that may exceed INTMAX_MAX. */
#define ASSERT_UEQ(a, b)                                                 \
    do {                                                                 \
        uintmax_t check_a_ = (uintmax_t)(a);                             \
        uintmax_t check_b_ = (uintmax_t)(b);                             \
        if (check_a_ != check_b_)                                        \
            CHECK_FAIL_("assertion failed: %s == %s\n"                   \
                        "  left:  %ju (0x%jx)\n  right: %ju (0x%jx)",    \
                        #a, #b, check_a_, check_a_, check_b_, check_b_); \
    } while (0)

#define ASSERT_TRUE(e)                               \
    do {                                             \
        if (!(e))                                    \
            CHECK_FAIL_("assertion failed: %s", #e); \
    } while (0)
#define ASSERT_FALSE(e) ASSERT_TRUE(!(e))

#define ASSERT_PTR_EQ(a, b)                                                                       \
    do {                                                                                          \
        const void *check_a_ = (const void *)(a);                                                 \
        const void *check_b_ = (const void *)(b);                                                 \
        if (check_a_ != check_b_)                                                                 \
            CHECK_FAIL_("assertion failed: %s == %s\n  left:  %p\n  right: %p", #a, #b, check_a_, \
                        check_b_);                                                                \
    } while (0)
#define ASSERT_NULL(p) ASSERT_PTR_EQ(p, NULL)
#define ASSERT_NOT_NULL(p)                                   \
    do {                                                     \
        if ((const void *)(p) == NULL)                       \
            CHECK_FAIL_("assertion failed: %s != NULL", #p); \
    } while (0)

#define ASSERT_STR_EQ(a, b)                                                                      \
    do {                                                                                         \
        const char *check_a_ = (a);                                                              \
        const char *check_b_ = (b);                                                              \
        if (check_a_ == NULL || check_b_ == NULL || strcmp(check_a_, check_b_) != 0)             \
            CHECK_FAIL_("assertion failed: %s == %s\n"                                           \
                        "  left:  \"%s\"\n  right: \"%s\"",                                      \
                        #a, #b, check_a_ ? check_a_ : "(null)", check_b_ ? check_b_ : "(null)"); \
    } while (0)

/* |a - b| <= eps, for doubles. */
#define ASSERT_NEAR(a, b, eps)                                                                  \
    do {                                                                                        \
        double check_a_ = (double)(a);                                                          \
        double check_b_ = (double)(b);                                                          \
        double check_e_ = (double)(eps);                                                        \
        if (!(fabs(check_a_ - check_b_) <= check_e_))                                           \
            CHECK_FAIL_("assertion failed: |%s - %s| <= %s\n"                                   \
                        "  left:  %.9g\n  right: %.9g\n  diff:  %.9g > %.9g",                   \
                        #a, #b, #eps, check_a_, check_b_, fabs(check_a_ - check_b_), check_e_); \
    } while (0)

/* A call returning 0 on success or an error number (pthread style). */
#define ASSERT_OK(call)                                                               \
    do {                                                                              \
        int check_rc_ = (call);                                                       \
        if (check_rc_ != 0)                                                           \
            CHECK_FAIL_("%s failed: %d (%s)", #call, check_rc_, strerror(check_rc_)); \
    } while (0)

/* ---- runner ---- */

typedef struct {
    const char *name; /* as written in CHECK_MAIN */
    void (*fn)(void); /* the test body; returns on success */
} check_test;

static int check_selected_(const char *name, int argc, char **argv)
{
    if (argc < 2)
        return 1;
    for (int i = 1; i < argc; i++)
        if (strstr(name, argv[i]))
            return 1;
    return 0;
}

/* Runs one test; returns 0 on pass. Writes the reason into why on failure. */
static int check_run_one_(const check_test *t, char *why, size_t whylen)
{
    const char *nofork = getenv("CHECK_NOFORK");
    if (nofork && *nofork == '1') {
        t->fn();
        return 0;
    }
    const char *tmo = getenv("CHECK_TIMEOUT");
    unsigned timeout = tmo ? (unsigned)atoi(tmo) : 60;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, whylen, "fork failed");
        return 1;
    }
    if (pid == 0) {
        alarm(timeout);
        t->fn();
        fflush(NULL);
        _exit(0);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        ;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 0;
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
        snprintf(why, whylen, "timeout after %u s", timeout);
    else if (WIFSIGNALED(st))
        snprintf(why, whylen, "signal %s", strsignal(WTERMSIG(st)));
    else
        snprintf(why, whylen, "exit %d", WEXITSTATUS(st));
    return 1;
}

static int check_main_(const check_test *tests, size_t n, int argc, char **argv)
{
    int failed = 0, ran = 0;
    for (size_t i = 0; i < n; i++) {
        if (!check_selected_(tests[i].name, argc, argv))
            continue;
        char why[128] = "";
        ran++;
        if (check_run_one_(&tests[i], why, sizeof why)) {
            printf("not ok %s (%s)\n", tests[i].name, why);
            failed++;
        } else {
            printf("ok %s\n", tests[i].name);
        }
        fflush(stdout);
    }
    if (ran == 0) {
        fprintf(stderr, "no test matched\n");
        return 2;
    }
    return failed ? 1 : 0;
}

#define CHECK_MAIN(...)                                                  \
    int main(int argc, char **argv)                                      \
    {                                                                    \
        void (*const check_fns_[])(void) = { __VA_ARGS__ };              \
        static const char check_names_[] = #__VA_ARGS__;                 \
        enum {                                                           \
            N_ = sizeof check_fns_ / sizeof check_fns_[0]                \
        };                                                               \
        check_test check_tests_[N_];                                     \
        char check_buf_[sizeof check_names_];                            \
        memcpy(check_buf_, check_names_, sizeof check_names_);           \
        char *check_save_ = NULL;                                        \
        char *check_tok_ = strtok_r(check_buf_, ", \t\n", &check_save_); \
        for (int i_ = 0; i_ < N_; i_++) {                                \
            check_tests_[i_].name = check_tok_ ? check_tok_ : "?";       \
            check_tests_[i_].fn = check_fns_[i_];                        \
            check_tok_ = strtok_r(NULL, ", \t\n", &check_save_);         \
        }                                                                \
        return check_main_(check_tests_, N_, argc, argv);                \
    }

#endif /* LOCKBLAME_TESTS_CHECK_H */
