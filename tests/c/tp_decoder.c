/* The tensor-parallel decoder through the C API, as an inference server
 * drives it: one pthread per rank loads the rank's context-encoding
 * (prefill) and token-generation (decode) NEFF with nrt_load_collectives
 * on its own logical core, allocates one device tensor per weight and KV
 * cache input (the names nrt_get_model_tensor_info gives), writes its
 * weight shards once and binds the same tensors to both models; then
 * executes the prefill and one decode step per token. Every rank's
 * `hidden` of every execution must be the same bits; rank 0's go to
 * OUT/hidden_I.bin (I = 0 the prefill) for the driver to check against
 * the reference.
 * DIR holds prefill/rankR.neff, decode/rankR.neff and `nrt gen tp-decoder
 * --data`'s data/: rankR/NAME.npy (the weight shards), x_prefill.npy
 * [batch, prompt, d_model] and x_decode.npy [steps, batch, 1, d_model].
 * Run with NEURON_LOGICAL_NC_CONFIG matching the NEFFs' LNC.
 * Usage: tp_decoder <DIR> <ranks> <OUT> */
#include <pthread.h>
#include <stdint.h>
#include "check.h"
#include "nrt/nrt_experimental.h"

#define MAXR 8
#define MAXSTEPS 16

static const char *dir;
static int ranks;
static void *x_prefill, *x_decode;
static size_t x_prefill_size, x_decode_size;
static size_t step_bytes;
static int steps, prompt;

/* Each rank's `hidden` per execution (prefill first) and sizes. */
static void *hidden[MAXR][MAXSTEPS + 1];
static size_t hidden_size[MAXR][2]; /* the prefill's, a decode step's */
static int failures[MAXR];

/* The payload of a version 1 .npy file (the header skipped) and, when
 * `dim0` is given, its shape's first dimension; NULL when the file does
 * not exist. */
static void *npy_payload(const char *path, size_t *size, long *dim0) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fclose(f);
    size_t n;
    unsigned char *b = read_file(path, &n);
    if (n < 10 || memcmp(b, "\x93NUMPY", 6) != 0 || b[6] != 1) {
        fprintf(stderr, "%s: not a version 1 .npy file\n", path);
        exit(2);
    }
    size_t start = 10 + (size_t)(b[8] | b[9] << 8);
    if (dim0) {
        char header[256] = {0};
        memcpy(header, b + 10, start - 10 < sizeof header - 1 ? start - 10 : sizeof header - 1);
        const char *shape = strstr(header, "'shape': (");
        *dim0 = shape ? strtol(shape + 10, NULL, 10) : 0;
    }
    *size = n - start;
    void *out = malloc(*size);
    memcpy(out, b + start, *size);
    free(b);
    return out;
}

static int is_token_input(const char *name) { return strcmp(name, "x") == 0 || strcmp(name, "position") == 0; }

static nrt_tensor_t *device_tensor(int vnc, size_t size, const char *name, const void *bytes) {
    nrt_tensor_t *t = NULL;
    if (nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, vnc, size, name, &t) != NRT_SUCCESS) return NULL;
    void *zeros = NULL;
    if (!bytes) bytes = zeros = calloc(1, size);
    NRT_STATUS s = nrt_tensor_write(t, bytes, 0, size);
    free(zeros);
    if (s != NRT_SUCCESS) nrt_tensor_free(&t);
    return t;
}

/* Rank `rank` on logical core `rank`; 0 when every step succeeded. */
static int rank_run(int rank) {
    char path[4096];
    size_t size;
    nrt_model_t *prefill = NULL, *decode = NULL;
    snprintf(path, sizeof path, "%s/prefill/rank%d.neff", dir, rank);
    void *neff = read_file(path, &size);
    NRT_STATUS s = nrt_load_collectives(neff, size, rank, -1, (uint32_t)rank, (uint32_t)ranks, &prefill);
    free(neff);
    if (s == NRT_SUCCESS) {
        snprintf(path, sizeof path, "%s/decode/rank%d.neff", dir, rank);
        neff = read_file(path, &size);
        s = nrt_load_collectives(neff, size, rank, -1, (uint32_t)rank, (uint32_t)ranks, &decode);
        free(neff);
    }
    if (s != NRT_SUCCESS) {
        fprintf(stderr, "rank %d: nrt_load_collectives -> %s\n", rank, nrt_get_status_as_str(s));
        if (prefill) nrt_unload(prefill);
        return 1;
    }
    int bad = 0;
    nrt_tensor_info_array_t *info = NULL;
    nrt_tensor_set_t *pin = NULL, *pout = NULL, *din = NULL, *dout = NULL;
    nrt_tensor_t *owned[32] = {0};
    int n_owned = 0;
    nrt_tensor_t *x_p = NULL, *x_d = NULL, *pos = NULL, *h_p = NULL, *h_d = NULL;
    size_t pos_size = 0;
    bad |= nrt_allocate_tensor_set(&pin) != NRT_SUCCESS || nrt_allocate_tensor_set(&pout) != NRT_SUCCESS;
    bad |= nrt_allocate_tensor_set(&din) != NRT_SUCCESS || nrt_allocate_tensor_set(&dout) != NRT_SUCCESS;
    /* The decode model's inputs name every shared tensor (and its outputs
     * hidden for one token). */
    bad |= nrt_get_model_tensor_info(decode, &info) != NRT_SUCCESS;
    for (uint64_t i = 0; !bad && i < info->tensor_count; i++) {
        nrt_tensor_info_t *t = &info->tensor_array[i];
        if (t->usage == NRT_TENSOR_USAGE_OUTPUT) {
            bad |= (h_d = device_tensor(rank, t->size, t->name, NULL)) == NULL;
            bad |= bad || nrt_add_tensor_to_tensor_set(dout, t->name, h_d) != NRT_SUCCESS;
            hidden_size[rank][1] = t->size;
            continue;
        }
        if (strcmp(t->name, "position") == 0) pos_size = t->size;
        if (is_token_input(t->name) || n_owned == 32) continue;
        snprintf(path, sizeof path, "%s/data/rank%d/%s.npy", dir, rank, t->name);
        void *bytes = npy_payload(path, &size, NULL);
        if (bytes && size != t->size) {
            fprintf(stderr, "rank %d: %s holds %zu bytes; the input takes %zu\n", rank, path, size, t->size);
            bad = 1;
        }
        /* Weights from their shards, the KV caches from zeros. */
        nrt_tensor_t *shared = bad ? NULL : device_tensor(rank, t->size, t->name, bytes);
        free(bytes);
        bad |= shared == NULL;
        if (!bad) {
            owned[n_owned++] = shared;
            bad |= nrt_add_tensor_to_tensor_set(pin, t->name, shared) != NRT_SUCCESS;
            bad |= nrt_add_tensor_to_tensor_set(din, t->name, shared) != NRT_SUCCESS;
        }
    }
    if (info) nrt_free_model_tensor_info(info);
    info = NULL;
    if (!bad) {
        bad |= nrt_get_model_tensor_info(prefill, &info) != NRT_SUCCESS;
        for (uint64_t i = 0; !bad && i < info->tensor_count; i++) {
            nrt_tensor_info_t *t = &info->tensor_array[i];
            if (t->usage == NRT_TENSOR_USAGE_OUTPUT) {
                bad |= (h_p = device_tensor(rank, t->size, t->name, NULL)) == NULL;
                bad |= bad || nrt_add_tensor_to_tensor_set(pout, t->name, h_p) != NRT_SUCCESS;
                hidden_size[rank][0] = t->size;
            }
        }
        if (info) nrt_free_model_tensor_info(info);
    }
    bad |= pos_size == 0;
    if (!bad) {
        bad |= (x_p = device_tensor(rank, x_prefill_size, "x", x_prefill)) == NULL;
        bad |= (x_d = device_tensor(rank, step_bytes, "x", NULL)) == NULL;
        bad |= (pos = device_tensor(rank, pos_size, "position", NULL)) == NULL;
    }
    if (!bad) {
        bad |= nrt_add_tensor_to_tensor_set(pin, "x", x_p) != NRT_SUCCESS;
        bad |= nrt_add_tensor_to_tensor_set(din, "x", x_d) != NRT_SUCCESS;
        bad |= nrt_add_tensor_to_tensor_set(din, "position", pos) != NRT_SUCCESS;
    }
    /* The prefill, then one decode step per token, reading hidden back
     * after each. */
    for (int e = 0; e <= steps && !bad; e++) {
        if (e > 0) {
            int32_t p[MAXSTEPS];
            int batch = (int)(pos_size / sizeof(int32_t));
            for (int b = 0; b < batch && b < MAXSTEPS; b++) p[b] = prompt + e - 1;
            bad |= batch > MAXSTEPS || nrt_tensor_write(pos, p, 0, pos_size) != NRT_SUCCESS;
            bad |= nrt_tensor_write(x_d, (char *)x_decode + (size_t)(e - 1) * step_bytes, 0, step_bytes) != NRT_SUCCESS;
        }
        s = bad ? NRT_FAILURE : (e == 0 ? nrt_execute(prefill, pin, pout) : nrt_execute(decode, din, dout));
        if (s != NRT_SUCCESS) {
            fprintf(stderr, "rank %d: execution %d -> %s\n", rank, e, nrt_get_status_as_str(s));
            bad = 1;
            break;
        }
        size_t n = hidden_size[rank][e == 0 ? 0 : 1];
        hidden[rank][e] = malloc(n);
        bad |= nrt_tensor_read(e == 0 ? h_p : h_d, hidden[rank][e], 0, n) != NRT_SUCCESS;
    }
    if (pin) nrt_destroy_tensor_set(&pin);
    if (pout) nrt_destroy_tensor_set(&pout);
    if (din) nrt_destroy_tensor_set(&din);
    if (dout) nrt_destroy_tensor_set(&dout);
    for (int i = 0; i < n_owned; i++) nrt_tensor_free(&owned[i]);
    nrt_tensor_t **mine[] = {&x_p, &x_d, &pos, &h_p, &h_d};
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++)
        if (*mine[i]) nrt_tensor_free(mine[i]);
    bad |= nrt_unload(decode) != NRT_SUCCESS;
    bad |= nrt_unload(prefill) != NRT_SUCCESS;
    return bad;
}

static void *rank_main(void *arg) {
    int r = (int)(long)arg;
    failures[r] = rank_run(r);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s <DIR> <ranks> <OUT>\n", argv[0]);
        return 2;
    }
    dir = argv[1];
    ranks = atoi(argv[2]);
    if (ranks < 1 || ranks > MAXR) {
        fprintf(stderr, "ranks %d: expected 1..%d\n", ranks, MAXR);
        return 2;
    }
    char path[4096];
    long batch = 0, decode_steps = 0;
    snprintf(path, sizeof path, "%s/data/x_prefill.npy", dir);
    x_prefill = npy_payload(path, &x_prefill_size, &batch);
    snprintf(path, sizeof path, "%s/data/x_decode.npy", dir);
    x_decode = npy_payload(path, &x_decode_size, &decode_steps);
    if (!x_prefill || !x_decode) {
        fprintf(stderr, "%s/data: no x_prefill.npy or x_decode.npy (nrt gen tp-decoder --data writes them)\n", dir);
        return 2;
    }
    /* x_decode is [steps, batch, 1, d_model], x_prefill [batch, prompt,
     * d_model]: a step's x is one token per sequence. */
    if (decode_steps < 1 || decode_steps > MAXSTEPS || batch < 1 || x_decode_size % (size_t)decode_steps != 0) {
        fprintf(stderr, "%s/data: x_decode.npy holds %ld steps (expected 1..%d)\n", dir, decode_steps, MAXSTEPS);
        return 2;
    }
    steps = (int)decode_steps;
    step_bytes = x_decode_size / (size_t)steps;
    prompt = (int)(x_prefill_size / step_bytes);
    OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "2.0", ""));
    pthread_t t[MAXR];
    for (long r = 0; r < ranks; r++) pthread_create(&t[r], NULL, rank_main, (void *)r);
    for (int r = 0; r < ranks; r++) pthread_join(t[r], NULL);
    for (int r = 0; r < ranks; r++) EXPECT(failures[r] == 0);
    int same = 1;
    for (int r = 1; r < ranks && !g_failures; r++)
        for (int e = 0; e <= steps; e++)
            if (hidden_size[r][e > 0] != hidden_size[0][e > 0] || memcmp(hidden[r][e], hidden[0][e], hidden_size[0][e > 0]) != 0) {
                fprintf(stderr, "rank %d: hidden of execution %d differs from rank 0's\n", r, e);
                same = 0;
            }
    EXPECT(same);
    for (int e = 0; e <= steps && !g_failures; e++) {
        snprintf(path, sizeof path, "%s/hidden_%d.bin", argv[3], e);
        FILE *f = fopen(path, "wb");
        EXPECT(f && fwrite(hidden[0][e], 1, hidden_size[0][e > 0], f) == hidden_size[0][e > 0]);
        if (f) fclose(f);
    }
    for (int r = 0; r < ranks; r++)
        for (int e = 0; e <= steps; e++) free(hidden[r][e]);
    nrt_close();
    free(x_prefill);
    free(x_decode);
    printf("tp_decoder: %d ranks, a prefill and %d decode steps, hidden identical on every rank: %s\n", ranks, steps, same ? "yes" : "no");
    return finish("tp_decoder");
}
