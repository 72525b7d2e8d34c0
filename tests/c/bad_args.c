/* Bad arguments, table-driven: every export of nrt.h, nrt_async.h,
 * nrt_experimental.h, nrt_status.h, nrt_version.h, nrt_profile.h,
 * nrt_sys_trace.h, nrt_async_sendrecv.h, nec.h and ndebug_stream.h called with NULL
 * pointers, out-of-range values, in the wrong lifecycle state, with stale
 * (freed or unloaded) handles, foreign pointers and wrong struct sizes.
 * Each row names the function, what is wrong and the status the call must
 * return; nothing may crash, and a refused call must leave its output
 * untouched (checked where the function has one).
 *
 * Rows register themselves (a constructor per CASE) and run in source
 * order within their phase: before nrt_init, while initialised (with a
 * loaded model, live and stale handles), and after nrt_close.
 * `bad_args --list` prints the functions the table covers, one per line;
 * the Rust driver checks that list against the headers.
 *
 * Usage: bad_args COPY.neff | bad_args --list */
#include "check.h"
#include "nrt/nrt_async.h"
#include "nrt/nrt_experimental.h"
#include "nrt/nrt_version.h"
#include "nrt/nrt_profile.h"
#include "nrt/nrt_sys_trace.h"
#include "nrt/nrt_async_sendrecv.h"
#include "nrt/nec.h"
#include "nrt/ndebug_stream.h"
#include <stdint.h>
#include <unistd.h>
#include <sys/eventfd.h>

enum phase { BEFORE_INIT, LIVE, AFTER_CLOSE };

typedef NRT_STATUS (*case_fn)(void);
struct row {
    const char *fn;
    const char *what;
    enum phase phase;
    NRT_STATUS want;
    case_fn call;
    int line;
};

#define MAX_ROWS 512
static struct row g_rows[MAX_ROWS];
static int g_nrows;

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
/* CASE(phase, function, what is wrong, expected status) { body returning a status } */
#define CASE(ph, fn_, what_, want_)                                                         \
    static NRT_STATUS CAT(case_, __LINE__)(void);                                           \
    __attribute__((constructor)) static void CAT(reg_, __LINE__)(void) {                    \
        if (g_nrows < MAX_ROWS)                                                             \
            g_rows[g_nrows++] = (struct row){#fn_, what_, ph, want_, CAT(case_, __LINE__), __LINE__}; \
    }                                                                                       \
    static NRT_STATUS CAT(case_, __LINE__)(void)

/* Fixtures of the LIVE phase, made before its rows run. */
static void *g_neff;
static size_t g_neff_size;
static nrt_model_t *g_model;        /* loaded copy example */
static nrt_model_t *g_stale_model;  /* loaded, then unloaded */
static nrt_tensor_t *g_tensor;      /* live 4 KiB device tensor */
static nrt_tensor_t *g_stale_tensor;
static nrt_tensor_set_t *g_set;     /* live, empty */
static nrt_tensor_set_t *g_stale_set;
static nrt_sys_trace_config_t *g_trace_cfg;        /* live */
static nrt_sys_trace_config_t *g_stale_trace_cfg;  /* freed */
static nrt_sys_trace_fetch_options_t *g_fetch_opts;
static nrt_sys_trace_fetch_options_t *g_stale_fetch_opts;
static nrt_inspect_config_t *g_inspect_cfg;
static nrt_inspect_config_t *g_stale_inspect_cfg;
static nrt_profile_continuous_options_t *g_cont_opts;
static nrt_profile_continuous_options_t *g_stale_cont_opts;
static int g_foreign[4];            /* an address no handle ever had */
#define FOREIGN ((void *)g_foreign)
#define UNTOUCHED ((void *)0x5a5a)
static char g_buf[8192];

/* An output pointer the call must leave alone. */
#define KEEPS(call, out) ((call) == NRT_SUCCESS ? NRT_SUCCESS : ((void *)(out) == UNTOUCHED ? (call) : NRT_FAILURE))

/* ---- before nrt_init ---------------------------------------------------- */
CASE(BEFORE_INIT, nrt_get_total_vnc_count, "NULL output", NRT_INVALID) { return nrt_get_total_vnc_count(NULL); }
CASE(BEFORE_INIT, nrt_get_total_nc_count, "NULL output", NRT_INVALID) { return nrt_get_total_nc_count(NULL); }
CASE(BEFORE_INIT, nrt_get_visible_vnc_count, "NULL output", NRT_INVALID) { return nrt_get_visible_vnc_count(NULL); }
CASE(BEFORE_INIT, nrt_get_visible_nc_count, "NULL output", NRT_INVALID) { return nrt_get_visible_nc_count(NULL); }
CASE(BEFORE_INIT, nrt_get_instance_info, "NULL info", NRT_INVALID) { return nrt_get_instance_info(NULL, sizeof(nrt_instance_info_t)); }
CASE(BEFORE_INIT, nrt_get_version, "NULL version", NRT_INVALID) { return nrt_get_version(NULL, sizeof(nrt_version_t)); }
CASE(BEFORE_INIT, nrt_get_status_as_str, "unknown status", NRT_SUCCESS) {
    const char *s = nrt_get_status_as_str((NRT_STATUS)-7);
    return s != NULL && s[0] != 0 ? NRT_SUCCESS : NRT_FAILURE;
}
CASE(BEFORE_INIT, nrt_init, "framework type 0 (INVALID)", NRT_INVALID) { return nrt_init(NRT_FRAMEWORK_TYPE_INVALID, "", ""); }
CASE(BEFORE_INIT, nrt_init, "framework type out of range", NRT_INVALID) { return nrt_init((nrt_framework_type_t)77, NULL, NULL); }
CASE(BEFORE_INIT, nrt_close, "before init (only logs)", NRT_SUCCESS) { nrt_close(); return NRT_SUCCESS; }
CASE(BEFORE_INIT, nrt_load, "before init", NRT_UNINITIALIZED) {
    nrt_model_t *m = UNTOUCHED;
    return KEEPS(nrt_load(g_buf, 16, -1, -1, &m), m);
}
CASE(BEFORE_INIT, nrt_load_collectives, "before init", NRT_UNINITIALIZED) {
    nrt_model_t *m = UNTOUCHED;
    return KEEPS(nrt_load_collectives(g_buf, 16, 0, 1, 0, 1, &m), m);
}
CASE(BEFORE_INIT, nrt_unload, "before init", NRT_UNINITIALIZED) { return nrt_unload(FOREIGN); }
CASE(BEFORE_INIT, nrt_tensor_allocate, "before init", NRT_UNINITIALIZED) {
    nrt_tensor_t *t = UNTOUCHED;
    return KEEPS(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64, "t", &t), t);
}
CASE(BEFORE_INIT, nrt_allocate_tensor_set, "before init", NRT_UNINITIALIZED) {
    nrt_tensor_set_t *s = UNTOUCHED;
    return KEEPS(nrt_allocate_tensor_set(&s), s);
}
CASE(BEFORE_INIT, nrt_execute, "before init", NRT_UNINITIALIZED) { return nrt_execute(FOREIGN, FOREIGN, FOREIGN); }
CASE(BEFORE_INIT, nrt_barrier, "before init", NRT_UNINITIALIZED) { return nrt_barrier(0, 0, 1); }
CASE(BEFORE_INIT, nrt_async_sendrecv_init, "before init", NRT_UNINITIALIZED) { return nrt_async_sendrecv_init(0); }
CASE(BEFORE_INIT, nrt_build_global_comm, "before init", NRT_UNINITIALIZED) { return nrt_build_global_comm(0, 0, 1); }
CASE(BEFORE_INIT, nrt_cc_global_comm_init, "before init", NRT_UNINITIALIZED) { return nrt_cc_global_comm_init(0, 0, 1); }
CASE(BEFORE_INIT, nrt_debug_client_connect, "before init", NRT_UNINITIALIZED) {
    int fd = 0x5a5a;
    NRT_STATUS r = nrt_debug_client_connect(0, &fd);
    return fd == 0x5a5a ? r : NRT_FAILURE;
}
CASE(BEFORE_INIT, nrt_debug_client_read_one_event, "before init", NRT_UNINITIALIZED) {
    ndebug_stream_event_header_t h;
    void *p = UNTOUCHED;
    return KEEPS(nrt_debug_client_read_one_event(3, &h, &p), p);
}
CASE(BEFORE_INIT, nrt_debug_client_connect_close, "before init (only logs)", NRT_SUCCESS) {
    nrt_debug_client_connect_close(3);
    return NRT_SUCCESS;
}
CASE(BEFORE_INIT, nrt_set_pool_eng_ucode, "NULL ucode", NRT_INVALID) { return nrt_set_pool_eng_ucode(NULL); }
CASE(BEFORE_INIT, nrt_set_pool_eng_ucode, "NULL image with a size", NRT_INVALID) {
    nrt_ucode_info bad = {{NULL, 4}, {NULL, 0}};
    return nrt_set_pool_eng_ucode(&bad);
}
CASE(BEFORE_INIT, nrta_get_sequence, "before init", NRT_UNINITIALIZED) {
    nrta_seq_t s = 77;
    NRT_STATUS r = nrta_get_sequence(0, NRTA_XU_COMPUTE, 0, &s);
    return s == 77 ? r : NRT_FAILURE;
}
CASE(BEFORE_INIT, nrt_get_vnc_memory_stats, "before init", NRT_UNINITIALIZED) {
    nrt_vnc_memory_stats_t st;
    size_t out = 0;
    return nrt_get_vnc_memory_stats(0, &st, sizeof st, &out);
}
CASE(BEFORE_INIT, nrt_memcpy_to_device, "before init", NRT_UNINITIALIZED) { return nrt_memcpy_to_device(g_buf, g_buf, 4); }
CASE(BEFORE_INIT, nrt_get_dmabuf_fd, "before init", NRT_UNINITIALIZED) {
    int fd = -77;
    NRT_STATUS r = nrt_get_dmabuf_fd(0x1000, 4096, &fd);
    return fd == -77 ? r : NRT_INVALID;
}
CASE(BEFORE_INIT, nrt_host_device_id_rid_map_get, "before init", NRT_UNINITIALIZED) {
    uint32_t count = 4, map[4] = {77, 77, 77, 77};
    NRT_STATUS r = nrt_host_device_id_rid_map_get(&count, map);
    return count == 4 && map[0] == 77 ? r : NRT_INVALID;
}
CASE(BEFORE_INIT, nrt_get_hbm_mmap_va, "before init", NRT_UNINITIALIZED) {
    void *va = UNTOUCHED;
    size_t size = 77;
    NRT_STATUS r = nrt_get_hbm_mmap_va(0, 0, &va, &size);
    return va == UNTOUCHED && size == 77 ? r : NRT_INVALID;
}
CASE(BEFORE_INIT, nrt_get_attached_efa_bdf, "before init", NRT_UNINITIALIZED) {
    char bdf[32] = {0};
    size_t len = sizeof bdf;
    NRT_STATUS r = nrt_get_attached_efa_bdf(g_buf, bdf, &len);
    return bdf[0] == 0 && len == sizeof bdf ? r : NRT_INVALID;
}
CASE(BEFORE_INIT, nrt_async_drain_queued_execs, "before init", NRT_UNINITIALIZED) { return nrt_async_drain_queued_execs(0); }

/* ---- while initialised -------------------------------------------------- */
/* lifecycle and counts */
CASE(LIVE, nrt_init, "second init (idempotent)", NRT_SUCCESS) { return nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""); }
CASE(LIVE, nrt_get_instance_info, "struct size 0 (an older, empty struct: nothing written)", NRT_SUCCESS) {
    nrt_instance_info_t info;
    memset(&info, 0x5a, sizeof info);
    NRT_STATUS r = nrt_get_instance_info(&info, 0);
    return ((unsigned char *)&info)[0] == 0x5a ? r : NRT_FAILURE;
}
CASE(LIVE, nrt_get_version, "struct size 0 (nothing written)", NRT_SUCCESS) {
    nrt_version_t v;
    memset(&v, 0x5a, sizeof v);
    NRT_STATUS r = nrt_get_version(&v, 0);
    return ((unsigned char *)&v)[0] == 0x5a ? r : NRT_FAILURE;
}
/* load / unload */
CASE(LIVE, nrt_load, "NULL bytes", NRT_INVALID) {
    nrt_model_t *m = UNTOUCHED;
    return KEEPS(nrt_load(NULL, 64, -1, -1, &m), m);
}
CASE(LIVE, nrt_load, "size 0", NRT_INVALID) {
    nrt_model_t *m = UNTOUCHED;
    return KEEPS(nrt_load(g_neff, 0, -1, -1, &m), m);
}
CASE(LIVE, nrt_load, "NULL model output", NRT_INVALID) { return nrt_load(g_neff, g_neff_size, -1, -1, NULL); }
CASE(LIVE, nrt_load, "garbage bytes", NRT_INVALID) {
    nrt_model_t *m = UNTOUCHED;
    return KEEPS(nrt_load(g_buf, 4096, -1, -1, &m), m);
}
CASE(LIVE, nrt_load, "truncated NEFF", NRT_INVALID) {
    nrt_model_t *m = UNTOUCHED;
    return KEEPS(nrt_load(g_neff, g_neff_size / 2, -1, -1, &m), m);
}
CASE(LIVE, nrt_load, "logical core out of range", NRT_INVALID) {
    nrt_model_t *m = UNTOUCHED;
    return KEEPS(nrt_load(g_neff, g_neff_size, 99, -1, &m), m);
}
CASE(LIVE, nrt_load, "negative logical core below -1", NRT_INVALID) {
    nrt_model_t *m = UNTOUCHED;
    return KEEPS(nrt_load(g_neff, g_neff_size, -5, -1, &m), m);
}
CASE(LIVE, nrt_load_collectives, "NULL model output", NRT_INVALID) {
    return nrt_load_collectives(g_neff, g_neff_size, 0, 1, 0, 1, NULL);
}
CASE(LIVE, nrt_load_collectives, "rank id past the world size", NRT_INVALID) {
    nrt_model_t *m = UNTOUCHED;
    return KEEPS(nrt_load_collectives(g_neff, g_neff_size, 0, 1, 5, 1, &m), m);
}
CASE(LIVE, nrt_unload, "NULL model", NRT_INVALID) { return nrt_unload(NULL); }
CASE(LIVE, nrt_unload, "stale model", NRT_INVALID_HANDLE) { return nrt_unload(g_stale_model); }
CASE(LIVE, nrt_unload, "foreign pointer", NRT_INVALID_HANDLE) { return nrt_unload(FOREIGN); }
CASE(LIVE, nrt_get_model_nc_count, "NULL output", NRT_INVALID) { return nrt_get_model_nc_count(g_model, NULL); }
CASE(LIVE, nrt_get_model_nc_count, "stale model", NRT_INVALID_HANDLE) {
    uint32_t n = 77;
    NRT_STATUS r = nrt_get_model_nc_count(g_stale_model, &n);
    return n == 77 ? r : NRT_FAILURE;
}
CASE(LIVE, nrt_get_model_vnc_count, "NULL output", NRT_INVALID) { return nrt_get_model_vnc_count(g_model, NULL); }
CASE(LIVE, nrt_get_model_vnc_count, "foreign model", NRT_INVALID_HANDLE) {
    uint32_t n = 77;
    NRT_STATUS r = nrt_get_model_vnc_count(FOREIGN, &n);
    return n == 77 ? r : NRT_FAILURE;
}
CASE(LIVE, nrt_get_model_info, "NULL info", NRT_INVALID) {
    size_t out = 0;
    return nrt_get_model_info(g_model, NULL, sizeof(nrt_model_info_t), &out);
}
CASE(LIVE, nrt_get_model_info, "stale model", NRT_INVALID_HANDLE) {
    nrt_model_info_t info;
    size_t out = 0;
    return nrt_get_model_info(g_stale_model, &info, sizeof info, &out);
}
CASE(LIVE, nrt_get_model_tensor_info, "NULL output", NRT_INVALID) { return nrt_get_model_tensor_info(g_model, NULL); }
CASE(LIVE, nrt_get_model_tensor_info, "stale model", NRT_INVALID_HANDLE) {
    nrt_tensor_info_array_t *a = UNTOUCHED;
    return KEEPS(nrt_get_model_tensor_info(g_stale_model, &a), a);
}
CASE(LIVE, nrt_free_model_tensor_info, "NULL array", NRT_INVALID) { return nrt_free_model_tensor_info(NULL); }
CASE(LIVE, nrt_free_model_tensor_info, "foreign array", NRT_INVALID_HANDLE) { return nrt_free_model_tensor_info(FOREIGN); }
CASE(LIVE, nrt_free_model_tensor_info, "freed twice", NRT_INVALID_HANDLE) {
    nrt_tensor_info_array_t *a = NULL;
    if (nrt_get_model_tensor_info(g_model, &a) != NRT_SUCCESS || nrt_free_model_tensor_info(a) != NRT_SUCCESS)
        return NRT_FAILURE;
    return nrt_free_model_tensor_info(a);
}
CASE(LIVE, nrt_get_model_instance_count, "NULL output", NRT_INVALID) { return nrt_get_model_instance_count(g_model, NULL); }
CASE(LIVE, nrt_get_model_instance_count, "stale model", NRT_INVALID_HANDLE) {
    uint32_t n = 77;
    NRT_STATUS r = nrt_get_model_instance_count(g_stale_model, &n);
    return n == 77 ? r : NRT_FAILURE;
}
/* tensors */
CASE(LIVE, nrt_tensor_allocate, "NULL output", NRT_INVALID) { return nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64, "t", NULL); }
CASE(LIVE, nrt_tensor_allocate, "size 0", NRT_INVALID) {
    nrt_tensor_t *t = UNTOUCHED;
    return KEEPS(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 0, "t", &t), t);
}
CASE(LIVE, nrt_tensor_allocate, "unknown placement", NRT_INVALID) {
    nrt_tensor_t *t = UNTOUCHED;
    return KEEPS(nrt_tensor_allocate((nrt_tensor_placement_t)9, 0, 64, "t", &t), t);
}
CASE(LIVE, nrt_tensor_allocate, "logical core out of range", NRT_INVALID) {
    nrt_tensor_t *t = UNTOUCHED;
    return KEEPS(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 99, 64, "t", &t), t);
}
CASE(LIVE, nrt_tensor_allocate, "negative logical core", NRT_INVALID) {
    nrt_tensor_t *t = UNTOUCHED;
    return KEEPS(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, -3, 64, "t", &t), t);
}
CASE(LIVE, nrt_tensor_allocate, "more than the device's memory", NRT_RESOURCE) {
    nrt_tensor_t *t = UNTOUCHED;
    return KEEPS(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, (size_t)1 << 50, "huge", &t), t);
}
CASE(LIVE, nrt_tensor_free, "NULL pointer to the handle", NRT_SUCCESS) { nrt_tensor_free(NULL); return NRT_SUCCESS; }
CASE(LIVE, nrt_tensor_free, "stale handle (only logs, NULLs nothing live)", NRT_SUCCESS) {
    nrt_tensor_t *t = g_stale_tensor;
    nrt_tensor_free(&t);
    return nrt_tensor_get_size(g_tensor) == 4096 ? NRT_SUCCESS : NRT_FAILURE;
}
CASE(LIVE, nrt_tensor_read, "NULL tensor", NRT_INVALID) { return nrt_tensor_read(NULL, g_buf, 0, 4); }
CASE(LIVE, nrt_tensor_read, "NULL buffer", NRT_INVALID) { return nrt_tensor_read(g_tensor, NULL, 0, 4); }
CASE(LIVE, nrt_tensor_read, "stale tensor", NRT_INVALID_HANDLE) { return nrt_tensor_read(g_stale_tensor, g_buf, 0, 4); }
CASE(LIVE, nrt_tensor_read, "past the end", NRT_INVALID) { return nrt_tensor_read(g_tensor, g_buf, 4000, 200); }
CASE(LIVE, nrt_tensor_read, "offset + size overflows", NRT_INVALID) { return nrt_tensor_read(g_tensor, g_buf, SIZE_MAX - 1, 4); }
CASE(LIVE, nrt_tensor_write, "NULL tensor", NRT_INVALID) { return nrt_tensor_write(NULL, g_buf, 0, 4); }
CASE(LIVE, nrt_tensor_write, "NULL buffer", NRT_INVALID) { return nrt_tensor_write(g_tensor, NULL, 0, 4); }
CASE(LIVE, nrt_tensor_write, "foreign tensor", NRT_INVALID_HANDLE) { return nrt_tensor_write(FOREIGN, g_buf, 0, 4); }
CASE(LIVE, nrt_tensor_write, "past the end", NRT_INVALID) { return nrt_tensor_write(g_tensor, g_buf, 4096, 1); }
CASE(LIVE, nrt_tensor_read_batch, "NULL batches", NRT_INVALID) { return nrt_tensor_read_batch(NULL, 1, false); }
CASE(LIVE, nrt_tensor_read_batch, "stale tensor in a batch", NRT_INVALID_HANDLE) {
    nrt_tensor_batch_op_t op = {0, 4, g_buf};
    nrt_tensor_batch_t b = {g_stale_tensor, &op, 1};
    return nrt_tensor_read_batch(&b, 1, false);
}
CASE(LIVE, nrt_tensor_write_batch, "NULL ops with a count", NRT_INVALID) {
    nrt_tensor_batch_t b = {g_tensor, NULL, 3};
    return nrt_tensor_write_batch(&b, 1, false);
}
CASE(LIVE, nrt_tensor_write_batch, "op past the end", NRT_INVALID) {
    nrt_tensor_batch_op_t op = {4095, 8, g_buf};
    nrt_tensor_batch_t b = {g_tensor, &op, 1};
    return nrt_tensor_write_batch(&b, 1, false);
}
CASE(LIVE, nrt_tensor_copy, "NULL source", NRT_INVALID) { return nrt_tensor_copy(NULL, 0, g_tensor, 0, 4); }
CASE(LIVE, nrt_tensor_copy, "stale destination", NRT_INVALID_HANDLE) { return nrt_tensor_copy(g_tensor, 0, g_stale_tensor, 0, 4); }
CASE(LIVE, nrt_tensor_copy, "past the source's end", NRT_INVALID) { return nrt_tensor_copy(g_tensor, 4090, g_tensor, 0, 16); }
CASE(LIVE, nrt_tensor_get_lnc_index, "NULL output", NRT_INVALID) { return nrt_tensor_get_lnc_index(g_tensor, NULL); }
CASE(LIVE, nrt_tensor_get_lnc_index, "stale tensor", NRT_INVALID_HANDLE) {
    int v = -77;
    NRT_STATUS r = nrt_tensor_get_lnc_index(g_stale_tensor, &v);
    return v == -77 ? r : NRT_FAILURE;
}
CASE(LIVE, nrt_tensor_get_lnc_index, "virtual (host) tensor", NRT_INVALID) {
    nrt_tensor_t *t = NULL;
    if (nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_VIRTUAL, -1, 64, "virt", &t) != NRT_SUCCESS) return NRT_FAILURE;
    int v = -77;
    NRT_STATUS r = nrt_tensor_get_lnc_index(t, &v);
    nrt_tensor_free(&t);
    return v == -77 ? r : NRT_FAILURE;
}
CASE(BEFORE_INIT, nrt_tensor_get_lnc_index, "before init", NRT_UNINITIALIZED) {
    int v = -77;
    NRT_STATUS r = nrt_tensor_get_lnc_index(FOREIGN, &v);
    return v == -77 ? r : NRT_FAILURE;
}
CASE(LIVE, nrt_tensor_get_size, "NULL tensor", NRT_SUCCESS) { return nrt_tensor_get_size(NULL) == 0 ? NRT_SUCCESS : NRT_FAILURE; }
CASE(LIVE, nrt_tensor_get_size, "stale tensor", NRT_SUCCESS) { return nrt_tensor_get_size(g_stale_tensor) == 0 ? NRT_SUCCESS : NRT_FAILURE; }
CASE(LIVE, nrt_tensor_memset, "NULL tensor", NRT_INVALID) { return nrt_tensor_memset(NULL, 0, 0, 4); }
CASE(LIVE, nrt_tensor_memset, "past the end", NRT_INVALID) { return nrt_tensor_memset(g_tensor, 4096, 0, 4); }
CASE(LIVE, nrt_tensor_allocate_empty, "NULL output", NRT_INVALID) { return nrt_tensor_allocate_empty("e", NULL); }
CASE(LIVE, nrt_tensor_attach_buffer, "NULL tensor", NRT_INVALID) { return nrt_tensor_attach_buffer(NULL, g_buf, 64); }
CASE(LIVE, nrt_tensor_attach_buffer, "NULL buffer", NRT_INVALID) {
    nrt_tensor_t *e = NULL;
    if (nrt_tensor_allocate_empty("e", &e) != NRT_SUCCESS)
        return NRT_FAILURE;
    NRT_STATUS r = nrt_tensor_attach_buffer(e, NULL, 64);
    nrt_tensor_free(&e);
    return r;
}
CASE(LIVE, nrt_tensor_attach_buffer, "stale tensor", NRT_INVALID_HANDLE) { return nrt_tensor_attach_buffer(g_stale_tensor, g_buf, 64); }
CASE(LIVE, nrt_tensor_allocate_slice, "NULL source", NRT_INVALID) {
    nrt_tensor_t *s = UNTOUCHED;
    return KEEPS(nrt_tensor_allocate_slice(NULL, 0, 4, "s", &s), s);
}
CASE(LIVE, nrt_tensor_allocate_slice, "past the source's end", NRT_INVALID) {
    nrt_tensor_t *s = UNTOUCHED;
    return KEEPS(nrt_tensor_allocate_slice(g_tensor, 4000, 200, "s", &s), s);
}
CASE(LIVE, nrt_tensor_allocate_slice, "stale source", NRT_INVALID_HANDLE) {
    nrt_tensor_t *s = UNTOUCHED;
    return KEEPS(nrt_tensor_allocate_slice(g_stale_tensor, 0, 4, "s", &s), s);
}
CASE(LIVE, nrt_tensor_allocate_slice, "NULL output", NRT_INVALID) { return nrt_tensor_allocate_slice(g_tensor, 0, 4, "s", NULL); }
CASE(LIVE, nrt_tensor_get_va, "device tensor (no host address)", NRT_SUCCESS) {
    return nrt_tensor_get_va(g_tensor) == NULL ? NRT_SUCCESS : NRT_FAILURE;
}
CASE(LIVE, nrt_tensor_get_va, "stale tensor", NRT_SUCCESS) { return nrt_tensor_get_va(g_stale_tensor) == NULL ? NRT_SUCCESS : NRT_FAILURE; }
CASE(LIVE, nrt_tensor_get_device_allocation_info, "NULL info", NRT_INVALID) { return nrt_tensor_get_device_allocation_info(g_tensor, NULL); }
CASE(LIVE, nrt_tensor_get_device_allocation_info, "stale tensor", NRT_INVALID_HANDLE) {
    nrt_tensor_device_allocation_info_t i;
    return nrt_tensor_get_device_allocation_info(g_stale_tensor, &i);
}
CASE(LIVE, nrt_tensor_check_output_completion, "NULL tensor", NRT_INVALID) { return nrt_tensor_check_output_completion(NULL, 0, 1); }
CASE(LIVE, nrt_tensor_check_output_completion, "stale tensor", NRT_INVALID_HANDLE) { return nrt_tensor_check_output_completion(g_stale_tensor, 0, 1); }
CASE(LIVE, nrt_tensor_reset_output_completion, "NULL tensor", NRT_INVALID) { return nrt_tensor_reset_output_completion(NULL); }
CASE(LIVE, nrt_tensor_reset_output_completion, "stale tensor", NRT_INVALID_HANDLE) { return nrt_tensor_reset_output_completion(g_stale_tensor); }
/* tensor sets */
CASE(LIVE, nrt_allocate_tensor_set, "NULL output", NRT_INVALID) { return nrt_allocate_tensor_set(NULL); }
CASE(LIVE, nrt_destroy_tensor_set, "NULL pointer to the handle", NRT_SUCCESS) { nrt_destroy_tensor_set(NULL); return NRT_SUCCESS; }
CASE(LIVE, nrt_destroy_tensor_set, "stale set (only logs)", NRT_SUCCESS) {
    nrt_tensor_set_t *s = g_stale_set;
    nrt_destroy_tensor_set(&s);
    nrt_tensor_t *t = NULL;
    return nrt_get_tensor_from_tensor_set(g_set, "nothing", &t) == NRT_FAILURE ? NRT_SUCCESS : NRT_FAILURE;
}
CASE(LIVE, nrt_add_tensor_to_tensor_set, "NULL set", NRT_INVALID) { return nrt_add_tensor_to_tensor_set(NULL, "input", g_tensor); }
CASE(LIVE, nrt_add_tensor_to_tensor_set, "NULL name", NRT_INVALID) { return nrt_add_tensor_to_tensor_set(g_set, NULL, g_tensor); }
CASE(LIVE, nrt_add_tensor_to_tensor_set, "stale set", NRT_INVALID_HANDLE) { return nrt_add_tensor_to_tensor_set(g_stale_set, "input", g_tensor); }
CASE(LIVE, nrt_add_tensor_to_tensor_set, "stale tensor", NRT_INVALID_HANDLE) { return nrt_add_tensor_to_tensor_set(g_set, "input", g_stale_tensor); }
CASE(LIVE, nrt_get_tensor_from_tensor_set, "NULL output", NRT_INVALID) { return nrt_get_tensor_from_tensor_set(g_set, "input", NULL); }
CASE(LIVE, nrt_get_tensor_from_tensor_set, "unknown name", NRT_FAILURE) {
    nrt_tensor_t *t = UNTOUCHED;
    return KEEPS(nrt_get_tensor_from_tensor_set(g_set, "no such tensor", &t), t);
}
CASE(LIVE, nrt_get_tensor_from_tensor_set, "foreign set", NRT_INVALID_HANDLE) {
    nrt_tensor_t *t = UNTOUCHED;
    return KEEPS(nrt_get_tensor_from_tensor_set(FOREIGN, "input", &t), t);
}
/* execute */
CASE(LIVE, nrt_execute, "NULL model", NRT_INVALID) { return nrt_execute(NULL, g_set, g_set); }
CASE(LIVE, nrt_execute, "stale model", NRT_INVALID_HANDLE) { return nrt_execute(g_stale_model, g_set, g_set); }
CASE(LIVE, nrt_execute, "NULL input set", NRT_INVALID) { return nrt_execute(g_model, NULL, g_set); }
CASE(LIVE, nrt_execute, "stale output set", NRT_INVALID_HANDLE) { return nrt_execute(g_model, g_set, g_stale_set); }
CASE(LIVE, nrt_execute, "inputs missing from the set", NRT_INVALID) { return nrt_execute(g_model, g_set, g_set); }
CASE(LIVE, nrt_execute_repeat, "repeat count 0", NRT_INVALID) { return nrt_execute_repeat(g_model, g_set, g_set, 0); }
CASE(LIVE, nrt_execute_repeat, "stale model", NRT_INVALID_HANDLE) { return nrt_execute_repeat(g_stale_model, g_set, g_set, 2); }
/* async */
CASE(LIVE, nrta_tensor_write, "NULL tensor", NRT_INVALID) {
    nrta_seq_t s = 77;
    NRT_STATUS r = nrta_tensor_write(NULL, g_buf, 0, 4, 0, 0, NULL, &s);
    return s == 77 ? r : NRT_FAILURE;
}
CASE(LIVE, nrta_tensor_write, "NULL sequence output", NRT_INVALID) { return nrta_tensor_write(g_tensor, g_buf, 0, 4, 0, 0, NULL, NULL); }
CASE(LIVE, nrta_tensor_write, "unknown queue", NRT_INVALID) {
    nrta_seq_t s = 77;
    NRT_STATUS r = nrta_tensor_write(g_tensor, g_buf, 0, 4, 0, 99, NULL, &s);
    return s == 77 ? r : NRT_FAILURE;
}
CASE(LIVE, nrta_tensor_read, "stale tensor", NRT_INVALID_HANDLE) {
    nrta_seq_t s = 77;
    NRT_STATUS r = nrta_tensor_read(g_buf, g_stale_tensor, 0, 4, 0, 0, NULL, &s);
    return s == 77 ? r : NRT_FAILURE;
}
CASE(LIVE, nrta_tensor_read, "past the end", NRT_INVALID) {
    nrta_seq_t s = 77;
    NRT_STATUS r = nrta_tensor_read(g_buf, g_tensor, 4000, 200, 0, 0, NULL, &s);
    return s == 77 ? r : NRT_FAILURE;
}
CASE(LIVE, nrta_tensor_write, "lnc_idx outside the visible cores", NRT_INVALID) {
    nrta_seq_t s = 77;
    NRT_STATUS r = nrta_tensor_write(g_tensor, g_buf, 0, 4, 4096, 0, NULL, &s);
    return s == 77 ? r : NRT_FAILURE;
}
CASE(LIVE, nrta_tensor_read, "negative lnc_idx", NRT_INVALID) {
    nrta_seq_t s = 77;
    NRT_STATUS r = nrta_tensor_read(g_buf, g_tensor, 0, 4, -1, 0, NULL, &s);
    return s == 77 ? r : NRT_FAILURE;
}
CASE(LIVE, nrta_tensor_copy, "NULL destination", NRT_INVALID) {
    nrta_seq_t s = 77;
    NRT_STATUS r = nrta_tensor_copy(g_tensor, 0, NULL, 0, 4, 0, NULL, &s);
    return s == 77 ? r : NRT_FAILURE;
}
CASE(LIVE, nrta_execute_schedule, "stale model", NRT_INVALID_HANDLE) {
    nrta_seq_t s = 77;
    NRT_STATUS r = nrta_execute_schedule(g_stale_model, g_set, g_set, 0, NULL, &s);
    return s == 77 ? r : NRT_FAILURE;
}
CASE(LIVE, nrta_execute_schedule, "NULL sequence output", NRT_INVALID) { return nrta_execute_schedule(g_model, g_set, g_set, 0, NULL, NULL); }
CASE(LIVE, nrta_cc_prepare, "NULL comm", NRT_INVALID) {
    nrt_cc_context_t *ctx = NULL;
    return nrta_cc_prepare(NULL, NULL, NULL, NRT_DTYPE_FLOAT32, NRT_OP_ADD, NRT_CC_ALLREDUCE, &ctx);
}
CASE(LIVE, nrta_cc_prepare, "NULL context output", NRT_INVALID) {
    uint32_t group[1] = {0};
    nrt_cc_comm_t comm = {group, 0, 1, 0, 1, 0};
    return nrta_cc_prepare(&comm, NULL, NULL, NRT_DTYPE_FLOAT32, NRT_OP_ADD, NRT_CC_ALLREDUCE, NULL);
}
CASE(LIVE, nrta_cc_prepare, "rank past rank_n", NRT_INVALID) {
    uint32_t group[1] = {0};
    nrt_cc_comm_t comm = {group, 1, 1, 0, 1, 0};
    nrt_cc_context_t *ctx = NULL;
    return nrta_cc_prepare(&comm, NULL, NULL, NRT_DTYPE_FLOAT32, NRT_OP_ADD, NRT_CC_ALLREDUCE, &ctx);
}
CASE(LIVE, nrta_cc_prepare, "unknown cc_op", NRT_INVALID) {
    uint32_t group[1] = {0};
    nrt_cc_comm_t comm = {group, 0, 1, 0, 1, 0};
    nrt_cc_context_t *ctx = NULL;
    return nrta_cc_prepare(&comm, NULL, NULL, NRT_DTYPE_FLOAT32, NRT_OP_ADD, (nrt_cc_op_type_t)7, &ctx);
}
CASE(LIVE, nrta_cc_schedule, "NULL context", NRT_INVALID) {
    nrta_seq_t s = 77;
    NRT_STATUS r = nrta_cc_schedule(NULL, 0, NULL, &s);
    return s == 77 ? r : NRT_FAILURE;
}
CASE(LIVE, nrta_cc_schedule, "stale context", NRT_INVALID_HANDLE) {
    nrta_seq_t s = 77;
    nrt_cc_context_t *ctx = (nrt_cc_context_t *)g_buf;
    NRT_STATUS r = nrta_cc_schedule(&ctx, 0, NULL, &s);
    return s == 77 ? r : NRT_FAILURE;
}
CASE(LIVE, nrta_is_completed, "NULL output", NRT_INVALID) { return nrta_is_completed(1, NULL); }
CASE(LIVE, nrta_is_completed, "sequence never issued", NRT_INVALID) {
    bool done = true;
    NRT_STATUS r = nrta_is_completed(0x7fff0000ull, &done);
    return done ? r : NRT_FAILURE;
}
CASE(LIVE, nrta_get_sequence, "NULL output", NRT_INVALID) { return nrta_get_sequence(0, NRTA_XU_COMPUTE, 0, NULL); }
CASE(LIVE, nrta_get_sequence, "logical core out of range", NRT_INVALID) {
    nrta_seq_t s = 77;
    NRT_STATUS r = nrta_get_sequence(99, NRTA_XU_COMPUTE, 0, &s);
    return s == 77 ? r : NRT_FAILURE;
}
CASE(LIVE, nrta_get_sequence, "unknown execution unit", NRT_INVALID) {
    nrta_seq_t s = 77;
    NRT_STATUS r = nrta_get_sequence(0, (nrta_xu_t)42, 0, &s);
    return s == 77 ? r : NRT_FAILURE;
}
CASE(LIVE, nrta_event_register_seq_id_completion, "bad descriptor", NRT_INVALID) {
    return nrta_event_register_seq_id_completion(1, -1);
}
CASE(LIVE, nrta_event_register_seq_id_completion, "sequence never issued", NRT_INVALID) {
    int efd = eventfd(0, 0);
    NRT_STATUS r = nrta_event_register_seq_id_completion(0x7fff0000ull, efd);
    close(efd);
    return r;
}
CASE(LIVE, nrta_event_register_xu_completion, "bad descriptor", NRT_INVALID) {
    return nrta_event_register_xu_completion(0, NRTA_XU_COMPUTE, 0, -1);
}
CASE(LIVE, nrta_event_register_xu_completion, "negative logical core", NRT_INVALID) {
    int efd = eventfd(0, 0);
    NRT_STATUS r = nrta_event_register_xu_completion(-1, NRTA_XU_COMPUTE, 0, efd);
    close(efd);
    return r;
}
CASE(LIVE, nrta_event_register_xu_completion, "logical core out of range", NRT_INVALID) {
    int efd = eventfd(0, 0);
    NRT_STATUS r = nrta_event_register_xu_completion(99, NRTA_XU_COMPUTE, 0, efd);
    close(efd);
    return r;
}
/* nec.h: int functions answer -1 (MLA indexes NEC_UNKNOWN_MLA_DEV), size_t 0, outputs untouched */
#define NEC_INT(call, want) ((call) == (want) ? NRT_INVALID : NRT_FAILURE)
CASE(BEFORE_INIT, nec_get_device_count, "before init", NRT_INVALID) { return NEC_INT(nec_get_device_count(NULL, 0), -1); }
/* debug stream (ndebug_stream.h): one client per logical core. */
CASE(LIVE, nrt_debug_client_connect, "NULL stream_fd", NRT_INVALID) { return nrt_debug_client_connect(0, NULL); }
CASE(LIVE, nrt_debug_client_connect, "logical core -1", NRT_INVALID) {
    int fd = 0x5a5a;
    NRT_STATUS r = nrt_debug_client_connect(-1, &fd);
    return fd == 0x5a5a ? r : NRT_FAILURE;
}
CASE(LIVE, nrt_debug_client_connect, "logical core past the visible ones", NRT_INVALID) {
    int fd = 0x5a5a;
    NRT_STATUS r = nrt_debug_client_connect(4096, &fd);
    return fd == 0x5a5a ? r : NRT_FAILURE;
}
CASE(LIVE, nrt_debug_client_connect, "second client of a core", NRT_INVALID) {
    int fd = -1, fd2 = 0x5a5a;
    if (nrt_debug_client_connect(0, &fd) != NRT_SUCCESS)
        return NRT_FAILURE;
    NRT_STATUS r = nrt_debug_client_connect(0, &fd2);
    nrt_debug_client_connect_close(fd);
    return fd2 == 0x5a5a ? r : NRT_FAILURE;
}
CASE(LIVE, nrt_debug_client_read_one_event, "nothing waiting", NRT_QUEUE_EMPTY) {
    int fd = -1;
    ndebug_stream_event_header_t h;
    void *p = UNTOUCHED;
    if (nrt_debug_client_connect(0, &fd) != NRT_SUCCESS)
        return NRT_FAILURE;
    NRT_STATUS r = KEEPS(nrt_debug_client_read_one_event(fd, &h, &p), p);
    nrt_debug_client_connect_close(fd);
    return r;
}
CASE(LIVE, nrt_debug_client_read_one_event, "NULL header", NRT_INVALID) {
    int fd = -1;
    void *p = UNTOUCHED;
    if (nrt_debug_client_connect(0, &fd) != NRT_SUCCESS)
        return NRT_FAILURE;
    NRT_STATUS r = KEEPS(nrt_debug_client_read_one_event(fd, NULL, &p), p);
    nrt_debug_client_connect_close(fd);
    return r;
}
CASE(LIVE, nrt_debug_client_read_one_event, "NULL payload", NRT_INVALID) {
    int fd = -1;
    ndebug_stream_event_header_t h;
    if (nrt_debug_client_connect(0, &fd) != NRT_SUCCESS)
        return NRT_FAILURE;
    NRT_STATUS r = nrt_debug_client_read_one_event(fd, &h, NULL);
    nrt_debug_client_connect_close(fd);
    return r;
}
CASE(LIVE, nrt_debug_client_read_one_event, "descriptor that is no connection", NRT_INVALID) {
    ndebug_stream_event_header_t h;
    void *p = UNTOUCHED;
    return KEEPS(nrt_debug_client_read_one_event(0, &h, &p), p);
}
CASE(LIVE, nrt_debug_client_read_one_event, "closed connection", NRT_INVALID) {
    int fd = -1;
    ndebug_stream_event_header_t h;
    void *p = UNTOUCHED;
    if (nrt_debug_client_connect(0, &fd) != NRT_SUCCESS)
        return NRT_FAILURE;
    nrt_debug_client_connect_close(fd);
    return KEEPS(nrt_debug_client_read_one_event(fd, &h, &p), p);
}
CASE(LIVE, nrt_debug_client_connect_close, "descriptor that is no connection (only logs)", NRT_SUCCESS) {
    nrt_debug_client_connect_close(-1);
    int fd = -1;
    /* The core is free again afterwards. */
    NRT_STATUS r = nrt_debug_client_connect(0, &fd);
    nrt_debug_client_connect_close(fd);
    return r;
}
CASE(LIVE, nec_get_device_count, "NULL array with a size", NRT_INVALID) { return NEC_INT(nec_get_device_count(NULL, 4), -1); }
CASE(LIVE, nec_get_device_pci_bdf, "device past the instance", NRT_INVALID) {
    uint32_t dom = 77, bus = 77;
    uint8_t slot = 77, fn = 77;
    int r = nec_get_device_pci_bdf(4096, &dom, &bus, &slot, &fn);
    return r == -1 && dom == 77 && bus == 77 && slot == 77 && fn == 77 ? NRT_INVALID : NRT_FAILURE;
}
CASE(LIVE, nec_get_device_pci_bdf, "NULL output", NRT_INVALID) {
    uint32_t dom = 77, bus = 77;
    uint8_t slot = 77;
    int r = nec_get_device_pci_bdf(0, &dom, &bus, &slot, NULL);
    return r == -1 && dom == 77 ? NRT_INVALID : NRT_FAILURE;
}
CASE(LIVE, nec_get_virtual_core_size, "NULL output", NRT_INVALID) { return nec_get_virtual_core_size(NULL); }
CASE(BEFORE_INIT, nec_get_virtual_core_size, "before init", NRT_UNINITIALIZED) {
    uint32_t v = 77;
    NRT_STATUS r = nec_get_virtual_core_size(&v);
    return v == 77 ? r : NRT_FAILURE;
}
CASE(BEFORE_INIT, nec_get_version_info, "NULL output", NRT_INVALID) { return nec_get_version_info(NULL); }
CASE(LIVE, nec_build_port_and_rid_map, "NULL arrays", NRT_INVALID) { return nec_build_port_and_rid_map(0, NULL, NULL, 1); }
CASE(LIVE, nec_build_port_and_rid_map, "a device named twice", NRT_INVALID) {
    int mla[2] = {0, 1}, dev[2] = {0, 0};
    return nec_build_port_and_rid_map(0, mla, dev, 2);
}
CASE(LIVE, nec_build_port_and_rid_map, "local device past the instance", NRT_INVALID) {
    int mla[1] = {0}, dev[1] = {0};
    return nec_build_port_and_rid_map(4096, mla, dev, 1);
}
CASE(LIVE, nec_is_mla_available, "local device past the instance", NRT_INVALID) { return nec_is_mla_available(4096, 0) ? NRT_FAILURE : NRT_INVALID; }
CASE(LIVE, nec_mla_idx_to_rid, "negative MLA index", NRT_INVALID) { return NEC_INT(nec_mla_idx_to_rid(0, -5), -1); }
CASE(LIVE, nec_rid_to_mla_idx, "routing id past the instance", NRT_INVALID) { return NEC_INT(nec_rid_to_mla_idx(0, 4096), NEC_UNKNOWN_MLA_DEV); }
CASE(LIVE, nec_get_peer_mla_idx, "port past the device's links", NRT_INVALID) { return NEC_INT(nec_get_peer_mla_idx(0, 0, 99), NEC_UNKNOWN_MLA_DEV); }
CASE(LIVE, nec_get_p2p_pod_peer_node, "NULL output", NRT_INVALID) { return NEC_INT(nec_get_p2p_pod_peer_node(0, 0, 0, NULL), -1); }
CASE(LIVE, nec_get_p2p_pod_peer_node, "no pod: no peer one port away", NRT_INVALID) {
    int peer = 77;
    int r = nec_get_p2p_pod_peer_node(0, 0, 1, &peer);
    return r == -1 && peer == 77 ? NRT_INVALID : NRT_FAILURE;
}
CASE(LIVE, nec_pod_node_can_access_peer_node, "pod type INVALID", NRT_INVALID) {
    int can = 77;
    NRT_STATUS r = nec_pod_node_can_access_peer_node(NEC_POD_TYPE_INVALID, 0, 0, 0, 0, &can);
    return can == 77 ? r : NRT_FAILURE;
}
CASE(LIVE, nec_pod_node_can_access_peer_node, "NULL output", NRT_INVALID) { return nec_pod_node_can_access_peer_node(NEC_POD_TYPE_NONE, 0, 0, 0, 0, NULL); }
CASE(LIVE, nec_inc_semaphore, "NULL address (logged, ignored)", NRT_SUCCESS) {
    nec_inc_semaphore(NULL, 1);
    return NRT_SUCCESS;
}
CASE(LIVE, nec_get_dynamic_send_size_bytes, "NULL table", NRT_INVALID) { return NEC_INT(nec_get_dynamic_send_size_bytes(NULL, 4, 0, 2), 0); }
CASE(LIVE, nec_get_dynamic_send_offset_bytes, "rank past rank_n", NRT_INVALID) {
    uint64_t words[8] = {0};
    enc_host_mem_t m = {NULL, words, 0, sizeof words};
    return NEC_INT(nec_get_dynamic_send_offset_bytes(&m, 4, 2, 2), 0);
}
CASE(LIVE, nec_get_dynamic_recv_offset_bytes, "table smaller than rank_n needs", NRT_INVALID) {
    uint64_t words[8] = {0};
    enc_host_mem_t m = {NULL, words, 0, sizeof words};
    return NEC_INT(nec_get_dynamic_recv_offset_bytes(&m, 4, 0, 3), 0);
}
CASE(LIVE, nec_set_recv_size_bytes, "not whole elements (table untouched)", NRT_INVALID) {
    uint64_t words[8] = {0};
    enc_host_mem_t m = {NULL, words, 0, sizeof words};
    nec_set_recv_size_bytes(&m, 6, 4, 0, 2);
    for (int i = 0; i < 8; i++)
        if (words[i] != 0) return NRT_FAILURE;
    return NRT_INVALID;
}
CASE(LIVE, nec_ndl_printk, "NULL string (logged, ignored)", NRT_SUCCESS) {
    nec_ndl_printk(NULL, 8, 0);
    return NRT_SUCCESS;
}
CASE(LIVE, nrt_register_async_exec_callback, "NULL callback (unregisters)", NRT_SUCCESS) {
    return nrt_register_async_exec_callback(NULL, g_buf);
}
CASE(LIVE, nrt_async_drain_queued_execs, "logical core out of range", NRT_INVALID) { return nrt_async_drain_queued_execs(99); }
/* collectives setup */
CASE(LIVE, nrt_build_global_comm, "id past the count", NRT_INVALID) { return nrt_build_global_comm(0, 3, 2); }
CASE(LIVE, nrt_build_global_comm, "count 0", NRT_INVALID) { return nrt_build_global_comm(0, 0, 0); }
CASE(LIVE, nrt_cc_global_comm_init, "id past the count", NRT_INVALID) { return nrt_cc_global_comm_init(0, 3, 2); }
CASE(LIVE, nrt_barrier, "logical core out of range", NRT_INVALID) { return nrt_barrier(99, 0, 1); }
CASE(LIVE, nrt_all_gather, "NULL input", NRT_INVALID) { return nrt_all_gather(0, 0, 1, 4, NULL, g_buf); }
CASE(LIVE, nrt_all_gather, "NULL output", NRT_INVALID) { return nrt_all_gather(0, 0, 1, 4, g_buf, NULL); }
CASE(LIVE, nrt_get_libnccl_net, "no net plugin (message filled)", NRT_SUCCESS) {
    int err = 0;
    char msg[64] = {0};
    return nrt_get_libnccl_net(&err, msg, sizeof msg) == NULL && err != 0 && msg[0] ? NRT_SUCCESS : NRT_FAILURE;
}
CASE(LIVE, nrt_get_libnccl_net, "NULL error outputs", NRT_SUCCESS) {
    return nrt_get_libnccl_net(NULL, NULL, 0) == NULL ? NRT_SUCCESS : NRT_FAILURE;
}
/* memory and host queries */
CASE(LIVE, nrt_get_vnc_memory_stats, "NULL stats", NRT_INVALID) {
    size_t out = 0;
    return nrt_get_vnc_memory_stats(0, NULL, sizeof(nrt_vnc_memory_stats_t), &out);
}
CASE(LIVE, nrt_get_vnc_memory_stats, "logical core out of range", NRT_INVALID) {
    nrt_vnc_memory_stats_t st;
    size_t out = 0;
    return nrt_get_vnc_memory_stats(99, &st, sizeof st, &out);
}
CASE(LIVE, nrt_get_vnc_memory_stats, "struct size 0 (nothing written)", NRT_SUCCESS) {
    nrt_vnc_memory_stats_t st;
    size_t out = 77;
    memset(&st, 0x5a, sizeof st);
    NRT_STATUS r = nrt_get_vnc_memory_stats(0, &st, 0, &out);
    return ((unsigned char *)&st)[0] == 0x5a ? r : NRT_FAILURE;
}
CASE(LIVE, nrt_memcpy_to_device, "NULL source", NRT_INVALID) { return nrt_memcpy_to_device(g_buf, NULL, 4); }
CASE(LIVE, nrt_memcpy_to_device, "destination not in device memory", NRT_INVALID) { return nrt_memcpy_to_device(g_buf, g_buf + 64, 4); }
CASE(LIVE, nrt_host_device_id_get, "NULL output", NRT_INVALID) { return nrt_host_device_id_get(0, NULL); }
CASE(LIVE, nrt_host_device_id_get, "device out of range", NRT_INVALID) {
    uint32_t id = 77;
    NRT_STATUS r = nrt_host_device_id_get(64, &id);
    return id == 77 ? r : NRT_FAILURE;
}
CASE(LIVE, nrt_host_device_id_rid_map_get, "table smaller than the instance", NRT_INVALID) {
    uint32_t count = 0, map[4] = {77, 77, 77, 77};
    NRT_STATUS r = nrt_host_device_id_rid_map_get(&count, map);
    return count == 0 && map[0] == 77 ? r : NRT_FAILURE;
}
CASE(LIVE, nrt_host_device_id_rid_map_get, "NULL count", NRT_INVALID) {
    uint32_t map[4] = {77, 77, 77, 77};
    NRT_STATUS r = nrt_host_device_id_rid_map_get(NULL, map);
    return map[0] == 77 ? r : NRT_FAILURE;
}
CASE(LIVE, nrt_host_device_id_rid_map_get, "NULL table", NRT_INVALID) {
    uint32_t count = 4;
    NRT_STATUS r = nrt_host_device_id_rid_map_get(&count, NULL);
    return count == 4 ? r : NRT_FAILURE;
}
/* The LIVE phase runs without NEURON_RT_MAP_HBM: no host address is
 * device memory (tests/c/hbm_map.c covers the mapped case). */
CASE(LIVE, nrt_get_dmabuf_fd, "address not in mapped HBM", NRT_INVALID) {
    int fd = -77;
    NRT_STATUS r = nrt_get_dmabuf_fd((uint64_t)(uintptr_t)g_buf, 4096, &fd);
    return fd == -77 ? r : NRT_FAILURE;
}
CASE(LIVE, nrt_get_dmabuf_fd, "NULL fd", NRT_INVALID) { return nrt_get_dmabuf_fd((uint64_t)(uintptr_t)g_buf, 4096, NULL); }
CASE(LIVE, nrt_get_hbm_mmap_va, "HBM not mapped into the process", NRT_INVALID) {
    void *va = UNTOUCHED;
    size_t size = 77;
    NRT_STATUS r = nrt_get_hbm_mmap_va(0, 0, &va, &size);
    return va == UNTOUCHED && size == 77 ? r : NRT_FAILURE;
}
CASE(LIVE, nrt_get_hbm_mmap_va, "device out of range", NRT_INVALID) {
    void *va = UNTOUCHED;
    size_t size = 77;
    NRT_STATUS r = nrt_get_hbm_mmap_va(64, 0, &va, &size);
    return va == UNTOUCHED && size == 77 ? r : NRT_FAILURE;
}
CASE(LIVE, nrt_get_hbm_mmap_va, "NULL size", NRT_INVALID) {
    void *va = UNTOUCHED;
    NRT_STATUS r = nrt_get_hbm_mmap_va(0, 0, &va, NULL);
    return va == UNTOUCHED ? r : NRT_FAILURE;
}
CASE(LIVE, nrt_get_attached_efa_bdf, "host address, not device memory", NRT_FAILURE) {
    char bdf[32] = {0};
    size_t len = sizeof bdf;
    NRT_STATUS r = nrt_get_attached_efa_bdf(g_buf, bdf, &len);
    return bdf[0] == 0 && len == sizeof bdf ? r : NRT_INVALID;
}
CASE(LIVE, nrt_get_attached_efa_bdf, "NULL length", NRT_INVALID) {
    char bdf[32] = {0};
    NRT_STATUS r = nrt_get_attached_efa_bdf(g_buf, bdf, NULL);
    return bdf[0] == 0 ? r : NRT_FAILURE;
}
CASE(LIVE, nrt_set_pool_eng_ucode, "while initialised", NRT_UNINITIALIZED) {
    nrt_ucode_info empty = {{NULL, 0}, {NULL, 0}};
    return nrt_set_pool_eng_ucode(&empty);
}

/* system trace (nrt_sys_trace.h): configuration works in any state,
 * start / stop / fetch need nrt_init. */
CASE(BEFORE_INIT, nrt_sys_trace_start, "before init", NRT_UNINITIALIZED) {
    nrt_sys_trace_config_t *c = NULL;
    if (nrt_sys_trace_config_allocate(&c) != NRT_SUCCESS)
        return NRT_FAILURE;
    NRT_STATUS r = nrt_sys_trace_start(c);
    nrt_sys_trace_config_free(c);
    return r;
}
CASE(BEFORE_INIT, nrt_sys_trace_fetch_events, "before init", NRT_UNINITIALIZED) {
    char *buf = UNTOUCHED;
    size_t n = 77;
    NRT_STATUS r = nrt_sys_trace_fetch_events(&buf, &n, NULL);
    return (void *)buf == UNTOUCHED ? r : NRT_FAILURE;
}
CASE(LIVE, nrt_sys_trace_config_allocate, "NULL output", NRT_INVALID) { return nrt_sys_trace_config_allocate(NULL); }
CASE(LIVE, nrt_sys_trace_config_set_defaults, "NULL and stale configs (only log)", NRT_SUCCESS) {
    nrt_sys_trace_config_set_defaults(NULL);
    nrt_sys_trace_config_set_defaults(g_stale_trace_cfg);
    return NRT_SUCCESS;
}
CASE(LIVE, nrt_sys_trace_config_free, "NULL, stale and foreign configs (only log)", NRT_SUCCESS) {
    nrt_sys_trace_config_free(NULL);
    nrt_sys_trace_config_free(g_stale_trace_cfg);
    nrt_sys_trace_config_free(FOREIGN);
    return NRT_SUCCESS;
}
CASE(LIVE, nrt_sys_trace_config_set_max_events_per_nc, "stale config (only logs)", NRT_SUCCESS) {
    nrt_sys_trace_config_set_max_events_per_nc(g_stale_trace_cfg, 10);
    nrt_sys_trace_config_set_max_events_per_nc(NULL, 10);
    return NRT_SUCCESS;
}
CASE(LIVE, nrt_sys_trace_config_set_capture_enabled_for_nc, "NULL config, core out of range (only log)", NRT_SUCCESS) {
    nrt_sys_trace_config_set_capture_enabled_for_nc(NULL, 0, true);
    nrt_sys_trace_config_set_capture_enabled_for_nc(g_trace_cfg, 9999, true);
    return NRT_SUCCESS;
}
CASE(LIVE, nrt_sys_trace_config_set_capture_enabled_for_event_type, "unknown event type", NRT_INVALID) {
    return nrt_sys_trace_config_set_capture_enabled_for_event_type(g_trace_cfg, "no_such_event", true);
}
CASE(LIVE, nrt_sys_trace_config_set_capture_enabled_for_event_type, "NULL event type", NRT_INVALID) {
    return nrt_sys_trace_config_set_capture_enabled_for_event_type(g_trace_cfg, NULL, true);
}
CASE(LIVE, nrt_sys_trace_config_set_capture_enabled_for_event_type, "stale config", NRT_INVALID_HANDLE) {
    return nrt_sys_trace_config_set_capture_enabled_for_event_type(g_stale_trace_cfg, "nrt_load", true);
}
CASE(LIVE, nrt_sys_trace_get_event_types, "NULL outputs", NRT_INVALID) { return nrt_sys_trace_get_event_types(NULL, NULL); }
CASE(LIVE, nrt_sys_trace_free_event_types, "NULL list (only logs)", NRT_SUCCESS) {
    nrt_sys_trace_free_event_types(NULL, 3);
    return NRT_SUCCESS;
}
CASE(LIVE, nrt_sys_trace_config_get_enabled_event_types, "NULL outputs", NRT_INVALID) {
    return nrt_sys_trace_config_get_enabled_event_types(g_trace_cfg, NULL, NULL);
}
CASE(LIVE, nrt_sys_trace_config_get_enabled_event_types, "stale config", NRT_INVALID_HANDLE) {
    const char **types = UNTOUCHED;
    size_t n = 77;
    return KEEPS(nrt_sys_trace_config_get_enabled_event_types(g_stale_trace_cfg, &types, &n), types);
}
CASE(LIVE, nrt_sys_trace_start, "NULL config", NRT_INVALID) { return nrt_sys_trace_start(NULL); }
CASE(LIVE, nrt_sys_trace_start, "stale config", NRT_INVALID_HANDLE) { return nrt_sys_trace_start(g_stale_trace_cfg); }
CASE(LIVE, nrt_sys_trace_stop, "no session running", NRT_SUCCESS) { return nrt_sys_trace_stop(); }
CASE(LIVE, nrt_sys_trace_fetch_events, "no session running", NRT_INVALID) {
    char *buf = UNTOUCHED;
    size_t n = 77;
    NRT_STATUS r = nrt_sys_trace_fetch_events(&buf, &n, NULL);
    return (void *)buf == UNTOUCHED ? r : NRT_FAILURE;
}
CASE(LIVE, nrt_sys_trace_fetch_events, "NULL buffer output", NRT_INVALID) {
    size_t n = 0;
    return nrt_sys_trace_fetch_events(NULL, &n, g_fetch_opts);
}
CASE(LIVE, nrt_sys_trace_fetch_events, "stale fetch options", NRT_INVALID_HANDLE) {
    char *buf = UNTOUCHED;
    size_t n = 77;
    return KEEPS(nrt_sys_trace_fetch_events(&buf, &n, g_stale_fetch_opts), buf);
}
CASE(LIVE, nrt_sys_trace_fetch_options_allocate, "NULL output", NRT_INVALID) { return nrt_sys_trace_fetch_options_allocate(NULL); }
CASE(LIVE, nrt_sys_trace_fetch_options_set_defaults, "NULL and stale options (only log)", NRT_SUCCESS) {
    nrt_sys_trace_fetch_options_set_defaults(NULL);
    nrt_sys_trace_fetch_options_set_defaults(g_stale_fetch_opts);
    return NRT_SUCCESS;
}
CASE(LIVE, nrt_sys_trace_fetch_options_free, "NULL, stale and foreign options (only log)", NRT_SUCCESS) {
    nrt_sys_trace_fetch_options_free(NULL);
    nrt_sys_trace_fetch_options_free(g_stale_fetch_opts);
    nrt_sys_trace_fetch_options_free(FOREIGN);
    return NRT_SUCCESS;
}
CASE(LIVE, nrt_sys_trace_fetch_options_set_max_events_per_nc, "NULL and stale options (only log)", NRT_SUCCESS) {
    nrt_sys_trace_fetch_options_set_max_events_per_nc(NULL, 1);
    nrt_sys_trace_fetch_options_set_max_events_per_nc(g_stale_fetch_opts, 1);
    return NRT_SUCCESS;
}
CASE(LIVE, nrt_sys_trace_fetch_options_set_nc_idx, "NULL and stale options (only log)", NRT_SUCCESS) {
    nrt_sys_trace_fetch_options_set_nc_idx(NULL, 0);
    nrt_sys_trace_fetch_options_set_nc_idx(g_stale_fetch_opts, 0);
    return NRT_SUCCESS;
}
/* Fetched buffers and type lists are memory the caller owns and may
 * release with free(3) itself, so only NULL is a bad argument the library
 * can tell apart; a foreign pointer is a client bug, as for free(3). */
CASE(LIVE, nrt_sys_trace_buffer_free, "NULL buffer", NRT_SUCCESS) {
    nrt_sys_trace_buffer_free(NULL);
    return NRT_SUCCESS;
}
/* profiles and inspect (nrt_profile.h) */
CASE(BEFORE_INIT, nrt_profile_start, "before init", NRT_UNINITIALIZED) { return nrt_profile_start(FOREIGN, "x.ntff"); }
CASE(BEFORE_INIT, nrt_inspect_begin, "before init", NRT_UNINITIALIZED) { return nrt_inspect_begin(); }
CASE(LIVE, nrt_profile_start, "NULL model", NRT_INVALID) { return nrt_profile_start(NULL, "x.ntff"); }
CASE(LIVE, nrt_profile_start, "stale model", NRT_INVALID_HANDLE) { return nrt_profile_start(g_stale_model, "x.ntff"); }
CASE(LIVE, nrt_profile_stop, "NULL file name", NRT_INVALID) { return nrt_profile_stop(NULL); }
CASE(LIVE, nrt_profile_stop, "nothing started", NRT_INVALID) { return nrt_profile_stop("never-started.ntff"); }
CASE(LIVE, nrt_profile_continuous_options_allocate, "NULL output", NRT_INVALID) { return nrt_profile_continuous_options_allocate(NULL); }
CASE(LIVE, nrt_profile_continuous_options_free, "stale options", NRT_INVALID_HANDLE) { return nrt_profile_continuous_options_free(g_stale_cont_opts); }
CASE(LIVE, nrt_profile_continuous_options_set_output_dir, "NULL directory", NRT_INVALID) {
    return nrt_profile_continuous_options_set_output_dir(g_cont_opts, NULL);
}
CASE(LIVE, nrt_profile_continuous_options_set_output_dir, "foreign options", NRT_INVALID_HANDLE) {
    return nrt_profile_continuous_options_set_output_dir(FOREIGN, "/tmp");
}
CASE(LIVE, nrt_profile_continuous_save, "not started", NRT_INVALID) { return nrt_profile_continuous_save(0, g_cont_opts); }
CASE(LIVE, nrt_profile_continuous_stop, "not started", NRT_INVALID) { return nrt_profile_continuous_stop(); }
CASE(LIVE, nrt_profile_continuous_start, "stale options", NRT_INVALID_HANDLE) { return nrt_profile_continuous_start(g_stale_cont_opts); }
CASE(LIVE, nrt_profile_continuous_start, "NULL options (the defaults)", NRT_SUCCESS) {
    NRT_STATUS r = nrt_profile_continuous_start(NULL);
    return r == NRT_SUCCESS && nrt_profile_continuous_stop() != NRT_SUCCESS ? NRT_FAILURE : r;
}
CASE(LIVE, nrt_inspect_stop, "not started", NRT_INVALID) { return nrt_inspect_stop(); }
CASE(LIVE, nrt_inspect_config_allocate, "NULL output", NRT_INVALID) { return nrt_inspect_config_allocate(NULL); }
CASE(LIVE, nrt_inspect_config_set_defaults, "stale config", NRT_INVALID_HANDLE) { return nrt_inspect_config_set_defaults(g_stale_inspect_cfg); }
CASE(LIVE, nrt_inspect_config_free, "stale config", NRT_INVALID_HANDLE) { return nrt_inspect_config_free(g_stale_inspect_cfg); }
CASE(LIVE, nrt_inspect_config_set_session_id, "NULL config", NRT_INVALID) { return nrt_inspect_config_set_session_id(NULL, 1); }
CASE(LIVE, nrt_inspect_config_set_output_dir, "NULL directory", NRT_INVALID) { return nrt_inspect_config_set_output_dir(g_inspect_cfg, NULL); }
CASE(LIVE, nrt_inspect_config_set_sys_trace_max_events_per_nc, "stale config", NRT_INVALID_HANDLE) {
    return nrt_inspect_config_set_sys_trace_max_events_per_nc(g_stale_inspect_cfg, 10);
}
CASE(LIVE, nrt_inspect_config_set_capture_enabled_for_nc, "foreign config", NRT_INVALID_HANDLE) {
    return nrt_inspect_config_set_capture_enabled_for_nc(FOREIGN, 0, true);
}
CASE(LIVE, nrt_inspect_config_set_capture_enabled_for_event_type_string, "unknown event type", NRT_INVALID) {
    return nrt_inspect_config_set_capture_enabled_for_event_type_string(g_inspect_cfg, "no_such_event", true);
}
CASE(LIVE, nrt_inspect_config_set_enable_inspect, "NULL config", NRT_INVALID) { return nrt_inspect_config_set_enable_inspect(NULL, true); }
CASE(LIVE, nrt_inspect_config_set_enable_inspect_on_fail, "stale config", NRT_INVALID_HANDLE) {
    return nrt_inspect_config_set_enable_inspect_on_fail(g_stale_inspect_cfg, true);
}
CASE(LIVE, nrt_inspect_begin_with_options, "stale options", NRT_INVALID_HANDLE) { return nrt_inspect_begin_with_options(g_stale_inspect_cfg); }
CASE(LIVE, nrt_inspect_config_get_all_activity_types, "NULL outputs", NRT_INVALID) { return nrt_inspect_config_get_all_activity_types(NULL, NULL); }
CASE(LIVE, nrt_inspect_config_get_enabled_activity_types, "stale config", NRT_INVALID_HANDLE) {
    const char **types = UNTOUCHED;
    size_t n = 77;
    return KEEPS(nrt_inspect_config_get_enabled_activity_types(g_stale_inspect_cfg, &types, &n), types);
}
CASE(LIVE, nrt_inspect_config_free_activity_types, "NULL list (only logs)", NRT_SUCCESS) {
    nrt_inspect_config_free_activity_types(NULL, 2);
    return NRT_SUCCESS;
}
CASE(LIVE, nrt_inspect_config_set_activity, "unknown activity", NRT_INVALID) {
    return nrt_inspect_config_set_activity(g_inspect_cfg, "no_such_activity", true);
}
CASE(LIVE, nrt_trace_stop, "NULL file name", NRT_INVALID) { return nrt_trace_stop(NULL); }
CASE(LIVE, nrt_trace_start, "started twice", NRT_INVALID) {
    if (nrt_trace_start(false) != NRT_SUCCESS)
        return NRT_FAILURE;
    NRT_STATUS r = nrt_trace_start(false);
    nrt_trace_stop("/dev/null");
    return r;
}
/* Async send/recv: the driver leaves the experimental gate unset, so no
 * logical core comes up; every call that needs one is refused. */
CASE(LIVE, nrt_async_sendrecv_get_max_num_communicators_per_lnc, "NULL num", NRT_INVALID) {
    return nrt_async_sendrecv_get_max_num_communicators_per_lnc(NULL);
}
CASE(LIVE, nrt_async_sendrecv_get_max_num_pending_request, "NULL num", NRT_INVALID) {
    return nrt_async_sendrecv_get_max_num_pending_request(NULL);
}
CASE(LIVE, nrt_async_sendrecv_init, "NEURON_RT_ASYNC_SENDRECV_EXPERIMENTAL_ENABLED unset", NRT_FAILURE) {
    return nrt_async_sendrecv_init(0);
}
CASE(LIVE, nrt_async_sendrecv_init, "logical core out of range", NRT_FAILURE) { return nrt_async_sendrecv_init(-1); }
CASE(LIVE, nrt_async_sendrecv_close, "core never initialised", NRT_FAILURE) { return nrt_async_sendrecv_close(0); }
CASE(LIVE, nrt_async_sendrecv_connect, "NULL send_comm", NRT_INVALID) { return nrt_async_sendrecv_connect("127.0.0.1", 1, 0, NULL); }
CASE(LIVE, nrt_async_sendrecv_connect, "NULL peer_ip", NRT_FAILURE) {
    nrt_async_sendrecv_comm_t *c = UNTOUCHED;
    return KEEPS(nrt_async_sendrecv_connect(NULL, 1, 0, &c), c);
}
CASE(LIVE, nrt_async_sendrecv_connect, "core not initialised", NRT_FAILURE) {
    nrt_async_sendrecv_comm_t *c = UNTOUCHED;
    return KEEPS(nrt_async_sendrecv_connect("127.0.0.1", 1, 0, &c), c);
}
CASE(LIVE, nrt_async_sendrecv_accept, "peer_ip not an address", NRT_FAILURE) {
    nrt_async_sendrecv_comm_t *c = UNTOUCHED;
    return KEEPS(nrt_async_sendrecv_accept("localhost:80", 0, 1, &c), c);
}
CASE(LIVE, nrt_async_sendrecv_accept, "peer_lnc out of range", NRT_FAILURE) {
    nrt_async_sendrecv_comm_t *c = UNTOUCHED;
    return KEEPS(nrt_async_sendrecv_accept("127.0.0.1", 128, 1, &c), c);
}
CASE(LIVE, nrt_async_sendrecv_test_comm, "NULL comm", NRT_INVALID_HANDLE) {
    bool done = false;
    return nrt_async_sendrecv_test_comm(NULL, &done);
}
CASE(LIVE, nrt_async_sendrecv_test_comm, "foreign comm", NRT_INVALID_HANDLE) {
    bool done = false;
    return nrt_async_sendrecv_test_comm((nrt_async_sendrecv_comm_t *)g_buf, &done);
}
CASE(LIVE, nrt_async_sendrecv_test_comm, "NULL done", NRT_INVALID) { return nrt_async_sendrecv_test_comm((nrt_async_sendrecv_comm_t *)g_buf, NULL); }
CASE(LIVE, nrt_async_sendrecv_send_tensor, "NULL tensor", NRT_FAILURE) {
    nrt_async_sendrecv_request_t *r = UNTOUCHED;
    return KEEPS(nrt_async_sendrecv_send_tensor(NULL, 0, 4, (nrt_async_sendrecv_comm_t *)g_buf, &r), r);
}
CASE(LIVE, nrt_async_sendrecv_send_tensor, "NULL comm", NRT_FAILURE) {
    nrt_async_sendrecv_request_t *r = UNTOUCHED;
    return KEEPS(nrt_async_sendrecv_send_tensor(g_tensor, 0, 4, NULL, &r), r);
}
CASE(LIVE, nrt_async_sendrecv_send_tensor, "foreign comm", NRT_INVALID_HANDLE) {
    nrt_async_sendrecv_request_t *r = UNTOUCHED;
    return KEEPS(nrt_async_sendrecv_send_tensor(g_tensor, 0, 4, (nrt_async_sendrecv_comm_t *)g_buf, &r), r);
}
CASE(LIVE, nrt_async_sendrecv_recv_tensor, "freed tensor", NRT_INVALID_HANDLE) {
    nrt_async_sendrecv_request_t *r = UNTOUCHED;
    return KEEPS(nrt_async_sendrecv_recv_tensor(g_stale_tensor, 0, 4, (nrt_async_sendrecv_comm_t *)g_buf, &r), r);
}
CASE(LIVE, nrt_async_sendrecv_recv_tensor, "NULL request", NRT_INVALID) {
    return nrt_async_sendrecv_recv_tensor(g_tensor, 0, 4, (nrt_async_sendrecv_comm_t *)g_buf, NULL);
}
CASE(LIVE, nrt_async_sendrecv_test_request, "NULL request", NRT_INVALID_HANDLE) {
    bool done = false;
    size_t size = 0;
    return nrt_async_sendrecv_test_request(NULL, &done, &size);
}
CASE(LIVE, nrt_async_sendrecv_test_request, "foreign request", NRT_INVALID_HANDLE) {
    bool done = false;
    size_t size = 0;
    return nrt_async_sendrecv_test_request((nrt_async_sendrecv_request_t *)g_buf, &done, &size);
}
CASE(LIVE, nrt_async_sendrecv_test_request, "NULL size", NRT_INVALID) {
    bool done = false;
    return nrt_async_sendrecv_test_request((nrt_async_sendrecv_request_t *)g_buf, &done, NULL);
}
CASE(LIVE, nrt_async_sendrecv_flush, "core not initialised", NRT_FAILURE) { return nrt_async_sendrecv_flush(0); }
CASE(LIVE, nrt_async_sendrecv_flush, "logical core out of range", NRT_FAILURE) { return nrt_async_sendrecv_flush(500); }
/* Last of the live rows: the session it starts is ended by nrt_close,
 * which writes nothing (nrt_inspect_stop would write into the cwd). */
CASE(LIVE, nrt_inspect_begin_with_options, "NULL options (the defaults, capturing nothing)", NRT_SUCCESS) {
    return nrt_inspect_begin_with_options(NULL);
}
CASE(AFTER_CLOSE, nrt_async_sendrecv_init, "after close", NRT_CLOSED) { return nrt_async_sendrecv_init(0); }
CASE(AFTER_CLOSE, nrt_debug_client_connect, "after close", NRT_CLOSED) {
    int fd = 0x5a5a;
    NRT_STATUS r = nrt_debug_client_connect(0, &fd);
    return fd == 0x5a5a ? r : NRT_FAILURE;
}
CASE(AFTER_CLOSE, nrt_sys_trace_start, "after close", NRT_CLOSED) {
    return nrt_sys_trace_start(g_trace_cfg);
}

/* ---- after nrt_close ---------------------------------------------------- */
CASE(AFTER_CLOSE, nrt_tensor_allocate, "after close", NRT_CLOSED) {
    nrt_tensor_t *t = UNTOUCHED;
    return KEEPS(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64, "t", &t), t);
}
CASE(AFTER_CLOSE, nrt_tensor_read, "handle from before close", NRT_CLOSED) { return nrt_tensor_read(g_tensor, g_buf, 0, 4); }
CASE(AFTER_CLOSE, nrt_load, "after close", NRT_CLOSED) {
    nrt_model_t *m = UNTOUCHED;
    return KEEPS(nrt_load(g_neff, g_neff_size, -1, -1, &m), m);
}
CASE(AFTER_CLOSE, nrt_execute, "model from before close", NRT_CLOSED) { return nrt_execute(g_model, g_set, g_set); }
CASE(AFTER_CLOSE, nrt_unload, "model from before close", NRT_CLOSED) { return nrt_unload(g_model); }
CASE(AFTER_CLOSE, nrt_get_dmabuf_fd, "after close", NRT_CLOSED) {
    int fd = -77;
    NRT_STATUS r = nrt_get_dmabuf_fd(0x1000, 4096, &fd);
    return fd == -77 ? r : NRT_FAILURE;
}
CASE(AFTER_CLOSE, nrt_host_device_id_rid_map_get, "after close", NRT_CLOSED) {
    uint32_t count = 4, map[4] = {77, 77, 77, 77};
    NRT_STATUS r = nrt_host_device_id_rid_map_get(&count, map);
    return count == 4 && map[0] == 77 ? r : NRT_FAILURE;
}
CASE(AFTER_CLOSE, nrta_get_sequence, "after close", NRT_CLOSED) {
    nrta_seq_t s = 77;
    NRT_STATUS r = nrta_get_sequence(0, NRTA_XU_COMPUTE, 0, &s);
    return s == 77 ? r : NRT_FAILURE;
}
CASE(AFTER_CLOSE, nrt_close, "second close (only logs)", NRT_SUCCESS) { nrt_close(); return NRT_SUCCESS; }
CASE(AFTER_CLOSE, nrt_get_total_vnc_count, "after close (queries still answer)", NRT_SUCCESS) {
    uint32_t n = 0;
    NRT_STATUS r = nrt_get_total_vnc_count(&n);
    return r == NRT_SUCCESS && n > 0 ? NRT_SUCCESS : NRT_FAILURE;
}

static int by_line(const void *a, const void *b) {
    return ((const struct row *)a)->line - ((const struct row *)b)->line;
}

static void run_phase(enum phase ph) {
    for (int i = 0; i < g_nrows; i++) {
        struct row *r = &g_rows[i];
        if (r->phase != ph)
            continue;
        NRT_STATUS got = r->call();
        g_checks++;
        if (got != r->want) {
            g_failures++;
            fprintf(stderr, "bad_args.c:%d: %s (%s) returned %s (%d), expected %s (%d)\n", r->line, r->fn, r->what,
                    nrt_get_status_as_str(got), (int)got, nrt_get_status_as_str(r->want), (int)r->want);
        }
    }
}

static void fixtures(void) {
    if (nrt_load(g_neff, g_neff_size, -1, -1, &g_model) != NRT_SUCCESS ||
        nrt_load(g_neff, g_neff_size, -1, -1, &g_stale_model) != NRT_SUCCESS ||
        nrt_unload(g_stale_model) != NRT_SUCCESS ||
        nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 4096, "t", &g_tensor) != NRT_SUCCESS ||
        nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 4096, "gone", &g_stale_tensor) != NRT_SUCCESS ||
        nrt_allocate_tensor_set(&g_set) != NRT_SUCCESS || nrt_allocate_tensor_set(&g_stale_set) != NRT_SUCCESS) {
        fprintf(stderr, "bad_args: fixtures could not be made\n");
        exit(2);
    }
    /* Keep copies of the handles: free and destroy NULL the caller's. */
    nrt_tensor_t *t = g_stale_tensor;
    nrt_tensor_free(&t);
    nrt_tensor_set_t *s = g_stale_set;
    nrt_destroy_tensor_set(&s);
    if (nrt_sys_trace_config_allocate(&g_trace_cfg) != NRT_SUCCESS ||
        nrt_sys_trace_config_allocate(&g_stale_trace_cfg) != NRT_SUCCESS ||
        nrt_sys_trace_fetch_options_allocate(&g_fetch_opts) != NRT_SUCCESS ||
        nrt_sys_trace_fetch_options_allocate(&g_stale_fetch_opts) != NRT_SUCCESS ||
        nrt_inspect_config_allocate(&g_inspect_cfg) != NRT_SUCCESS ||
        nrt_inspect_config_allocate(&g_stale_inspect_cfg) != NRT_SUCCESS ||
        nrt_profile_continuous_options_allocate(&g_cont_opts) != NRT_SUCCESS ||
        nrt_profile_continuous_options_allocate(&g_stale_cont_opts) != NRT_SUCCESS) {
        fprintf(stderr, "bad_args: profiling fixtures could not be made\n");
        exit(2);
    }
    nrt_sys_trace_config_free(g_stale_trace_cfg);
    nrt_sys_trace_fetch_options_free(g_stale_fetch_opts);
    nrt_inspect_config_free(g_stale_inspect_cfg);
    nrt_profile_continuous_options_free(g_stale_cont_opts);
}

int main(int argc, char **argv) {
    qsort(g_rows, (size_t)g_nrows, sizeof g_rows[0], by_line);
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (int i = 0; i < g_nrows; i++)
            printf("%s\n", g_rows[i].fn);
        return g_nrows < MAX_ROWS ? 0 : 2;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: bad_args COPY.neff | bad_args --list\n");
        return 2;
    }
    g_neff = read_file(argv[1], &g_neff_size);
    memset(g_buf, 0x11, sizeof g_buf);
    run_phase(BEFORE_INIT);
    if (nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "") != NRT_SUCCESS) {
        fprintf(stderr, "bad_args: nrt_init failed\n");
        return 2;
    }
    fixtures();
    run_phase(LIVE);
    nrt_close();
    run_phase(AFTER_CLOSE);
    printf("bad_args: %d rows\n", g_nrows);
    return finish("bad_args");
}
