/* The database contract shared by the writer (library) and the CLI: the
 * schema version and the table names of docs/SCHEMA.md. The writer's DDL
 * (report/writer/schema.c) and the CLI's loader (report/cli/load.c) both
 * follow it; change them and docs/SCHEMA.md together. Depends on nothing.
 *
 * Version history: 1 = first release; 2 added metric.idle_undirected_s.
 * The CLI reads every version up to LB_SCHEMA_VERSION. */
#ifndef LB_COMMON_SCHEMA_H
#define LB_COMMON_SCHEMA_H
#define LB_SCHEMA_VERSION 2

#define LB_TABLE_META "meta"
#define LB_TABLE_RUN "run"
#define LB_TABLE_MODULE "module"
#define LB_TABLE_FRAME "frame"
#define LB_TABLE_NODE "node"
#define LB_TABLE_THREAD "thread"
#define LB_TABLE_METRIC "metric"
#define LB_TABLE_SITE "site"
#define LB_TABLE_SYNC_OBJECT "sync_object"
#define LB_TABLE_OBJECT_BLAME "object_blame"
#endif
