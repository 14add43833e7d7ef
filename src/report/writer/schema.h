/* The DDL of docs/SCHEMA.md, version 2. Change both together. */
#ifndef LB_SCHEMA_H
#define LB_SCHEMA_H
#define LB_SCHEMA_VERSION 2
extern const char lb_schema_sql[];
#endif
