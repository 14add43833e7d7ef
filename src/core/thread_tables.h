/* One block of pages for a thread's tables: the call-site table
 * (blame/sites.h), the context cache (blame/context.c) and the CCT's
 * first chunk (sampler/cct.h), carved from one recycled block
 * (util/pages.h) that core maps when the thread attaches.
 *
 * A fresh page costs a page fault at its first touch, read or write; a
 * thread with few sites and contexts touches each table's first slots
 * only. Those lie on one page, LB_TT_HOT: the site table's 16 front
 * slots (where its first claims go), the context cache's head and the
 * first way of each set, the short walk buffer, and the CCT's first 16
 * nodes. What a busier thread reaches lies around it: the site table's
 * other slots below, the rest of the CCT's chunk and of the cache above.
 *
 * Offsets in bytes from the block's start (page-aligned); each module
 * asserts that its part is the size given here. A module whose thread
 * has no block (mapping refused, a unit test's record) maps its part on
 * its own. The block is given back once the parts that outlive the
 * thread's stop (sites, CCT) are released by their compaction; the
 * context cache is released at the stop, before either. */
#ifndef LB_CORE_THREAD_TABLES_H
#define LB_CORE_THREAD_TABLES_H
#include <stddef.h>

#include "core/thread.h"
#include "util/pages.h"

#define LB_TT_PAGE           4096u
#define LB_TT_SITES          0u     /* the call-site table (528 slots of 24 bytes) */
#define LB_TT_SITES_BYTES    12672u /* its 16 front slots: LB_TT_HOT's first 384 bytes */
#define LB_TT_HOT            12288u /* the page every thread touches */
#define LB_TT_CTX            12672u /* the context cache's head and first ways */
#define LB_TT_CTX_BYTES      1344u
#define LB_TT_PCS            14016u /* the context cache's short walk buffer */
#define LB_TT_PCS_BYTES      256u
#define LB_TT_CCT            14272u /* the CCT's first chunk: nodes 0-15 on LB_TT_HOT */
#define LB_TT_CCT_BYTES      8192u
#define LB_TT_CTX_COLD       22464u /* the context cache's long walk buffer and other ways */
#define LB_TT_CTX_COLD_BYTES 5888u
#define LB_TT_BYTES          28352u

/* The parts that hold the block (t->tables_parts). */
#define LB_TT_PART_SITES 1u
#define LB_TT_PART_CCT   2u

_Static_assert(LB_TT_SITES + LB_TT_SITES_BYTES == LB_TT_CTX && LB_TT_CTX > LB_TT_HOT &&
                   LB_TT_CTX + LB_TT_CTX_BYTES == LB_TT_PCS &&
                   LB_TT_PCS + LB_TT_PCS_BYTES == LB_TT_CCT &&
                   LB_TT_CCT + LB_TT_CCT_BYTES == LB_TT_CTX_COLD &&
                   LB_TT_CTX_COLD + LB_TT_CTX_COLD_BYTES == LB_TT_BYTES &&
                   LB_TT_HOT % LB_TT_PAGE == 0,
               "the thread tables' parts lie one after another");

/* A block just taken for a thread (NULL: none): its hot page written
 * before the thread's first look-ups read it (lb_pages_write_first). */
static inline void lb_thread_tables_write_first(void *tables)
{
    if (tables)
        lb_pages_write_first((char *)tables + LB_TT_HOT, LB_TT_PAGE);
}

/* Part `part` of t's block at byte offset `off`, now held by that part;
 * NULL when t has no block. */
static inline void *lb_thread_tables_take(lb_thread_t *t, unsigned part, size_t off)
{
    if (!t->tables)
        return NULL;
    t->tables_parts |= part;
    return (char *)t->tables + off;
}

/* The block's pages that bytes [off, off + len) lie on, as
 * t->tables_dirty bits (len > 0). */
static inline uint32_t lb_thread_tables_pages(size_t off, size_t len)
{
    uint32_t first = (uint32_t)(off / LB_TT_PAGE), last = (uint32_t)((off + len - 1) / LB_TT_PAGE);
    return (uint32_t)((2u << last) - (1u << first));
}

/* A part of t's block wrote the pages `dirty` names (lb_thread_tables_pages):
 * the block's next owner zeroes only the pages some part wrote. */
static inline void lb_thread_tables_wrote(lb_thread_t *t, uint32_t dirty)
{
    t->tables_dirty |= dirty;
}

/* t's part `part` no longer uses the block: the last one gives it back. */
static inline void lb_thread_tables_release(lb_thread_t *t, unsigned part)
{
    if (!(t->tables_parts & part))
        return;
    t->tables_parts &= ~part;
    if (t->tables_parts == 0) {
        lb_pages_free_recycled_dirty(t->tables, LB_TT_BYTES, t->tables_dirty);
        t->tables = NULL;
    }
}

/* The context cache's parts of t's block (not held: the cache is
 * released at the thread's stop, while the others still hold it); NULL
 * when t has no block. */
static inline void *lb_thread_tables_at(const lb_thread_t *t, size_t off)
{
    return t->tables ? (char *)t->tables + off : NULL;
}
#endif
