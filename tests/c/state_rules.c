/* Lifecycle rules: what works before nrt_init, NRT_UNINITIALIZED and
 * NRT_CLOSED where documented, re-init after close, the ucode state rule
 * and the documented status of not-yet-implemented families. */
#include "check.h"
#include "nrt/nrt_experimental.h"
#include "nrt/nrt_version.h"
#include "nrt/nrt_async.h"
#include "nrt/nrt_profile.h"
#include "nrt/nrt_sys_trace.h"

int main(void) {
    uint32_t n = 0;
    nrt_tensor_t *t = NULL;
    nrt_tensor_set_t *set = NULL;
    nrt_model_t *m = NULL;
    char neff[16] = {0};

    /* Before init: queries work, everything else is NRT_UNINITIALIZED. */
    OK(nrt_get_total_vnc_count(&n));
    EXPECT(n == 4); /* one simulated trn2 device, LNC 2 */
    OK(nrt_get_visible_vnc_count(&n));
    EXPECT(n == 4);
    OK(nrt_get_total_nc_count(&n));
    EXPECT_STATUS(nrt_get_total_vnc_count(NULL), NRT_INVALID);
    nrt_version_t v;
    memset(&v, 0, sizeof v);
    OK(nrt_get_version(&v, sizeof v));
    EXPECT(strncmp(v.rt_detail, "nrt-rs ", 7) == 0);
    EXPECT(strstr(v.rt_detail, "(libnrt 2.32 API)") != NULL);
    EXPECT(v.rt_major == NRT_RS_LIBNRT_MAJOR && v.rt_minor == NRT_RS_LIBNRT_MINOR);
    EXPECT(v.rt_major == 2 && v.rt_minor == 32);
    EXPECT(strlen(v.git_hash) == 40);
    /* A smaller (older) struct: only its bytes are written. */
    uint64_t small[2] = {0, 0xdeadbeef};
    OK(nrt_get_version((nrt_version_t *)small, 8));
    EXPECT(small[1] == 0xdeadbeef);
    nrt_instance_info_t info;
    OK(nrt_get_instance_info(&info, sizeof info));
    EXPECT(info.family == NRT_INSTANCE_TRN2);
    EXPECT(strcmp(nrt_get_status_as_str(NRT_CLOSED), "NRT_CLOSED") == 0);
    EXPECT(strcmp(nrt_get_status_as_str(NRT_EXEC_COMPLETED_WITH_NUM_ERR), "NRT_EXEC_COMPLETED_WITH_NUM_ERR") == 0);
    EXPECT(nrt_get_status_as_str((NRT_STATUS)12) != NULL);

    EXPECT_STATUS(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64, "t", &t), NRT_UNINITIALIZED);
    EXPECT(t == NULL);
    EXPECT_STATUS(nrt_allocate_tensor_set(&set), NRT_UNINITIALIZED);
    EXPECT_STATUS(nrt_load(neff, sizeof neff, -1, -1, &m), NRT_UNINITIALIZED);
    EXPECT(m == NULL);
    EXPECT_STATUS(nrt_barrier(0, 0, 1), NRT_UNINITIALIZED);

    /* Pool-engine ucode: stored only before init (an empty half keeps the
     * stock half at init; a later call replaces an earlier one). */
    uint8_t iram[16] = {1, 2, 3}, dram[8] = {4};
    nrt_ucode_info uc = {{iram, sizeof iram}, {dram, sizeof dram}};
    nrt_ucode_info empty = {{NULL, 0}, {NULL, 0}};
    OK(nrt_set_pool_eng_ucode(&empty));
    OK(nrt_set_pool_eng_ucode(&uc));
    EXPECT_STATUS(nrt_set_pool_eng_ucode(NULL), NRT_INVALID);
    nrt_ucode_info bad = {{NULL, 4}, {NULL, 0}};
    EXPECT_STATUS(nrt_set_pool_eng_ucode(&bad), NRT_INVALID);

    EXPECT_STATUS(nrt_init((nrt_framework_type_t)9, "", ""), NRT_INVALID);
    OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""));
    OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "")); /* idempotent */
    /* libnrt's guard: 0xd while initialised. */
    EXPECT_STATUS(nrt_set_pool_eng_ucode(&uc), NRT_UNINITIALIZED);
    EXPECT(NRT_UNINITIALIZED == 0xd);
    OK(nrt_get_visible_vnc_count(&n));
    EXPECT(n == 4);
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64, "t", &t));
    OK(nrt_allocate_tensor_set(&set));
    OK(nrt_barrier(0, 0, 1));
    EXPECT_STATUS(nrt_barrier(0, 2, 2), NRT_INVALID);
    OK(nrt_build_global_comm(0, 0, 1));
    OK(nrt_async_drain_queued_execs(1));
    EXPECT_STATUS(nrt_async_drain_queued_execs(99), NRT_INVALID);

    /* Async refusals leave the outputs alone: a schedule that fails
     * validation, a sequence id never issued. */
    nrta_seq_t seq = 77;
    NRT_STATUS done = NRT_SUCCESS;
    EXPECT_STATUS(nrta_execute_schedule(m, set, set, 0, &done, &seq), NRT_INVALID);
    EXPECT(seq == 77 && done == NRT_SUCCESS);
    bool completed = true;
    EXPECT_STATUS(nrta_is_completed(1, &completed), NRT_INVALID);
    EXPECT(completed);
    /* A collective schedule without a context: refused, outputs untouched. */
    EXPECT_STATUS(nrta_cc_schedule(NULL, 0, &done, &seq), NRT_INVALID);
    EXPECT(seq == 77);
    /* Observability: configurations are plain objects in any state; a
     * trace started here ends with nrt_close. */
    nrt_profile_continuous_options_t *po = NULL;
    OK(nrt_profile_continuous_options_allocate(&po));
    EXPECT(po != NULL);
    OK(nrt_profile_continuous_options_free(po));
    nrt_sys_trace_config_t *sc = NULL;
    OK(nrt_sys_trace_config_allocate(&sc));
    EXPECT(sc != NULL);
    nrt_sys_trace_config_free(NULL);
    OK(nrt_trace_start(false));
    EXPECT_STATUS(nrt_trace_start(false), NRT_INVALID); /* one system trace at a time */
    int err = 0;
    char msg[64] = {0};
    EXPECT(nrt_get_libnccl_net(&err, msg, sizeof msg) == NULL);
    EXPECT(err != 0 && msg[0] != 0);

    nrt_close();
    /* After close: NRT_CLOSED. */
    EXPECT_STATUS(nrt_sys_trace_start(sc), NRT_CLOSED);
    EXPECT_STATUS(nrt_trace_stop("never-written.json"), NRT_CLOSED);
    nrt_sys_trace_config_free(sc);
    nrt_tensor_t *t2 = NULL;
    EXPECT_STATUS(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64, "t2", &t2), NRT_CLOSED);
    EXPECT(t2 == NULL);
    EXPECT_STATUS(nrt_allocate_tensor_set(&set), NRT_CLOSED);
    EXPECT_STATUS(nrt_tensor_write(t, "x", 0, 1), NRT_CLOSED);
    EXPECT_STATUS(nrt_load(neff, sizeof neff, -1, -1, &m), NRT_CLOSED);
    EXPECT_STATUS(nrt_barrier(0, 0, 1), NRT_CLOSED);
    OK(nrt_get_total_vnc_count(&n));
    /* libnrt's guard: 0xe after close. */
    EXPECT_STATUS(nrt_set_pool_eng_ucode(&uc), NRT_CLOSED);
    EXPECT(NRT_CLOSED == 0xe);
    nrt_close(); /* a second close only logs */

    /* A closed runtime can be initialised again. */
    OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""));
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64, "t3", &t2));
    nrt_tensor_free(&t2);
    /* The trace started before the close ended with it. */
    OK(nrt_trace_start(true));
    OK(nrt_trace_stop("/dev/null"));
    EXPECT(t2 == NULL);
    nrt_close();
    return finish("state_rules");
}
