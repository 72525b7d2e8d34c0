/* GPSIMD custom ops through the C API: the custom_ops example (relu and a
 * row-wise softmax run by the eight Q7 cores of the POOL engine) against
 * references computed here, the kernels' printf in the runtime log, and a
 * buggy kernel (out-of-bounds write) that fails with
 * NRT_EXEC_COMPLETED_WITH_ERR on the same logical core: fail-stop for that
 * model, and after it is unloaded the core runs the good models again.
 *
 * Usage: execute_custom_ops <custom_ops.neff> <buggy.neff> <log file>
 * (run with NEURON_RT_LOG_LOCATION=<log file>, NEURON_RT_LOG_LEVEL=INFO and
 * NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES set). */
#include <math.h>
#include <stdint.h>
#include "check.h"
#include "nrt/nrt_experimental.h"

#define ROWS 128
#define COLS 512
#define N (ROWS * COLS)
#define BYTES (N * 4)
/* Largest distance, in units in the last place, allowed between the
 * kernel's softmax and the reference (the kernel's expf is not libm's). */
#define SOFTMAX_MAX_ULP 4

static uint32_t g_seed = 0x12345678u;

/* xorshift32 values in [-4, 4). */
static void fill(float *x) {
    for (int i = 0; i < N; i++) {
        g_seed ^= g_seed << 13;
        g_seed ^= g_seed >> 17;
        g_seed ^= g_seed << 5;
        x[i] = (float)g_seed / 4294967296.0f * 8.0f - 4.0f;
    }
}

static void relu_ref(const float *x, float *y) {
    for (int i = 0; i < N; i++) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

/* Row-wise softmax in float: max, sum of exponentials, scale by 1/sum. */
static void softmax_ref(const float *x, float *z) {
    for (int r = 0; r < ROWS; r++) {
        const float *row = x + r * COLS;
        float max = -INFINITY, sum = 0.0f;
        for (int c = 0; c < COLS; c++) max = row[c] > max ? row[c] : max;
        for (int c = 0; c < COLS; c++) sum += expf(row[c] - max);
        float inv = 1.0f / sum;
        for (int c = 0; c < COLS; c++) z[r * COLS + c] = expf(row[c] - max) * inv;
    }
}

/* Distance in ulps between two finite floats of the same sign. */
static uint32_t ulps(float a, float b) {
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    if ((ia < 0) != (ib < 0)) return a == b ? 0 : UINT32_MAX;
    return ia > ib ? (uint32_t)(ia - ib) : (uint32_t)(ib - ia);
}

struct io {
    nrt_tensor_t *x, *y, *z;
    nrt_tensor_set_t *ins, *outs;
    float *hx, *hy, *hz, *ry, *rz;
};

/* One execution on fresh data, outputs checked against the references.
 * Returns the status of nrt_execute. */
static NRT_STATUS run_and_check(nrt_model_t *model, struct io *io, int expect_ok) {
    fill(io->hx);
    OK(nrt_tensor_write(io->x, io->hx, 0, BYTES));
    memset(io->hy, 0xff, BYTES);
    memset(io->hz, 0xff, BYTES);
    OK(nrt_tensor_write(io->y, io->hy, 0, BYTES));
    OK(nrt_tensor_write(io->z, io->hz, 0, BYTES));
    NRT_STATUS st = nrt_execute(model, io->ins, io->outs);
    if (!expect_ok) return st;
    EXPECT_STATUS(st, NRT_SUCCESS);
    OK(nrt_tensor_read(io->y, io->hy, 0, BYTES));
    OK(nrt_tensor_read(io->z, io->hz, 0, BYTES));
    relu_ref(io->hx, io->ry);
    softmax_ref(io->hx, io->rz);
    EXPECT(memcmp(io->hy, io->ry, BYTES) == 0); /* relu is exact */
    uint32_t worst = 0;
    int worst_at = 0;
    for (int i = 0; i < N; i++) {
        uint32_t d = ulps(io->hz[i], io->rz[i]);
        if (d > worst) {
            worst = d;
            worst_at = i;
        }
    }
    printf("softmax: largest difference %u ulp (element %d: %.9g vs %.9g)\n", worst, worst_at, io->hz[worst_at], io->rz[worst_at]);
    EXPECT(worst <= SOFTMAX_MAX_ULP);
    return st;
}

/* Whether the log file contains `needle`. */
static int log_contains(const char *path, const char *needle) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = calloc((size_t)n + 1, 1);
    size_t got = text ? fread(text, 1, (size_t)n, f) : 0;
    fclose(f);
    int found = text && got == (size_t)n && strstr(text, needle) != NULL;
    free(text);
    return found;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s <custom_ops.neff> <buggy.neff> <log file>\n", argv[0]);
        return 2;
    }
    size_t good_size = 0, bad_size = 0;
    void *good_neff = read_file(argv[1], &good_size);
    void *bad_neff = read_file(argv[2], &bad_size);
    const char *log = argv[3];
    OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "2.0", ""));

    nrt_model_t *good = NULL, *bad = NULL;
    OK(nrt_load(good_neff, good_size, 0, -1, &good));
    if (!good) return finish("execute_custom_ops");

    nrt_tensor_info_array_t *ti = NULL;
    OK(nrt_get_model_tensor_info(good, &ti));
    EXPECT(ti && ti->tensor_count == 3);
    if (ti && ti->tensor_count == 3) {
        EXPECT(strcmp(ti->tensor_array[0].name, "x") == 0 && ti->tensor_array[0].usage == NRT_TENSOR_USAGE_INPUT);
        EXPECT(ti->tensor_array[0].size == BYTES && ti->tensor_array[0].dtype == NRT_DTYPE_FLOAT32);
        EXPECT(ti->tensor_array[1].usage == NRT_TENSOR_USAGE_OUTPUT && ti->tensor_array[2].usage == NRT_TENSOR_USAGE_OUTPUT);
    }
    OK(nrt_free_model_tensor_info(ti));

    struct io io = {0};
    io.hx = malloc(BYTES);
    io.hy = malloc(BYTES);
    io.hz = malloc(BYTES);
    io.ry = malloc(BYTES);
    io.rz = malloc(BYTES);
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, BYTES, "x", &io.x));
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, BYTES, "y", &io.y));
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, BYTES, "z", &io.z));
    OK(nrt_allocate_tensor_set(&io.ins));
    OK(nrt_allocate_tensor_set(&io.outs));
    OK(nrt_add_tensor_to_tensor_set(io.ins, "x", io.x));
    OK(nrt_add_tensor_to_tensor_set(io.outs, "y", io.y));
    OK(nrt_add_tensor_to_tensor_set(io.outs, "z", io.z));

    for (int i = 0; i < 2; i++) run_and_check(good, &io, 1);
    /* The kernels' printf, drained from the stdio rings into the log. */
    EXPECT(log_contains(log, "Printing stdout from GPSIMD:"));
    EXPECT(log_contains(log, "relu: 65536 elements on 8 cores"));

    /* The buggy model on the same logical core: the exception's status,
     * then fail-stop (refused with the same status) until it is unloaded. */
    OK(nrt_load(bad_neff, bad_size, 0, -1, &bad));
    if (bad) {
        EXPECT_STATUS(run_and_check(bad, &io, 0), NRT_EXEC_COMPLETED_WITH_ERR);
        EXPECT(log_contains(log, "GPSIMD EXCEPTION OCCURRED"));
        EXPECT_STATUS(nrt_execute(bad, io.ins, io.outs), NRT_EXEC_COMPLETED_WITH_ERR);
        OK(nrt_unload(bad));
    }
    /* The unload reset the core: the resident model runs again, and so
     * does a model loaded there afterwards. */
    run_and_check(good, &io, 1);
    OK(nrt_unload(good));
    good = NULL;
    OK(nrt_load(good_neff, good_size, 0, -1, &good));
    if (good) {
        run_and_check(good, &io, 1);
        OK(nrt_unload(good));
    }

    nrt_destroy_tensor_set(&io.ins);
    nrt_destroy_tensor_set(&io.outs);
    nrt_tensor_free(&io.x);
    nrt_tensor_free(&io.y);
    nrt_tensor_free(&io.z);
    nrt_close();
    free(io.hx);
    free(io.hy);
    free(io.hz);
    free(io.ry);
    free(io.rz);
    free(good_neff);
    free(bad_neff);
    return finish("execute_custom_ops");
}
