/* Load + tensor info + execute of examples/mlp, y = relu(x @ W + b) in
 * float32, checked against the same formula computed here in C.
 * Usage: execute_mlp <mlp.neff> <W.f32> <b.f32>
 * (W [512, 512] and b [512] as raw little-endian float32, the constants
 * packed into the NEFF). */
#include <math.h>
#include "check.h"
#include "nrt/nrt_experimental.h"

#define M 128
#define K 512
#define N 512

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s <mlp.neff> <W.f32> <b.f32>\n", argv[0]);
        return 2;
    }
    size_t size = 0, wsize = 0, bsize = 0;
    void *neff = read_file(argv[1], &size);
    float *w = read_file(argv[2], &wsize);
    float *b = read_file(argv[3], &bsize);
    EXPECT(wsize == sizeof(float) * K * N && bsize == sizeof(float) * N);
    OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""));
    nrt_model_t *model = NULL;
    OK(nrt_load(neff, size, -1, -1, &model));
    if (!model) return finish("execute_mlp");

    /* Tensor info drives the allocation, as framework bridges do. */
    nrt_tensor_info_array_t *ti = NULL;
    OK(nrt_get_model_tensor_info(model, &ti));
    nrt_tensor_set_t *ins = NULL, *outs = NULL;
    OK(nrt_allocate_tensor_set(&ins));
    OK(nrt_allocate_tensor_set(&outs));
    nrt_tensor_t *tensors[2] = {NULL, NULL};
    EXPECT(ti && ti->tensor_count == 2);
    for (uint64_t i = 0; ti && i < ti->tensor_count && i < 2; i++) {
        nrt_tensor_info_t *t = &ti->tensor_array[i];
        EXPECT(t->dtype == NRT_DTYPE_FLOAT32 && t->ndim == 2);
        OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, t->size, t->name, &tensors[i]));
        OK(nrt_add_tensor_to_tensor_set(t->usage == NRT_TENSOR_USAGE_INPUT ? ins : outs, t->name, tensors[i]));
    }
    EXPECT(ti && strcmp(ti->tensor_array[0].name, "x") == 0 && ti->tensor_array[0].shape[1] == K);
    EXPECT(ti && strcmp(ti->tensor_array[1].name, "y") == 0 && ti->tensor_array[1].size == sizeof(float) * M * N);
    OK(nrt_free_model_tensor_info(ti));

    float *x = malloc(sizeof(float) * M * K), *y = malloc(sizeof(float) * M * N);
    uint32_t state = 12345;
    for (int i = 0; i < M * K; i++) {
        state = state * 1664525u + 1013904223u;
        x[i] = (float)(state >> 8) / (float)(1u << 24) * 2.0f - 1.0f; /* [-1, 1) */
    }
    OK(nrt_tensor_write(tensors[0], x, 0, sizeof(float) * M * K));
    OK(nrt_execute(model, ins, outs));
    OK(nrt_tensor_read(tensors[1], y, 0, sizeof(float) * M * N));

    /* Reference: fp32 accumulation in K order; the device sums four K
     * tiles, so only rounding order differs (well below 1e-3 here). */
    int bad = 0, zeros = 0;
    double worst = 0.0;
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int k = 0; k < K; k++) acc += x[i * K + k] * w[k * N + j];
            float want = acc + b[j] > 0.0f ? acc + b[j] : 0.0f;
            float got = y[i * N + j];
            double d = fabs((double)got - (double)want);
            if (d > worst) worst = d;
            if (want == 0.0f) zeros++;
            if (d > 1e-3 && bad++ < 5) fprintf(stderr, "y[%d][%d] = %g, expected %g\n", i, j, got, want);
        }
    }
    EXPECT(bad == 0);
    EXPECT(zeros > 0 && zeros < M * N); /* relu clips some, not all */
    printf("execute_mlp: worst |y - ref| = %g, %d of %d clipped\n", worst, zeros, M * N);

    OK(nrt_unload(model));
    nrt_destroy_tensor_set(&ins);
    nrt_destroy_tensor_set(&outs);
    nrt_tensor_free(&tensors[0]);
    nrt_tensor_free(&tensors[1]);
    nrt_close();
    free(x);
    free(y);
    free(w);
    free(b);
    free(neff);
    return finish("execute_mlp");
}
