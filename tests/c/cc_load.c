/* In-NEFF collectives through the C API: an all-reduce NEFF (fp32 add of
 * N elements, written by nrt_gen::cc) loaded with nrt_load_collectives
 * and executed with nrt_execute by one pthread per rank, each on its own
 * logical core (run with NEURON_LOGICAL_NC_CONFIG=1); every rank checks
 * its output, unloads, loads again and runs once more.
 * `cc_load NEFF WORLD RANK` runs the one rank RANK in this process (on
 * logical core 0): the same program, started once per rank, for worlds
 * whose ranks are other processes joined through NEURON_RT_ROOT_COMM_ID.
 * Usage: cc_load <allreduce.neff> <world> [rank] */
#include <pthread.h>
#include "check.h"

#define N 1000
#define MAXR 8

static void *neff;
static size_t neff_size;
static int world;
static int failures[MAXR];

/* Loads, executes twice with different inputs and checks; 0 when right. */
static int rank_run(int rank, int vnc) {
    int bad = 0;
    float x[N], y[N];
    nrt_model_t *model = NULL;
    NRT_STATUS s = nrt_load_collectives(neff, neff_size, vnc, -1, (uint32_t)rank, (uint32_t)world, &model);
    if (s != NRT_SUCCESS || model == NULL) {
        fprintf(stderr, "rank %d: nrt_load_collectives -> %s\n", rank, nrt_get_status_as_str(s));
        return 1;
    }
    nrt_tensor_t *tin = NULL, *tout = NULL;
    nrt_tensor_set_t *ins = NULL, *outs = NULL;
    bad |= nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, vnc, sizeof x, "input", &tin) != NRT_SUCCESS;
    bad |= nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, vnc, sizeof y, "output", &tout) != NRT_SUCCESS;
    bad |= nrt_allocate_tensor_set(&ins) != NRT_SUCCESS || nrt_allocate_tensor_set(&outs) != NRT_SUCCESS;
    if (!bad) {
        bad |= nrt_add_tensor_to_tensor_set(ins, "input", tin) != NRT_SUCCESS;
        bad |= nrt_add_tensor_to_tensor_set(outs, "output", tout) != NRT_SUCCESS;
    }
    for (int run = 0; run < 2 && !bad; run++) {
        for (int i = 0; i < N; i++) x[i] = (float)((rank + 1) * ((i + run) % 5));
        bad |= nrt_tensor_write(tin, x, 0, sizeof x) != NRT_SUCCESS;
        s = nrt_execute(model, ins, outs);
        if (s != NRT_SUCCESS) {
            fprintf(stderr, "rank %d: nrt_execute -> %s\n", rank, nrt_get_status_as_str(s));
            bad = 1;
            break;
        }
        bad |= nrt_tensor_read(tout, y, 0, sizeof y) != NRT_SUCCESS;
        float tri = (float)(world * (world + 1) / 2);
        for (int i = 0; i < N; i++) {
            if (y[i] != tri * (float)((i + run) % 5)) {
                fprintf(stderr, "rank %d run %d: element %d is %g, expected %g\n", rank, run, i, y[i], tri * (float)((i + run) % 5));
                bad = 1;
                break;
            }
        }
    }
    if (ins) nrt_destroy_tensor_set(&ins);
    if (outs) nrt_destroy_tensor_set(&outs);
    if (tin) nrt_tensor_free(&tin);
    if (tout) nrt_tensor_free(&tout);
    bad |= nrt_unload(model) != NRT_SUCCESS;
    return bad;
}

static void *rank_main(void *arg) {
    int r = (int)(long)arg;
    /* Load, run, unload; then again: the group meets afresh. */
    failures[r] = rank_run(r, r) || rank_run(r, r);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s <allreduce.neff> <world> [rank]\n", argv[0]);
        return 2;
    }
    neff = read_file(argv[1], &neff_size);
    world = atoi(argv[2]);
    if (world < 1 || world > MAXR) {
        fprintf(stderr, "world %d: expected 1..%d\n", world, MAXR);
        return 2;
    }
    OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "2.0", ""));
    /* A rank outside the world is refused before anything loads. */
    nrt_model_t *untouched = (nrt_model_t *)0x3;
    EXPECT_STATUS(nrt_load_collectives(neff, neff_size, 0, -1, (uint32_t)world, (uint32_t)world, &untouched), NRT_INVALID);
    EXPECT(untouched == (nrt_model_t *)0x3);
    if (argc > 3) {
        int rank = atoi(argv[3]);
        EXPECT(rank >= 0 && rank < world);
        EXPECT(rank_run(rank, 0) == 0);
        nrt_close();
        free(neff);
        printf("cc_load: rank %d of %d\n", rank, world);
        return finish("cc_load");
    }
    pthread_t t[MAXR];
    for (long r = 0; r < world; r++) pthread_create(&t[r], NULL, rank_main, (void *)r);
    for (int r = 0; r < world; r++) pthread_join(t[r], NULL);
    for (int r = 0; r < world; r++) EXPECT(failures[r] == 0);
    nrt_close();
    printf("cc_load: world of %d ranks in threads\n", world);
    free(neff);
    return finish("cc_load");
}
