/* Load + tensor info + execute of the copy example (output = input, the
 * reference computed here in C), with device, host, slice and attached
 * tensors, then unload and the handle checks around it.
 * Usage: execute_copy <copy.neff> */
#include "check.h"
#include "nrt/nrt_experimental.h"

#define ROWS 8
#define COLS 128
#define BYTES (ROWS * COLS * 4)

static void fill(float *x, int seed) {
    for (int i = 0; i < ROWS * COLS; i++) x[i] = (float)((i * 31 + seed * 17) % 1000) * 0.25f - 3.0f;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s <copy.neff>\n", argv[0]);
        return 2;
    }
    size_t size = 0;
    void *neff = read_file(argv[1], &size);
    OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "2.0", ""));

    nrt_model_t *model = NULL;
    nrt_model_t *untouched = (nrt_model_t *)0x3;
    /* The deprecated vnc_count is ignored (nrtpy passes 1), with a warning. */
    nrt_model_t *legacy = NULL;
    OK(nrt_load(neff, size, 0, 1, &legacy));
    EXPECT(legacy != NULL);
    OK(nrt_unload(legacy));
    OK(nrt_load(neff, size, 0, 7, &legacy));
    OK(nrt_unload(legacy));
    EXPECT_STATUS(nrt_load("not a neff", 10, 0, -1, &untouched), NRT_INVALID);
    EXPECT_STATUS(nrt_load(neff, size, 42, -1, &untouched), NRT_INVALID);
    EXPECT_STATUS(nrt_load(NULL, size, 0, -1, &untouched), NRT_INVALID);
    EXPECT(untouched == (nrt_model_t *)0x3);
    OK(nrt_load(neff, size, 1, -1, &model));
    if (!model) return finish("execute_copy");

    uint32_t n = 0;
    OK(nrt_get_model_vnc_count(model, &n));
    EXPECT(n == 1);
    OK(nrt_get_model_nc_count(model, &n));
    OK(nrt_get_model_instance_count(model, &n));
    EXPECT(n == 1);
    nrt_model_info_t mi = {99};
    size_t mi_size = 0;
    OK(nrt_get_model_info(model, &mi, sizeof mi, &mi_size));
    EXPECT(mi.vnc == 1 && mi_size == sizeof mi);

    /* Tensor info. */
    nrt_tensor_info_array_t *ti = NULL;
    OK(nrt_get_model_tensor_info(model, &ti));
    EXPECT(ti && ti->tensor_count == 2);
    if (ti && ti->tensor_count == 2) {
        nrt_tensor_info_t *in = &ti->tensor_array[0], *out = &ti->tensor_array[1];
        EXPECT(strcmp(in->name, "input") == 0 && in->usage == NRT_TENSOR_USAGE_INPUT);
        EXPECT(strcmp(out->name, "output") == 0 && out->usage == NRT_TENSOR_USAGE_OUTPUT);
        EXPECT(in->size == BYTES && in->dtype == NRT_DTYPE_FLOAT32);
        EXPECT(in->ndim == 2 && in->shape[0] == ROWS && in->shape[1] == COLS);
    }
    OK(nrt_free_model_tensor_info(ti));
    EXPECT_STATUS(nrt_free_model_tensor_info(ti), NRT_INVALID_HANDLE);

    float *x = malloc(BYTES), *y = malloc(BYTES), *ref = malloc(BYTES);
    nrt_tensor_t *tin = NULL, *tout = NULL;
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 1, BYTES, "input", &tin));
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 1, BYTES, "output", &tout));
    nrt_tensor_set_t *ins = NULL, *outs = NULL;
    OK(nrt_allocate_tensor_set(&ins));
    OK(nrt_allocate_tensor_set(&outs));
    OK(nrt_add_tensor_to_tensor_set(ins, "input", tin));
    OK(nrt_add_tensor_to_tensor_set(outs, "output", tout));

    /* Device tensors bound in place, a few runs with different data. */
    for (int run = 0; run < 3; run++) {
        fill(x, run);
        memcpy(ref, x, BYTES); /* the model copies its input */
        OK(nrt_tensor_write(tin, x, 0, BYTES));
        OK(nrt_execute(model, ins, outs));
        memset(y, 0, BYTES);
        OK(nrt_tensor_read(tout, y, 0, BYTES));
        EXPECT(memcmp(y, ref, BYTES) == 0);
    }
    /* The runtime keeps the sets' resolution between executions: a set
     * changed since (an output swapped for another device tensor) must be
     * bound afresh, so the result lands in the new tensor and the old one
     * keeps its bytes; a tensor freed while in a set is reported as a dead
     * handle, not used through the kept resolution. */
    nrt_tensor_t *tout2 = NULL;
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 1, BYTES, "output2", &tout2));
    OK(nrt_add_tensor_to_tensor_set(outs, "output", tout2));
    fill(x, 7);
    OK(nrt_tensor_write(tin, x, 0, BYTES));
    OK(nrt_execute(model, ins, outs));
    OK(nrt_tensor_read(tout2, y, 0, BYTES));
    EXPECT(memcmp(y, x, BYTES) == 0);
    OK(nrt_tensor_read(tout, y, 0, BYTES));
    EXPECT(memcmp(y, ref, BYTES) == 0);
    nrt_tensor_free(&tout2);
    EXPECT_STATUS(nrt_execute(model, ins, outs), NRT_INVALID_HANDLE);
    OK(nrt_add_tensor_to_tensor_set(outs, "output", tout));
    OK(nrt_tensor_check_output_completion(tout, 0, 3));
    OK(nrt_tensor_reset_output_completion(tout));
    EXPECT_STATUS(nrt_tensor_check_output_completion(tout, 0, 1), NRT_TIMEOUT);

    /* Host input, attached-buffer output (staged by the runtime). */
    nrt_tensor_t *hin = NULL, *aout = NULL;
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_VIRTUAL, -1, BYTES, "hin", &hin));
    OK(nrt_tensor_allocate_empty("aout", &aout));
    OK(nrt_tensor_attach_buffer(aout, y, BYTES));
    fill(x, 9);
    OK(nrt_tensor_write(hin, x, 0, BYTES));
    OK(nrt_add_tensor_to_tensor_set(ins, "input", hin));
    OK(nrt_add_tensor_to_tensor_set(outs, "output", aout));
    memset(y, 0, BYTES);
    OK(nrt_execute_repeat(model, ins, outs, 1));
    EXPECT(memcmp(y, x, BYTES) == 0);
    OK(nrt_tensor_check_output_completion(aout, 0, 1));

    /* A slice of a larger device tensor as the input. */
    nrt_tensor_t *big = NULL, *slice = NULL;
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 1, 2 * BYTES, "big", &big));
    OK(nrt_tensor_allocate_slice(big, BYTES, BYTES, "slice", &slice));
    fill(x, 5);
    OK(nrt_tensor_write(big, x, BYTES, BYTES));
    OK(nrt_add_tensor_to_tensor_set(ins, "input", slice));
    OK(nrt_add_tensor_to_tensor_set(outs, "output", tout));
    OK(nrt_execute(model, ins, outs));
    OK(nrt_tensor_read(tout, y, 0, BYTES));
    EXPECT(memcmp(y, x, BYTES) == 0);

    /* Bad executions. */
    nrt_tensor_t *small = NULL;
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 1, 64, "small", &small));
    nrt_tensor_set_t *bad_ins = NULL, *empty = NULL;
    OK(nrt_allocate_tensor_set(&bad_ins));
    OK(nrt_allocate_tensor_set(&empty));
    OK(nrt_add_tensor_to_tensor_set(bad_ins, "input", small));
    EXPECT_STATUS(nrt_execute(model, bad_ins, outs), NRT_EXEC_BAD_INPUT);
    EXPECT(nrt_execute(model, empty, outs) != NRT_SUCCESS);
    EXPECT_STATUS(nrt_execute(model, ins, NULL), NRT_INVALID);
    EXPECT_STATUS(nrt_execute((nrt_model_t *)ins, ins, outs), NRT_INVALID_HANDLE);
    EXPECT_STATUS(nrt_execute_repeat(model, ins, outs, 4), NRT_INVALID);
    /* A freed tensor still in a set. */
    nrt_tensor_free(&hin);
    OK(nrt_add_tensor_to_tensor_set(ins, "input", tin));
    OK(nrt_execute(model, ins, outs));

    /* Unload: the handle is dead afterwards. */
    OK(nrt_unload(model));
    EXPECT_STATUS(nrt_unload(model), NRT_INVALID_HANDLE);
    EXPECT_STATUS(nrt_execute(model, ins, outs), NRT_INVALID_HANDLE);
    EXPECT_STATUS(nrt_get_model_vnc_count(model, &n), NRT_INVALID_HANDLE);

    /* load_collectives of a NEFF without collectives: a rank outside the
     * world is refused; otherwise it loads as any NEFF (the communicator
     * of the first call, one participant, stays). */
    EXPECT_STATUS(nrt_load_collectives(neff, size, 0, -1, 2, 2, &untouched), NRT_INVALID);
    EXPECT(untouched == (nrt_model_t *)0x3);
    OK(nrt_load_collectives(neff, size, -1, -1, 0, 1, &model));
    OK(nrt_unload(model));
    /* On the tensors' logical core (1), it executes on them; an input on
     * another logical core is NRT_INVALID, not staged silently. */
    OK(nrt_load_collectives(neff, size, 1, -1, 0, 1, &model));
    OK(nrt_execute(model, ins, outs));
    OK(nrt_unload(model));
    /* spike's call: vnc_count 1, ignored as by nrt_load. */
    OK(nrt_load_collectives(neff, size, 0, 1, 0, 1, &model));
    OK(nrt_unload(model));

    nrt_destroy_tensor_set(&ins);
    nrt_destroy_tensor_set(&outs);
    nrt_destroy_tensor_set(&bad_ins);
    nrt_destroy_tensor_set(&empty);
    nrt_tensor_free(&tin);
    nrt_tensor_free(&tout);
    nrt_tensor_free(&aout);
    nrt_tensor_free(&slice);
    nrt_tensor_free(&big);
    nrt_tensor_free(&small);
    nrt_close();
    free(x);
    free(y);
    free(ref);
    free(neff);
    return finish("execute_copy");
}
