/* The one version string of lockblame: `lockblame --version` prints it and
 * the writer stores it in meta.lockblame_version. Depends on nothing. */
#ifndef LB_COMMON_VERSION_H
#define LB_COMMON_VERSION_H
#define LB_VERSION "0.1.0"
#endif
