/* libnrt's no-device mode (NEURON_RT_FAKE_INSTANCE_TYPE=trn2.48xlarge,
 * set by the test runner): core counts of the pretended instance, load +
 * tensor info + execute with host tensors, device tensors refused.
 * Usage: no_device <copy.neff> */
#include "check.h"
#include "nrt/nrt_experimental.h"

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s <copy.neff>\n", argv[0]);
        return 2;
    }
    size_t size = 0;
    void *neff = read_file(argv[1], &size);
    uint32_t n = 0;
    OK(nrt_get_total_vnc_count(&n));
    EXPECT(n == 64);
    OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""));
    nrt_instance_info_t info;
    OK(nrt_get_instance_info(&info, sizeof info));
    EXPECT(info.family == NRT_INSTANCE_TRN2 && info.size == NRT_INSTANCE_SIZE_48XL);

    nrt_model_t *m = NULL;
    OK(nrt_load(neff, size, 63, -1, &m));
    nrt_model_info_t mi = {0};
    size_t mi_size = 0;
    OK(nrt_get_model_info(m, &mi, sizeof mi, &mi_size));
    EXPECT(mi.vnc == 63);
    nrt_tensor_info_array_t *ti = NULL;
    OK(nrt_get_model_tensor_info(m, &ti));
    EXPECT(ti && ti->tensor_count == 2 && strcmp(ti->tensor_array[1].name, "output") == 0);
    OK(nrt_free_model_tensor_info(ti));

    nrt_tensor_t *in = NULL, *out = NULL, *dev = (nrt_tensor_t *)0x4;
    EXPECT_STATUS(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64, "dev", &dev), NRT_INVALID);
    EXPECT(dev == (nrt_tensor_t *)0x4);
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_VIRTUAL, -1, 8 * 128 * 4, "input", &in));
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_VIRTUAL, -1, 8 * 128 * 4, "output", &out));
    nrt_tensor_set_t *ins = NULL, *outs = NULL;
    OK(nrt_allocate_tensor_set(&ins));
    OK(nrt_allocate_tensor_set(&outs));
    OK(nrt_add_tensor_to_tensor_set(ins, "input", in));
    OK(nrt_add_tensor_to_tensor_set(outs, "output", out));
    OK(nrt_execute(m, ins, outs)); /* succeeds at once: no device program */
    EXPECT_STATUS(nrt_execute_repeat(m, ins, outs, 2), NRT_INVALID);
    OK(nrt_unload(m));
    EXPECT_STATUS(nrt_unload(m), NRT_INVALID_HANDLE);
    nrt_destroy_tensor_set(&ins);
    nrt_destroy_tensor_set(&outs);
    nrt_tensor_free(&in);
    nrt_tensor_free(&out);
    nrt_close();
    free(neff);
    return finish("no_device");
}
