/* Loads the plugin named on its command line, runs it, and unloads it
 * before exiting, as 7-Zip does with 7z.so (tests/integration/dlclose_names.sh). */
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    void (*run)(void) = (void (*)(void))dlsym(h, "plugin_run");
    run();
    return dlclose(h);
}
