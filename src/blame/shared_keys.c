/* The keys of process-shared objects (contract and invariants in
 * shared_keys.h). */
#include "blame/shared_keys.h"

#include "util/common.h"
#include "util/meta_lock.h"

#define LB_SHARED_RANGES 64u /* a program's shared file mappings at once; more keep address keys */

typedef struct file_range {
    uint32_t seq;         /* odd while the range changes */
    uintptr_t start, end; /* end 0: a free range */
    uint64_t file, ino, offset;
} file_range_t;

static file_range_t ranges[LB_SHARED_RANGES];
/* a fork child's mappings add ranges: on the pages it writes anyway
 * (util/common.h) */
static uint32_t ranges_used LB_FORK_WRITTEN; /* high-water mark */
static lb_meta_lock_t ranges_lock LB_FORK_WRITTEN = LB_META_LOCK_INIT;

/* Under ranges_lock: r's fields change between the two counts. */
static void range_write(file_range_t *r, uintptr_t start, uintptr_t end, uint64_t file,
                        uint64_t ino, uint64_t offset)
{
    __atomic_store_n(&r->seq, r->seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&r->start, start, __ATOMIC_RELAXED);
    __atomic_store_n(&r->end, end, __ATOMIC_RELAXED);
    __atomic_store_n(&r->file, file, __ATOMIC_RELAXED);
    __atomic_store_n(&r->ino, ino, __ATOMIC_RELAXED);
    __atomic_store_n(&r->offset, offset, __ATOMIC_RELAXED);
    __atomic_store_n(&r->seq, r->seq + 1, __ATOMIC_RELEASE);
}

/* Under ranges_lock: the ranges [start, end) overlaps are freed. */
static void forget_overlapping(uintptr_t start, uintptr_t end)
{
    for (uint32_t i = 0; i < ranges_used; i++) {
        file_range_t *r = &ranges[i];
        if (r->end && r->start < end && start < r->end)
            range_write(r, 0, 0, 0, 0, 0);
    }
}

void lb_shared_keys_add(void *addr, size_t len, dev_t dev, ino_t ino, off_t off)
{
    uintptr_t start = (uintptr_t)addr, end = start + len;
    lb_meta_lock(&ranges_lock);
    forget_overlapping(start, end); /* MAP_FIXED replaced them */
    uint32_t i = 0;
    while (i < ranges_used && ranges[i].end)
        i++;
    if (i < LB_SHARED_RANGES) {
        range_write(&ranges[i], start, end, (uint64_t)dev + 1, (uint64_t)ino, (uint64_t)off);
        if (i == ranges_used)
            __atomic_store_n(&ranges_used, i + 1, __ATOMIC_RELEASE);
    }
    lb_meta_unlock(&ranges_lock);
}

void lb_shared_keys_unmapped(void *addr, size_t len)
{
    uintptr_t start = (uintptr_t)addr;
    bool overlaps = false; /* (lockblame's own unmappings never do: no lock for them) */
    uint32_t used = __atomic_load_n(&ranges_used, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < used && !overlaps; i++) {
        uintptr_t end = __atomic_load_n(&ranges[i].end, __ATOMIC_RELAXED);
        overlaps =
            end && __atomic_load_n(&ranges[i].start, __ATOMIC_RELAXED) < start + len && start < end;
    }
    if (!overlaps)
        return;
    lb_meta_lock(&ranges_lock);
    forget_overlapping(start, start + len);
    lb_meta_unlock(&ranges_lock);
}

lb_shared_key_t lb_shared_key_of(const void *obj)
{
    uintptr_t a = (uintptr_t)obj;
    uint32_t used = __atomic_load_n(&ranges_used, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < used; i++) {
        file_range_t *r = &ranges[i];
        for (;;) {
            uint32_t seq = __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE);
            uintptr_t start = __atomic_load_n(&r->start, __ATOMIC_RELAXED);
            uintptr_t end = __atomic_load_n(&r->end, __ATOMIC_RELAXED);
            lb_shared_key_t key = { __atomic_load_n(&r->file, __ATOMIC_RELAXED),
                                    __atomic_load_n(&r->ino, __ATOMIC_RELAXED),
                                    __atomic_load_n(&r->offset, __ATOMIC_RELAXED) };
            __atomic_thread_fence(__ATOMIC_ACQUIRE);
            if ((seq & 1) || __atomic_load_n(&r->seq, __ATOMIC_RELAXED) != seq)
                continue; /* changing: read it again */
            if (a >= start && a < end) {
                key.at += a - start;
                return key;
            }
            break;
        }
    }
    return (lb_shared_key_t){ .at = a };
}
