/* Collectives between ranks in two processes through the C API: each
 * process is one rank (logical core 0 of its own simulated core,
 * NEURON_RT_VISIBLE_CORES), the world is bootstrapped at
 * NEURON_RT_ROOT_COMM_ID and the bytes cross over libfabric. Each rank
 * joins the host-driven communicator, runs an fp32 all-reduce and an
 * int32 all-gather on the COLLECTIVES unit, then nrt_barrier and
 * nrt_all_gather, checking every result against a reference.
 * Usage: cc_procs RANK WORLD */
#include <string.h>
#include <time.h>
#include "check.h"
#include "nrt/nrt_async.h"
#include "nrt/nrt_experimental.h"

#define N 3001
#define MAXR 8

static int wait_seq(nrta_seq_t seq, const char *what) {
    for (int i = 0; i < 60000; i++) {
        bool done = false;
        if (nrta_is_completed(seq, &done) != NRT_SUCCESS) return 1;
        if (done) return 0;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "%s never completed\n", what);
    return 1;
}

static int run_cc(uint32_t rank, uint32_t world, nrt_tensor_t *in, nrt_tensor_t *out, nrt_dtype_t dt, nrt_cc_op_type_t cc, const char *what) {
    uint32_t group[MAXR];
    for (uint32_t i = 0; i < world; i++) group[i] = i;
    nrt_cc_comm_t comm = {group, rank, world, rank, world, 0};
    nrt_tensor_list_t li = {&in, 1}, lo = {&out, 1};
    nrt_cc_context_t *ctx = NULL;
    NRT_STATUS s = nrta_cc_prepare(&comm, &li, &lo, dt, NRT_OP_ADD, cc, &ctx);
    if (s != NRT_SUCCESS) {
        fprintf(stderr, "%s prepare -> %s\n", what, nrt_get_status_as_str(s));
        return 1;
    }
    NRT_STATUS ret = NRT_FAILURE;
    nrta_seq_t seq = 0;
    s = nrta_cc_schedule(&ctx, 0, &ret, &seq);
    if (s != NRT_SUCCESS || wait_seq(seq, what)) {
        fprintf(stderr, "%s schedule -> %s\n", what, nrt_get_status_as_str(s));
        return 1;
    }
    if (ret != NRT_SUCCESS) {
        fprintf(stderr, "%s completed with %s\n", what, nrt_get_status_as_str(ret));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3 && !(argc == 4 && strcmp(argv[3], "standalone") == 0)) {
        fprintf(stderr, "usage: cc_procs RANK WORLD [standalone]\n");
        return 2;
    }
    uint32_t r = (uint32_t)atoi(argv[1]), world = (uint32_t)atoi(argv[2]);
    if (world < 2 || world > MAXR || r >= world) return 2;
    OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""));
    if (argc == 4) {
        /* Twice each: the second runs on the world the first made. */
        for (int round = 0; round < 2; round++) {
            OK(nrt_barrier(0, r, world));
            uint32_t mine[5] = {r, 7, 8, 9, (uint32_t)round}, all[MAXR * 5];
            memset(all, 0xff, sizeof all);
            OK(nrt_all_gather(0, r, world, sizeof mine, mine, all));
            for (uint32_t q = 0; q < world; q++) EXPECT(all[q * 5] == q && all[q * 5 + 3] == 9 && all[q * 5 + 4] == (uint32_t)round);
        }
        nrt_close();
        printf("cc_procs rank %u of %u (standalone): ", r, world);
        return finish("cc_procs");
    }
    OK(nrt_cc_global_comm_init(0, r, world));
    nrt_tensor_t *a = NULL, *b = NULL, *gi = NULL, *g = NULL;
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, N * sizeof(float), "a", &a));
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, N * sizeof(float), "b", &b));
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, N * sizeof(int32_t), "gi", &gi));
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, world * N * sizeof(int32_t), "g", &g));
    static float x[N], y[N];
    static int32_t gv[MAXR * N];
    for (int i = 0; i < N; i++) x[i] = (float)((r + 1) * (i % 7));
    OK(nrt_tensor_write(a, x, 0, sizeof x));
    EXPECT(run_cc(r, world, a, b, NRT_DTYPE_FLOAT32, NRT_CC_ALLREDUCE, "all-reduce") == 0);
    OK(nrt_tensor_read(b, y, 0, sizeof y));
    float tri = (float)(world * (world + 1) / 2);
    int bad = 0;
    for (int i = 0; i < N && !bad; i++) bad = y[i] != tri * (float)(i % 7);
    EXPECT(!bad);
    for (int i = 0; i < N; i++) gv[i] = (int32_t)r * 100000 + i;
    OK(nrt_tensor_write(gi, gv, 0, N * sizeof(int32_t)));
    EXPECT(run_cc(r, world, gi, g, NRT_DTYPE_INT32, NRT_CC_ALLGATHER, "all-gather") == 0);
    OK(nrt_tensor_read(g, gv, 0, world * N * sizeof(int32_t)));
    bad = 0;
    for (uint32_t k = 0; k < world * N && !bad; k++) bad = gv[k] != (int32_t)((k / N) * 100000 + k % N);
    EXPECT(!bad);
    OK(nrt_barrier(0, r, world));
    uint32_t mine[4] = {r, 7, 8, 9}, all[MAXR * 4];
    OK(nrt_all_gather(0, r, world, sizeof mine, mine, all));
    for (uint32_t q = 0; q < world; q++) EXPECT(all[q * 4] == q && all[q * 4 + 3] == 9);
    nrt_tensor_free(&a);
    nrt_tensor_free(&b);
    nrt_tensor_free(&gi);
    nrt_tensor_free(&g);
    nrt_close();
    printf("cc_procs rank %u of %u: ", r, world);
    return finish("cc_procs");
}
