/* The DDL of docs/SCHEMA.md, version LB_SCHEMA_VERSION (common/schema.h).
 * Change both together. */
#ifndef LB_SCHEMA_H
#define LB_SCHEMA_H
#include "common/schema.h"
extern const char lb_schema_sql[];
#endif
