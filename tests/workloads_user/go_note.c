/* A C program that carries the Go linker's build id note (owner "Go",
 * type 4), as every Go program built with cgo does: lockblame takes it for
 * a Go program (src/common/go_program.h). Its threads contend on a mutex,
 * which lockblame profiles in any other program (go_program.sh runs the
 * same source built without the note beside it). Prints the count its
 * threads reached. Built with -DNO_GO_NOTE it carries no note. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#ifndef NO_GO_NOTE
__attribute__((section(".note.go.buildid"), aligned(4), used)) static const struct {
    uint32_t namesz, descsz, type;
    char name[4];
    char desc[8];
} go_note = { 4, 8, 4, "Go", "lbtest00" };
#endif

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long count;

static void *work(void *arg)
{
    for (int i = 0; i < 100000; i++) {
        pthread_mutex_lock(&lock);
        count++;
        pthread_mutex_unlock(&lock);
    }
    return arg;
}

int main(void)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, work, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    printf("count %ld\n", count);
    return 0;
}
