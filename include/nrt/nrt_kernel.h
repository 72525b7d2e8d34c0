/*
 * nrt_kernel.h: the GPSIMD custom-op kernel ABI for C kernels compiled to
 * WebAssembly (the C twin of the Rust crate nrt-kernel; the device
 * contract is docs/gpsimd.md).
 *
 * Build (freestanding, no libc):
 *   clang --target=wasm32 -O2 -msimd128 -nostdlib -Wl,--no-entry \
 *         -o kernels.wasm kernels.c
 * then pack it into a library file (nrt-sim's q7::build::library_from_wasm,
 * the same packing `nrt kernel build` does for Rust crates).
 *
 * In exactly one translation unit, define NRT_KERNEL_IMPLEMENTATION before
 * including this header: it provides the TCM pool, the argument parser,
 * the kernel table exports and nrt_printf.
 *
 *   #define NRT_KERNEL_IMPLEMENTATION
 *   #include "nrt/nrt_kernel.h"
 *   NRT_KERNEL(relu) {
 *       nrt_tensor_t x, y;
 *       if (customop_next_tensor(&x) || get_dst_tensor(&y)) return 1;
 *       ...
 *       return 0;
 *   }
 *   NRT_KERNEL_TABLE(relu)
 */
#ifndef NRT_KERNEL_H
#define NRT_KERNEL_H

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- limits (neuron-facts §6) ---- */
#define NRT_MAX_ARGS 10
#define NRT_MAX_RANK 8
#define NRT_MAX_DIM_8D 65535u
#define NRT_TCM_POOL_BYTES (16 * 1024)
#define NRT_ARG_BLOCK_BYTES 576
#define NRT_ARG_DST 10

/* ---- ISA dtype codes (NEURON_ISA_TPB_DTYPE) ---- */
enum {
    NRT_ISA_UINT64 = 1, NRT_ISA_INT8 = 2, NRT_ISA_UINT8 = 3, NRT_ISA_INT16 = 4,
    NRT_ISA_UINT16 = 5, NRT_ISA_BFLOAT16 = 6, NRT_ISA_FP16 = 7, NRT_ISA_INT32 = 8,
    NRT_ISA_UINT32 = 9, NRT_ISA_FP32 = 10, NRT_ISA_FP32R = 11, NRT_ISA_INT64 = 12
};

/* ---- kernel status codes (nonzero = KERNEL_STATUS exception) ---- */
enum {
    NRT_KERNEL_OK = 0, NRT_ERR_NO_MORE_ARGS = 1, NRT_ERR_WRONG_KIND = 2,
    NRT_ERR_DTYPE = 3, NRT_ERR_RANGE = 4, NRT_ERR_NO_DST = 5,
    NRT_ERR_TCM = 6, NRT_ERR_BAD_ARGS = 7, NRT_ERR_SHAPE = 8
};

/* ---- the device imports (module "env") ---- */
#define NRT_IMPORT(name) __attribute__((import_module("env"), import_name(#name)))
NRT_IMPORT(get_cpu_id) int32_t nrt_sys_get_cpu_id(void);
NRT_IMPORT(get_cpu_count) int32_t nrt_sys_get_cpu_count(void);
NRT_IMPORT(arg_block) int32_t nrt_sys_arg_block(void *ptr, int32_t len);
NRT_IMPORT(tensor_read) int32_t nrt_sys_tensor_read(int32_t arg, int64_t off, void *ptr, int32_t len);
NRT_IMPORT(tensor_write) int32_t nrt_sys_tensor_write(int32_t arg, int64_t off, const void *ptr, int32_t len);
NRT_IMPORT(stdio_write) int32_t nrt_sys_stdio_write(int32_t fd, const void *ptr, int32_t len);
NRT_IMPORT(one_value) int32_t nrt_sys_one_value(void);

/* ---- tensors ---- */
typedef struct {
    uint32_t arg;              /* 0..9 positional, 10 = destination */
    uint8_t dtype;             /* ISA dtype code */
    uint32_t rank;             /* 1..8 */
    uint32_t dims[NRT_MAX_RANK];
    uint64_t numel;
} nrt_tensor_t;

static inline uint32_t get_cpu_id(void) { return (uint32_t)nrt_sys_get_cpu_id(); }
static inline uint32_t get_cpu_count(void) {
    int32_t n = nrt_sys_get_cpu_count();
    return n > 0 ? (uint32_t)n : 1u;
}
static inline uint32_t nrt_one_value(void) { return (uint32_t)nrt_sys_one_value(); }

static inline uint64_t nrt_dtype_bytes(uint8_t code) {
    switch (code) {
    case 2: case 3: case 13: case 14: case 15: return 1;
    case 4: case 5: case 6: case 7: return 2;
    case 8: case 9: case 10: case 11: return 4;
    case 1: case 12: return 8;
    default: return 0;
    }
}
static inline uint64_t nrt_tensor_bytes(const nrt_tensor_t *t) { return t->numel * nrt_dtype_bytes(t->dtype); }

/* This core's share [*start, *end) of n elements split over the cores. */
static inline void nrt_my_share(uint64_t n, uint64_t *start, uint64_t *end) {
    uint64_t id = get_cpu_id(), cnt = get_cpu_count(), per = n / cnt, extra = n % cnt;
    *start = id * per + (id < extra ? id : extra);
    *end = *start + per + (id < extra ? 1 : 0);
}

/* ---- the custom-op ABI (seed-siblings §8.2-8.3) ---- */
void customop_setup(int has_return);
int customop_next_tensor(nrt_tensor_t *out);
int customop_next_int(int64_t *out);
int customop_next_float(double *out);
int get_dst_tensor(nrt_tensor_t *out);
int customop_return_tensor(const nrt_tensor_t *t);
void customop_cleanup(void);

/* ---- TCM accessor: flattened element offsets, elem_size from dtype ---- */
static inline int tensor_to_tcm(const nrt_tensor_t *t, void *tcm, uint64_t elem_off, uint64_t n) {
    uint64_t es = nrt_dtype_bytes(t->dtype);
    if (elem_off > t->numel || n > t->numel - elem_off) return NRT_ERR_RANGE;
    nrt_sys_tensor_read((int32_t)t->arg, (int64_t)(elem_off * es), tcm, (int32_t)(n * es));
    return 0;
}
static inline int tcm_to_tensor(const nrt_tensor_t *t, const void *tcm, uint64_t elem_off, uint64_t n) {
    uint64_t es = nrt_dtype_bytes(t->dtype);
    if (elem_off > t->numel || n > t->numel - elem_off) return NRT_ERR_RANGE;
    nrt_sys_tensor_write((int32_t)t->arg, (int64_t)(elem_off * es), tcm, (int32_t)(n * es));
    return 0;
}

/* ---- TCM pool (16 KiB, 64-byte blocks, first fit) ---- */
void *tcm_malloc(size_t size);
void tcm_free(void *ptr);

/* ---- stdio: %d %i %u %x %ld %lu %lld %llu %s %c %f %% ---- */
int nrt_printf(const char *fmt, ...);
#define printf nrt_printf

/* ---- declaring kernels ---- */
#define NRT_KERNEL(name)                                                        \
    static int name##_body(void);                                               \
    __attribute__((export_name(#name))) int nrt_kernel_entry_##name(void) {     \
        customop_setup(1);                                                      \
        int r = name##_body();                                                  \
        customop_cleanup();                                                     \
        return r;                                                               \
    }                                                                           \
    static int name##_body(void)

#define NRT__STR_(x) #x,
#define NRT__FE_1(m, x) m(x)
#define NRT__FE_2(m, x, ...) m(x) NRT__FE_1(m, __VA_ARGS__)
#define NRT__FE_3(m, x, ...) m(x) NRT__FE_2(m, __VA_ARGS__)
#define NRT__FE_4(m, x, ...) m(x) NRT__FE_3(m, __VA_ARGS__)
#define NRT__FE_5(m, x, ...) m(x) NRT__FE_4(m, __VA_ARGS__)
#define NRT__FE_6(m, x, ...) m(x) NRT__FE_5(m, __VA_ARGS__)
#define NRT__FE_7(m, x, ...) m(x) NRT__FE_6(m, __VA_ARGS__)
#define NRT__FE_8(m, x, ...) m(x) NRT__FE_7(m, __VA_ARGS__)
#define NRT__FE_9(m, x, ...) m(x) NRT__FE_8(m, __VA_ARGS__)
#define NRT__FE_10(m, x, ...) m(x) NRT__FE_9(m, __VA_ARGS__)
#define NRT__PICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, N, ...) N
#define NRT__FOR_EACH(m, ...)                                                    \
    NRT__PICK(__VA_ARGS__, NRT__FE_10, NRT__FE_9, NRT__FE_8, NRT__FE_7,          \
              NRT__FE_6, NRT__FE_5, NRT__FE_4, NRT__FE_3, NRT__FE_2, NRT__FE_1)  \
    (m, __VA_ARGS__)

/* Kernel i of the list is registered as {spec i, 0xF0, i} by the packer. */
#define NRT_KERNEL_TABLE(...)                                                    \
    static const char *const nrt__kernel_names[] = {NRT__FOR_EACH(NRT__STR_, __VA_ARGS__)}; \
    __attribute__((export_name("get_func_cnt"))) int32_t get_func_cnt(void) {    \
        return (int32_t)(sizeof nrt__kernel_names / sizeof nrt__kernel_names[0]); \
    }                                                                            \
    __attribute__((export_name("get_func_name"))) int32_t get_func_name(int32_t i) { \
        return (i >= 0 && i < get_func_cnt()) ? (int32_t)(uintptr_t)nrt__kernel_names[i] : 0; \
    }                                                                            \
    __attribute__((export_name("get_func_ptr"))) int32_t get_func_ptr(int32_t i) { \
        return (i >= 0 && i < get_func_cnt()) ? i + 1 : 0;                       \
    }

/* ======================================================================== */
#ifdef NRT_KERNEL_IMPLEMENTATION

#ifndef NRT_KERNEL_HAVE_LIBC
/* Freestanding builds (-nostdlib) need the two functions the compiler
 * emits calls to; define NRT_KERNEL_HAVE_LIBC when linking a libc. The
 * volatile stores keep clang from turning the loops back into calls. */
void *memset(void *dst, int c, size_t n) {
    volatile unsigned char *p = (volatile unsigned char *)dst;
    while (n--) *p++ = (unsigned char)c;
    return dst;
}
void *memcpy(void *dst, const void *src, size_t n) {
    volatile unsigned char *d = (volatile unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    while (n--) *d++ = *s++;
    return dst;
}
#endif

static uint8_t nrt__block[NRT_ARG_BLOCK_BYTES];
static uint32_t nrt__cursor;
static int nrt__ready;

static uint32_t nrt__u32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t nrt__u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static int nrt__parse(uint32_t arg, const uint8_t *d, nrt_tensor_t *t) {
    t->arg = arg;
    t->dtype = d[2];
    if (!nrt_dtype_bytes(t->dtype)) return NRT_ERR_BAD_ARGS;
    for (int i = 0; i < NRT_MAX_RANK; i++) t->dims[i] = 0;
    if (d[1] == 0) {
        for (int i = 0; i < 8; i++) t->dims[i] = nrt__u16(d + 8 + 2 * i);
    } else if (d[1] == 2) {
        for (int i = 0; i < 4; i++) t->dims[i] = nrt__u32(d + 8 + 4 * i);
    } else {
        return NRT_ERR_BAD_ARGS;
    }
    t->rank = 0;
    t->numel = 1;
    while (t->rank < NRT_MAX_RANK && t->dims[t->rank]) t->numel *= t->dims[t->rank++];
    return t->rank ? 0 : NRT_ERR_BAD_ARGS;
}

void customop_setup(int has_return) {
    (void)has_return;
    nrt_sys_arg_block(nrt__block, NRT_ARG_BLOCK_BYTES);
    nrt__cursor = 0;
    nrt__ready = 1;
}

static int nrt__next(nrt_tensor_t *t, int scalar) {
    if (!nrt__ready) return NRT_ERR_BAD_ARGS;
    uint32_t n = nrt__u32(nrt__block);
    if (n > NRT_MAX_ARGS) n = NRT_MAX_ARGS;
    if (nrt__cursor >= n) return NRT_ERR_NO_MORE_ARGS;
    uint8_t kind = nrt__block[0x1E8 + nrt__cursor];
    if (scalar ? (kind != 2 && kind != 3) : kind != 1) return NRT_ERR_WRONG_KIND;
    int r = nrt__parse(nrt__cursor, nrt__block + 8 + 48 * nrt__cursor, t);
    if (!r) nrt__cursor++;
    return r;
}

int customop_next_tensor(nrt_tensor_t *out) { return nrt__next(out, 0); }

static int nrt__scalar(double *out) {
    nrt_tensor_t t;
    int r = nrt__next(&t, 1);
    if (r) return r;
    union { uint8_t b[8]; int64_t i64; uint64_t u64; int32_t i32; uint32_t u32; float f; int16_t i16; uint16_t u16; int8_t i8; uint8_t u8; } v = {{0}};
    nrt_sys_tensor_read((int32_t)t.arg, 0, v.b, (int32_t)nrt_dtype_bytes(t.dtype));
    switch (t.dtype) {
    case 2: *out = v.i8; break;
    case 3: *out = v.u8; break;
    case 4: *out = v.i16; break;
    case 5: *out = v.u16; break;
    case 8: *out = v.i32; break;
    case 9: *out = v.u32; break;
    case 10: case 11: *out = v.f; break;
    case 12: *out = (double)v.i64; break;
    case 1: *out = (double)v.u64; break;
    default: return NRT_ERR_DTYPE;
    }
    return 0;
}

int customop_next_int(int64_t *out) {
    double d;
    int r = nrt__scalar(&d);
    if (!r) *out = (int64_t)d;
    return r;
}

int customop_next_float(double *out) { return nrt__scalar(out); }

int get_dst_tensor(nrt_tensor_t *out) {
    if (!nrt__ready) return NRT_ERR_BAD_ARGS;
    if (nrt__block[0x1F8] != 1) return NRT_ERR_NO_DST;
    return nrt__parse(NRT_ARG_DST, nrt__block + 0x200, out);
}

int customop_return_tensor(const nrt_tensor_t *t) {
    nrt_tensor_t dst;
    int r = get_dst_tensor(&dst);
    if (r) return r;
    if (t->arg == NRT_ARG_DST) return 0;
    if (nrt_tensor_bytes(t) != nrt_tensor_bytes(&dst)) return NRT_ERR_SHAPE;
    if (get_cpu_id() != 0) return 0;
    static uint8_t chunk[1024];
    for (uint64_t off = 0; off < nrt_tensor_bytes(t); off += sizeof chunk) {
        uint64_t n = nrt_tensor_bytes(t) - off;
        if (n > sizeof chunk) n = sizeof chunk;
        nrt_sys_tensor_read((int32_t)t->arg, (int64_t)off, chunk, (int32_t)n);
        nrt_sys_tensor_write(NRT_ARG_DST, (int64_t)off, chunk, (int32_t)n);
    }
    return 0;
}

void customop_cleanup(void) { nrt__ready = 0; }

#define NRT__BLOCKS (NRT_TCM_POOL_BYTES / 64)
static uint8_t nrt__tcm[NRT_TCM_POOL_BYTES] __attribute__((aligned(64)));
static uint16_t nrt__tcm_map[NRT__BLOCKS]; /* 0 free, else run length; 0xFFFF continuation */

void *tcm_malloc(size_t size) {
    if (size == 0 || size > NRT_TCM_POOL_BYTES) return 0;
    size_t need = (size + 63) / 64, i = 0;
    while (i + need <= NRT__BLOCKS) {
        uint16_t m = nrt__tcm_map[i];
        if (m == 0) {
            size_t run = 0;
            while (run < need && nrt__tcm_map[i + run] == 0) run++;
            if (run == need) {
                nrt__tcm_map[i] = (uint16_t)need;
                for (size_t k = 1; k < need; k++) nrt__tcm_map[i + k] = 0xFFFF;
                return nrt__tcm + i * 64;
            }
            i += run;
        } else {
            i += (m == 0xFFFF) ? 1 : m;
        }
    }
    return 0;
}

void tcm_free(void *ptr) {
    uintptr_t a = (uintptr_t)ptr, base = (uintptr_t)nrt__tcm;
    if (!ptr || a < base || a >= base + NRT_TCM_POOL_BYTES || (a - base) % 64) return;
    size_t i = (a - base) / 64;
    uint16_t n = nrt__tcm_map[i];
    if (n == 0 || n == 0xFFFF) return;
    for (size_t k = 0; k < n; k++) nrt__tcm_map[i + k] = 0;
}

typedef struct { char buf[240]; int len; int total; } nrt__out_t;

static void nrt__putc(nrt__out_t *o, char c) {
    o->buf[o->len++] = c;
    o->total++;
    if (o->len == (int)sizeof o->buf || c == '\n') {
        nrt_sys_stdio_write(1, o->buf, o->len);
        o->len = 0;
    }
}

static void nrt__putu(nrt__out_t *o, unsigned long long v, unsigned base) {
    char tmp[24];
    int n = 0;
    do { tmp[n++] = "0123456789abcdef"[v % base]; v /= base; } while (v);
    while (n) nrt__putc(o, tmp[--n]);
}

int nrt_printf(const char *fmt, ...) {
    nrt__out_t o;
    o.len = 0;
    o.total = 0;
    __builtin_va_list ap;
    __builtin_va_start(ap, fmt);
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') { nrt__putc(&o, *p); continue; }
        int longs = 0;
        while (*++p == 'l') longs++;
        switch (*p) {
        case 'd': case 'i': {
            long long v = longs >= 2 ? __builtin_va_arg(ap, long long) : longs ? __builtin_va_arg(ap, long) : __builtin_va_arg(ap, int);
            if (v < 0) { nrt__putc(&o, '-'); v = -v; }
            nrt__putu(&o, (unsigned long long)v, 10);
            break;
        }
        case 'u': case 'x': {
            unsigned long long v = longs >= 2 ? __builtin_va_arg(ap, unsigned long long) : longs ? __builtin_va_arg(ap, unsigned long) : __builtin_va_arg(ap, unsigned);
            nrt__putu(&o, v, *p == 'x' ? 16 : 10);
            break;
        }
        case 'f': {
            double v = __builtin_va_arg(ap, double);
            if (v < 0) { nrt__putc(&o, '-'); v = -v; }
            unsigned long long ip = (unsigned long long)v;
            nrt__putu(&o, ip, 10);
            nrt__putc(&o, '.');
            unsigned long long frac = (unsigned long long)((v - (double)ip) * 1e6 + 0.5);
            for (unsigned long long d = 100000; d; d /= 10) nrt__putc(&o, (char)('0' + frac / d % 10));
            break;
        }
        case 's': { const char *s = __builtin_va_arg(ap, const char *); while (s && *s) nrt__putc(&o, *s++); break; }
        case 'c': nrt__putc(&o, (char)__builtin_va_arg(ap, int)); break;
        case '%': nrt__putc(&o, '%'); break;
        case 0: p--; break;
        default: nrt__putc(&o, '%'); nrt__putc(&o, *p); break;
        }
    }
    __builtin_va_end(ap);
    if (o.len) nrt_sys_stdio_write(1, o.buf, o.len);
    return o.total;
}

#endif /* NRT_KERNEL_IMPLEMENTATION */

#ifdef __cplusplus
}
#endif

#endif /* NRT_KERNEL_H */
