/* Collectives between the logical cores of one process through the C
 * API: one pthread per rank, world sizes 2, 4 and 8 (run with
 * NEURON_LOGICAL_NC_CONFIG=1 on the default trn2 device: eight cores).
 * Each rank prepares and schedules all-reduce (fp32 add, in place and
 * not), all-gather (int32) and reduce-scatter (int16 max) on the
 * COLLECTIVES unit, waits for completion and checks its output against a
 * reference; then nrt_barrier and nrt_all_gather over the world.
 * Usage: cc_api */
#include <pthread.h>
#include <time.h>
#include "check.h"
#include "nrt/nrt_async.h"
#include "nrt/nrt_experimental.h"

#define N 1000
#define MAXR 8

static int world;
static int failures[MAXR];

static int wait_seq(nrta_seq_t seq, int rank, const char *what) {
    for (int i = 0; i < 20000; i++) {
        bool done = false;
        if (nrta_is_completed(seq, &done) != NRT_SUCCESS) return 1;
        if (done) return 0;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "rank %d: %s never completed\n", rank, what);
    return 1;
}

/* prepare + schedule + wait; returns 0 on success. */
static int run_cc(int rank, nrt_tensor_t **in, size_t nin, nrt_tensor_t **out, size_t nout, nrt_dtype_t dt, nrt_op_type_t op, nrt_cc_op_type_t cc, int queue, const char *what) {
    uint32_t group[MAXR];
    for (int i = 0; i < world; i++) group[i] = (uint32_t)i;
    nrt_cc_comm_t comm = {group, (uint32_t)rank, (uint32_t)world, (uint32_t)rank, (uint32_t)world, (uint32_t)rank};
    nrt_tensor_list_t li = {in, nin}, lo = {out, nout};
    nrt_cc_context_t *ctx = NULL;
    NRT_STATUS s = nrta_cc_prepare(&comm, &li, &lo, dt, op, cc, &ctx);
    if (s != NRT_SUCCESS || ctx == NULL) {
        fprintf(stderr, "rank %d: %s prepare -> %s\n", rank, what, nrt_get_status_as_str(s));
        return 1;
    }
    NRT_STATUS ret = NRT_FAILURE;
    nrta_seq_t seq = 0;
    s = nrta_cc_schedule(&ctx, queue, &ret, &seq);
    if (s != NRT_SUCCESS || ctx != NULL) {
        fprintf(stderr, "rank %d: %s schedule -> %s\n", rank, what, nrt_get_status_as_str(s));
        return 1;
    }
    if (wait_seq(seq, rank, what)) return 1;
    if (ret != NRT_SUCCESS) {
        fprintf(stderr, "rank %d: %s completed with %s\n", rank, what, nrt_get_status_as_str(ret));
        return 1;
    }
    return 0;
}

static void *rank_main(void *arg) {
    int r = (int)(long)arg, bad = 0;
    nrt_tensor_t *a = NULL, *b = NULL, *g = NULL, *gi = NULL, *rs = NULL, *ro = NULL;
    float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float));
    int32_t *gv = malloc((size_t)world * N * sizeof(int32_t));
    int16_t *rv = malloc((size_t)world * N * sizeof(int16_t)), ov[N];
    bad |= nrt_cc_global_comm_init((uint32_t)r, (uint32_t)r, MAXR) != NRT_SUCCESS;
    bad |= nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, r, N * sizeof(float), "a", &a) != NRT_SUCCESS;
    bad |= nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, r, N * sizeof(float), "b", &b) != NRT_SUCCESS;
    bad |= nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, r, N * sizeof(int32_t), "gi", &gi) != NRT_SUCCESS;
    bad |= nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, r, (size_t)world * N * sizeof(int32_t), "g", &g) != NRT_SUCCESS;
    bad |= nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, r, (size_t)world * N * sizeof(int16_t), "rs", &rs) != NRT_SUCCESS;
    bad |= nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, r, N * sizeof(int16_t), "ro", &ro) != NRT_SUCCESS;
    if (bad) goto done;
    for (int i = 0; i < N; i++) x[i] = (float)((r + 1) * (i % 5));
    bad |= nrt_tensor_write(a, x, 0, N * sizeof(float)) != NRT_SUCCESS;
    /* all-reduce a -> b, then b in place (sums twice over). */
    bad |= run_cc(r, &a, 1, &b, 1, NRT_DTYPE_FLOAT32, NRT_OP_ADD, NRT_CC_ALLREDUCE, 0, "all-reduce");
    bad |= run_cc(r, &b, 1, &b, 1, NRT_DTYPE_FLOAT32, NRT_OP_ADD, NRT_CC_ALLREDUCE, 1, "in-place all-reduce");
    bad |= nrt_tensor_read(b, y, 0, N * sizeof(float)) != NRT_SUCCESS;
    float tri = (float)(world * (world + 1) / 2);
    for (int i = 0; i < N && !bad; i++) {
        if (y[i] != tri * (float)world * (float)(i % 5)) {
            fprintf(stderr, "rank %d: all-reduce element %d is %g, expected %g\n", r, i, y[i], tri * world * (i % 5));
            bad = 1;
        }
    }
    /* all-gather of int32 rank tags. */
    for (int i = 0; i < N; i++) gv[i] = r * 100000 + i;
    bad |= nrt_tensor_write(gi, gv, 0, N * sizeof(int32_t)) != NRT_SUCCESS;
    bad |= run_cc(r, &gi, 1, &g, 1, NRT_DTYPE_INT32, NRT_OP_ADD, NRT_CC_ALLGATHER, 2, "all-gather");
    bad |= nrt_tensor_read(g, gv, 0, (size_t)world * N * sizeof(int32_t)) != NRT_SUCCESS;
    for (int k = 0; k < world * N && !bad; k++) {
        if (gv[k] != (k / N) * 100000 + k % N) {
            fprintf(stderr, "rank %d: all-gather element %d is %d\n", r, k, gv[k]);
            bad = 1;
        }
    }
    /* reduce-scatter with max over int16. */
    for (int k = 0; k < world * N; k++) rv[k] = (int16_t)(((k * 7 + r * 13) % 101) - 50);
    bad |= nrt_tensor_write(rs, rv, 0, (size_t)world * N * sizeof(int16_t)) != NRT_SUCCESS;
    bad |= run_cc(r, &rs, 1, &ro, 1, NRT_DTYPE_INT16, NRT_OP_MAX, NRT_CC_REDUCESCATTER, 0, "reduce-scatter");
    bad |= nrt_tensor_read(ro, ov, 0, N * sizeof(int16_t)) != NRT_SUCCESS;
    for (int i = 0; i < N && !bad; i++) {
        int k = r * N + i, want = -1000;
        for (int q = 0; q < world; q++) {
            int v = ((k * 7 + q * 13) % 101) - 50;
            if (v > want) want = v;
        }
        if (ov[i] != want) {
            fprintf(stderr, "rank %d: reduce-scatter element %d is %d, expected %d\n", r, i, ov[i], want);
            bad = 1;
        }
    }
    /* Host-side calls over the same ranks. */
    bad |= nrt_barrier(r, (uint32_t)r, (uint32_t)world) != NRT_SUCCESS;
    {
        uint32_t mine[4] = {(uint32_t)r, 7, 8, 9}, all[MAXR * 4];
        bad |= nrt_all_gather(r, (uint32_t)r, (uint32_t)world, sizeof mine, mine, all) != NRT_SUCCESS;
        for (int q = 0; q < world && !bad; q++) bad |= all[q * 4] != (uint32_t)q || all[q * 4 + 3] != 9;
    }
done:
    nrt_tensor_free(&a);
    nrt_tensor_free(&b);
    nrt_tensor_free(&g);
    nrt_tensor_free(&gi);
    nrt_tensor_free(&rs);
    nrt_tensor_free(&ro);
    free(x);
    free(y);
    free(gv);
    free(rv);
    failures[r] = bad;
    return NULL;
}

int main(void) {
    OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""));
    uint32_t n = 0;
    OK(nrt_get_visible_vnc_count(&n));
    EXPECT(n == 8);
    /* Context rules: the same world again is fine, another size is not. */
    OK(nrt_cc_global_comm_init(0, 0, MAXR));
    EXPECT_STATUS(nrt_cc_global_comm_init(0, 0, 4), NRT_INVALID);
    OK(nrt_build_global_comm(0, 0, 2));
    EXPECT_STATUS(nrt_build_global_comm(1, 1, 3), NRT_INVALID);
    int sizes[3] = {2, 4, 8};
    for (int w = 0; w < 3; w++) {
        world = sizes[w];
        pthread_t t[MAXR];
        for (int r = 0; r < world; r++) EXPECT(pthread_create(&t[r], NULL, rank_main, (void *)(long)r) == 0);
        for (int r = 0; r < world; r++) pthread_join(t[r], NULL);
        for (int r = 0; r < world; r++) {
            if (failures[r]) {
                fprintf(stderr, "world %d: rank %d failed\n", world, r);
                return 1;
            }
        }
        printf("cc_api: world of %d ranks ok\n", world);
    }
    nrt_close();
    return finish("cc_api");
}
