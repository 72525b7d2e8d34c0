/* The rest of include/nrt/nrt_kernel.h, exercised from C: scalar
 * arguments, customop_return_tensor, the argument errors, the TCM pool's
 * limits, every nrt_printf conversion, the dtype sizes, one_value and a
 * kernel returning a failure. Kernel i of the table is spec i.
 *   clang --target=wasm32 -O2 -msimd128 -nostdlib -Wl,--no-entry \
 *         -I include -o sdk.wasm crates/nrt-kernel/kernels/c/sdk.c
 */
#define NRT_KERNEL_IMPLEMENTATION
#include "nrt/nrt_kernel.h"

/* y = x * k + f: a tensor, an int scalar and a float scalar, split over
 * the cores through the TCM accessor. */
NRT_KERNEL(scale_add) {
    nrt_tensor_t x, y;
    int64_t k;
    double f;
    int r;
    if ((r = customop_next_tensor(&x)) || (r = customop_next_int(&k)) || (r = customop_next_float(&f))) return r;
    if ((r = get_dst_tensor(&y))) return r;
    if (x.dtype != NRT_ISA_FP32 || y.numel != x.numel) return NRT_ERR_SHAPE;
    uint64_t s, e;
    nrt_my_share(x.numel, &s, &e);
    float *buf = tcm_malloc(256 * sizeof(float));
    if (!buf) return NRT_ERR_TCM;
    for (uint64_t at = s; at < e;) {
        uint64_t n = e - at < 256 ? e - at : 256;
        if ((r = tensor_to_tcm(&x, buf, at, n))) return r;
        for (uint64_t i = 0; i < n; i++) buf[i] = buf[i] * (float)k + (float)f;
        if ((r = tcm_to_tensor(&y, buf, at, n))) return r;
        at += n;
    }
    tcm_free(buf);
    return 0;
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
