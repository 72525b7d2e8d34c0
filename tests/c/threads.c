/* Thread safety: several pthreads execute concurrently (two models on
 * two logical cores, each thread with its own tensors) while another
 * thread allocates and frees tensors; every output is checked.
 * Usage: threads <copy.neff> */
#include <pthread.h>
#include "check.h"

#define BYTES (8 * 128 * 4)
#define THREADS 4
#define RUNS 4

static nrt_model_t *models[2];
static int thread_failures[THREADS + 1];

static void *worker(void *arg) {
    int id = (int)(long)arg;
    int vnc = id % 2;
    uint32_t *x = malloc(BYTES), *y = malloc(BYTES);
    nrt_tensor_t *tin = NULL, *tout = NULL;
    nrt_tensor_set_t *ins = NULL, *outs = NULL;
    int bad = 0;
    bad |= nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, vnc, BYTES, "input", &tin) != NRT_SUCCESS;
    bad |= nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, vnc, BYTES, "output", &tout) != NRT_SUCCESS;
    bad |= nrt_allocate_tensor_set(&ins) != NRT_SUCCESS;
    bad |= nrt_allocate_tensor_set(&outs) != NRT_SUCCESS;
    bad |= nrt_add_tensor_to_tensor_set(ins, "input", tin) != NRT_SUCCESS;
    bad |= nrt_add_tensor_to_tensor_set(outs, "output", tout) != NRT_SUCCESS;
    for (int run = 0; run < RUNS && !bad; run++) {
        for (int i = 0; i < BYTES / 4; i++) x[i] = (uint32_t)(id * 1000003u + run * 7919u + (uint32_t)i);
        bad |= nrt_tensor_write(tin, x, 0, BYTES) != NRT_SUCCESS;
        NRT_STATUS s = nrt_execute(models[vnc], ins, outs);
        if (s != NRT_SUCCESS) {
            fprintf(stderr, "thread %d run %d: nrt_execute -> %s\n", id, run, nrt_get_status_as_str(s));
            bad = 1;
        }
        bad |= nrt_tensor_read(tout, y, 0, BYTES) != NRT_SUCCESS;
        if (memcmp(x, y, BYTES) != 0) {
            fprintf(stderr, "thread %d run %d: output differs from input\n", id, run);
            bad = 1;
        }
    }
    nrt_destroy_tensor_set(&ins);
    nrt_destroy_tensor_set(&outs);
    nrt_tensor_free(&tin);
    nrt_tensor_free(&tout);
    free(x);
    free(y);
    thread_failures[id] = bad;
    return NULL;
}

static void *churn(void *arg) {
    (void)arg;
    int bad = 0;
    for (int i = 0; i < 200; i++) {
        nrt_tensor_t *t = NULL;
        bad |= nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 2, 4096, "churn", &t) != NRT_SUCCESS;
        bad |= nrt_tensor_memset(t, 0, i & 0xff, 4096) != NRT_SUCCESS;
        nrt_tensor_free(&t);
        bad |= t != NULL;
    }
    thread_failures[THREADS] = bad;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s <copy.neff>\n", argv[0]);
        return 2;
    }
    size_t size = 0;
    void *neff = read_file(argv[1], &size);
    OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""));
    OK(nrt_load(neff, size, 0, -1, &models[0]));
    OK(nrt_load(neff, size, 1, -1, &models[1]));
    pthread_t th[THREADS + 1];
    for (long i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, worker, (void *)i);
    pthread_create(&th[THREADS], NULL, churn, NULL);
    for (int i = 0; i <= THREADS; i++) {
        pthread_join(th[i], NULL);
        EXPECT(thread_failures[i] == 0);
    }
    OK(nrt_unload(models[0]));
    OK(nrt_unload(models[1]));
    nrt_close();
    free(neff);
    return finish("threads");
}
