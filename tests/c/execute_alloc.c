/* Heap allocations of nrt_execute through the C API. The program wraps
 * glibc's allocator entry points (the library's allocations resolve to
 * these definitions) and counts every call, on every thread, while the
 * copy example runs repeatedly on the same tensor sets: after warm-up a
 * synchronous execute must allocate nothing (the runtime's hot path and,
 * in deterministic mode, the simulator it runs on the calling thread).
 * The same holds for nrta_execute_schedule with a status to write, up to
 * its completion.
 * Usage: execute_alloc <copy.neff> (run with NEURON_SIM_DETERMINISTIC=1) */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include "check.h"
#include "nrt/nrt_async.h"

#ifdef __GLIBC__
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static atomic_long g_allocs;

void *malloc(size_t n) {
    atomic_fetch_add_explicit(&g_allocs, 1, memory_order_relaxed);
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b) {
    atomic_fetch_add_explicit(&g_allocs, 1, memory_order_relaxed);
    return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n) {
    atomic_fetch_add_explicit(&g_allocs, 1, memory_order_relaxed);
    return __libc_realloc(p, n);
}
void *memalign(size_t align, size_t n) {
    atomic_fetch_add_explicit(&g_allocs, 1, memory_order_relaxed);
    return __libc_memalign(align, n);
}
void *aligned_alloc(size_t align, size_t n) { return memalign(align, n); }
int posix_memalign(void **out, size_t align, size_t n) {
    void *p = memalign(align, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
void free(void *p) { __libc_free(p); }
#endif

#define BYTES (8 * 128 * 4)
#define WARMUP 200
#define RUNS 5000

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s <copy.neff>\n", argv[0]);
        return 2;
    }
#ifndef __GLIBC__
    return skipped("execute_alloc", "needs glibc's __libc_malloc to count allocations");
#else
    size_t size = 0;
    void *neff = read_file(argv[1], &size);
    OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "2.0", ""));
    nrt_model_t *model = NULL;
    OK(nrt_load(neff, size, 0, -1, &model));
    if (!model) return finish("execute_alloc");
    nrt_tensor_t *tin = NULL, *tout = NULL;
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, BYTES, "input", &tin));
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, BYTES, "output", &tout));
    nrt_tensor_set_t *ins = NULL, *outs = NULL;
    OK(nrt_allocate_tensor_set(&ins));
    OK(nrt_allocate_tensor_set(&outs));
    OK(nrt_add_tensor_to_tensor_set(ins, "input", tin));
    OK(nrt_add_tensor_to_tensor_set(outs, "output", tout));
    static float x[BYTES / 4], y[BYTES / 4];
    for (int i = 0; i < BYTES / 4; i++) x[i] = (float)i * 0.5f - 7.0f;
    OK(nrt_tensor_write(tin, x, 0, BYTES));

    for (int i = 0; i < WARMUP; i++) OK(nrt_execute(model, ins, outs));
    long before = atomic_load(&g_allocs);
    int failed = 0;
    for (int i = 0; i < RUNS; i++) failed += nrt_execute(model, ins, outs) != NRT_SUCCESS;
    long sync_allocs = atomic_load(&g_allocs) - before;
    EXPECT(failed == 0);
    printf("sync: %ld heap allocations in %d executes\n", sync_allocs, RUNS);
    EXPECT(sync_allocs == 0);
    OK(nrt_tensor_read(tout, y, 0, BYTES));
    EXPECT(memcmp(x, y, BYTES) == 0);

    /* Explicit async, one request at a time, with a status to write. */
    NRT_STATUS st = NRT_FAILURE;
    nrta_seq_t seq = 0;
    for (int i = 0; i < WARMUP; i++) {
        failed += nrta_execute_schedule(model, ins, outs, 0, &st, &seq) != NRT_SUCCESS;
        bool done = false;
        while (!done) failed += nrta_is_completed(seq, &done) != NRT_SUCCESS;
    }
    before = atomic_load(&g_allocs);
    for (int i = 0; i < RUNS; i++) {
        failed += nrta_execute_schedule(model, ins, outs, 0, &st, &seq) != NRT_SUCCESS;
        bool done = false;
        while (!done) failed += nrta_is_completed(seq, &done) != NRT_SUCCESS;
        failed += st != NRT_SUCCESS;
    }
    long async_allocs = atomic_load(&g_allocs) - before;
    EXPECT(failed == 0);
    printf("async: %ld heap allocations in %d scheduled executions\n", async_allocs, RUNS);
    EXPECT(async_allocs == 0);

    nrt_destroy_tensor_set(&ins);
    nrt_destroy_tensor_set(&outs);
    nrt_tensor_free(&tin);
    nrt_tensor_free(&tout);
    OK(nrt_unload(model));
    nrt_close();
    free(neff);
    return finish("execute_alloc");
#endif
}
