/* A GPSIMD kernel in C: relu over an fp32 tensor, split across the Q7
 * cores, through the TCM accessor; core 0 prints a line.
 *   clang --target=wasm32 -O2 -msimd128 -nostdlib -Wl,--no-entry \
 *         -I include -o relu_c.wasm crates/nrt-kernel/kernels/c/relu.c
 */
#define NRT_KERNEL_IMPLEMENTATION
#include "nrt/nrt_kernel.h"

NRT_KERNEL(relu_c) {
    nrt_tensor_t x, y;
    int r = customop_next_tensor(&x);
    if (r) return r;
    if ((r = get_dst_tensor(&y))) return r;
    uint64_t s, e;
    nrt_my_share(x.numel, &s, &e);
    float *buf = tcm_malloc(1024 * sizeof(float));
    if (!buf) return NRT_ERR_TCM;
    for (uint64_t at = s; at < e;) {
        uint64_t n = e - at < 1024 ? e - at : 1024;
        tensor_to_tcm(&x, buf, at, n);
        for (uint64_t i = 0; i < n; i++) buf[i] = buf[i] > 0 ? buf[i] : 0;
        tcm_to_tensor(&y, buf, at, n);
        at += n;
    }
    tcm_free(buf);
    if (get_cpu_id() == 0) printf("relu_c: %lu elements, %d%% done, x=%f\n", (unsigned long)x.numel, 100, 1.5);
    return 0;
}

NRT_KERNEL_TABLE(relu_c)
