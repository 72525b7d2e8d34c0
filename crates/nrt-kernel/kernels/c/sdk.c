/* The rest of include/nrt/nrt_kernel.h, exercised from C: scalar
 * arguments, customop_return_tensor, the argument errors, the TCM pool's
 * limits, every nrt_printf conversion, the dtype sizes, one_value and a
 * kernel returning a failure. Kernel i of the table is spec i.
 *   clang --target=wasm32 -O2 -msimd128 -nostdlib -Wl,--no-entry \
 *         -I include -o sdk.wasm crates/nrt-kernel/kernels/c/sdk.c
 */
#define NRT_KERNEL_IMPLEMENTATION
#include "nrt/nrt_kernel.h"

/* y = x * k + f: a tensor, an int scalar and a float scalar; chunks dealt
 * over the cores, moved through the TCM accessor. */
NRT_KERNEL(scale_add) {
    nrt_tensor_t x, y;
    int64_t k;
    double f;
    int r;
    if ((r = customop_next_tensor(&x)) || (r = customop_next_int(&k)) || (r = customop_next_float(&f))) return r;
    if ((r = get_dst_tensor(&y))) return r;
    if (x.dtype != NRT_ISA_FP32 || y.numel != x.numel) return NRT_ERR_SHAPE;
    /* Chunks of 256 elements dealt round-robin over the cores. */
    enum { CHUNK = 256 };
    float *buf = tcm_malloc(CHUNK * sizeof(float));
    if (!buf) return NRT_ERR_TCM;
    uint64_t chunks = (x.numel + CHUNK - 1) / CHUNK;
    for (uint64_t c = get_cpu_id(); c < chunks && !r; c += get_cpu_count()) {
        uint64_t at = c * CHUNK, n = x.numel - at < CHUNK ? x.numel - at : CHUNK;
        r = tensor_to_tcm(&x, buf, at, n);
        for (uint64_t i = 0; i < n && !r; i++) buf[i] = buf[i] * (float)k + (float)f;
        if (!r) r = tcm_to_tensor(&y, buf, at, n);
    }
    tcm_free(buf);
    return r;
}

/* The destination gets the first argument's bytes (any dtype). */
NRT_KERNEL(copy_back) {
    nrt_tensor_t x;
    int r = customop_next_tensor(&x);
    return r ? r : customop_return_tensor(&x);
}

/* Core 0 prints what the SDK answers for the cases a test can only see
 * from inside a kernel; the block holds one tensor and no destination. */
NRT_KERNEL(probe) {
    nrt_tensor_t t;
    int64_t i;
    int kind = customop_next_int(&i);     /* a tensor, not a scalar */
    int first = customop_next_tensor(&t); /* the cursor did not move */
    int end = customop_next_tensor(&t);   /* no more arguments */
    int dst = get_dst_tensor(&t);         /* none given */
    int ret = customop_return_tensor(&t);
    int range = tensor_to_tcm(&t, 0, t.numel, 1);
    void *all = tcm_malloc(NRT_TCM_POOL_BYTES);
    void *more = tcm_malloc(64);
    void *zero = tcm_malloc(0);
    tcm_free(all);
    void *again = tcm_malloc(64);
    tcm_free(again);
    char sizes[18];
    for (int c = 0; c < 17; c++) sizes[c] = (char)('0' + nrt_dtype_bytes((uint8_t)c));
    sizes[17] = 0;
    if (get_cpu_id() == 0) {
        printf("probe: kind=%d first=%d end=%d dst=%d ret=%d range=%d tcm=%d%d%d%d cores=%u one=%u sizes=%s\n", kind, first, end,
               dst, ret, range, all != 0, more != 0, zero != 0, again == all, get_cpu_count(), nrt_one_value(), sizes);
        printf("fmt: %d|%i|%u|%x|%ld|%lu|%lld|%llu|%s|%c|%f|%%|%q\n", -7, 42, 42u, 255u, -5l, 4000000000ul, -5000000000ll,
               18446744073709551615ull, "str", 'c', -1.25);
    }
    return 0;
}

/* A kernel reporting an error status: a KERNEL_STATUS exception. */
NRT_KERNEL(fails) { return NRT_ERR_SHAPE; }

NRT_KERNEL_TABLE(scale_add, copy_back, probe, fails)
