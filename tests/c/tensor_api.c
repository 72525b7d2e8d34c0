/* The tensor API on device and host placement, with bad-input cases:
 * NULL pointers, out-of-range accesses, bad placements and cores, freed
 * and foreign handles; slices, attached buffers, batches, tensor sets,
 * memory stats and the one-participant collectives. */
#include "check.h"
#include "nrt/nrt_experimental.h"

static int all_equal(const uint8_t *p, size_t n, uint8_t v) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != v) return 0;
    return 1;
}

int main(void) {
    OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""));
    nrt_tensor_t *dev = NULL, *dev2 = NULL, *host = NULL, *virt = NULL;
    uint8_t buf[256], out[256];
    for (int i = 0; i < 256; i++) buf[i] = (uint8_t)(i * 7 + 1);

    /* Allocation and bad inputs. */
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 256, "dev", &dev));
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 256, "dev2", &dev2));
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, -1, 256, "host", &host));
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_VIRTUAL, -1, 256, NULL, &virt));
    nrt_tensor_t *bad = (nrt_tensor_t *)0x1;
    EXPECT_STATUS(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64, "x", NULL), NRT_INVALID);
    EXPECT_STATUS(nrt_tensor_allocate((nrt_tensor_placement_t)7, 0, 64, "x", &bad), NRT_INVALID);
    EXPECT_STATUS(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 99, 64, "x", &bad), NRT_INVALID);
    EXPECT_STATUS(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 0, "x", &bad), NRT_INVALID);
    EXPECT(bad == (nrt_tensor_t *)0x1); /* never written on failure */
    EXPECT_STATUS(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, (size_t)1 << 62, "huge", &bad), NRT_RESOURCE);
    EXPECT(nrt_tensor_get_size(dev) == 256);
    EXPECT(nrt_tensor_get_size(NULL) == 0);

    /* Read / write / memset / copy. */
    OK(nrt_tensor_write(dev, buf, 0, 256));
    memset(out, 0, sizeof out);
    OK(nrt_tensor_read(dev, out, 0, 256));
    EXPECT(memcmp(out, buf, 256) == 0);
    EXPECT_STATUS(nrt_tensor_write(dev, buf, 200, 57), NRT_INVALID);
    EXPECT_STATUS(nrt_tensor_read(dev, out, (size_t)-1, 2), NRT_INVALID);
    EXPECT_STATUS(nrt_tensor_read(dev, NULL, 0, 4), NRT_INVALID);
    EXPECT_STATUS(nrt_tensor_write(NULL, buf, 0, 4), NRT_INVALID);
    EXPECT_STATUS(nrt_tensor_write((nrt_tensor_t *)buf, buf, 0, 4), NRT_INVALID_HANDLE);
    OK(nrt_tensor_memset(dev, 16, 0xAB, 32));
    OK(nrt_tensor_read(dev, out, 0, 64));
    EXPECT(memcmp(out, buf, 16) == 0 && all_equal(out + 16, 32, 0xAB) && memcmp(out + 48, buf + 48, 16) == 0);
    EXPECT_STATUS(nrt_tensor_memset(dev, 250, 0, 7), NRT_INVALID);
    OK(nrt_tensor_copy(dev, 0, dev2, 128, 128));
    OK(nrt_tensor_read(dev2, out, 128, 128));
    EXPECT(memcmp(out, buf, 16) == 0 && all_equal(out + 16, 32, 0xAB));
    OK(nrt_tensor_copy(dev, 0, host, 0, 256));
    OK(nrt_tensor_copy(host, 0, virt, 0, 256));
    OK(nrt_tensor_read(virt, out, 0, 16));
    EXPECT(memcmp(out, buf, 16) == 0);
    EXPECT_STATUS(nrt_tensor_copy(dev, 100, dev2, 0, 200), NRT_INVALID);

    /* Host VA, memcpy_to_device into it; none for device storage, whose
       HBM is not mapped without NEURON_RT_MAP_HBM (hbm_map.c maps it). */
    uint8_t *va = nrt_tensor_get_va(host);
    EXPECT(va != NULL);
    EXPECT(nrt_tensor_get_va(dev) == NULL);
    if (va) {
        EXPECT(memcmp(va, buf, 16) == 0);
        OK(nrt_memcpy_to_device(va + 8, "\x11\x22\x33", 3));
        OK(nrt_tensor_read(host, out, 8, 3));
        EXPECT(out[0] == 0x11 && out[2] == 0x33);
        EXPECT_STATUS(nrt_memcpy_to_device(va + 255, "ab", 2), NRT_INVALID);
    }
    EXPECT_STATUS(nrt_memcpy_to_device(out, buf, 4), NRT_INVALID);

    /* Device allocation info. */
    nrt_tensor_device_allocation_info_t ai;
    memset(&ai, 0, sizeof ai);
    OK(nrt_tensor_get_device_allocation_info(dev, &ai));
    EXPECT(ai.size == 256 && ai.hbm_index >= 0);
    uint64_t dev_pa = ai.physical_address;
    EXPECT_STATUS(nrt_tensor_get_device_allocation_info(host, &ai), NRT_INVALID);

    /* Slices share storage, also after the parent is freed. */
    nrt_tensor_t *slice = NULL, *sub = NULL;
    OK(nrt_tensor_allocate_slice(dev, 64, 64, "slice", &slice));
    EXPECT(nrt_tensor_get_size(slice) == 64);
    OK(nrt_tensor_allocate_slice(slice, 32, 32, "sub", &sub));
    OK(nrt_tensor_memset(sub, 0, 0x5A, 32));
    OK(nrt_tensor_read(dev, out, 96, 32));
    EXPECT(all_equal(out, 32, 0x5A));
    EXPECT_STATUS(nrt_tensor_allocate_slice(dev, 200, 100, "over", &bad), NRT_INVALID);
    EXPECT_STATUS(nrt_tensor_write(slice, buf, 60, 8), NRT_INVALID);
    OK(nrt_tensor_get_device_allocation_info(slice, &ai));
    EXPECT(ai.size == 64 && ai.physical_address == dev_pa + 64);

    /* Empty tensors and attached buffers. */
    nrt_tensor_t *empty = NULL;
    uint8_t mine[32];
    memset(mine, 0, sizeof mine);
    OK(nrt_tensor_allocate_empty("empty", &empty));
    EXPECT(nrt_tensor_get_size(empty) == 0);
    EXPECT_STATUS(nrt_tensor_read(empty, out, 0, 1), NRT_INVALID);
    EXPECT_STATUS(nrt_tensor_attach_buffer(empty, NULL, 32), NRT_INVALID);
    OK(nrt_tensor_attach_buffer(empty, mine, sizeof mine));
    EXPECT(nrt_tensor_get_va(empty) == mine);
    OK(nrt_tensor_copy(dev, 0, empty, 0, 32));
    EXPECT(memcmp(mine, buf, 16) == 0);
    OK(nrt_tensor_write(empty, "\x42", 31, 1));
    EXPECT(mine[31] == 0x42);

    /* Batches. */
    uint8_t b1[8], b2[8];
    nrt_tensor_batch_op_t ops[2] = {{0, 8, b1}, {248, 8, b2}};
    nrt_tensor_batch_t batch = {dev2, ops, 2};
    memset(b1, 0x77, 8);
    memset(b2, 0x66, 8);
    OK(nrt_tensor_write_batch(&batch, 1, false));
    memset(b1, 0, 8);
    memset(b2, 0, 8);
    OK(nrt_tensor_read_batch(&batch, 1, true));
    EXPECT(all_equal(b1, 8, 0x77) && all_equal(b2, 8, 0x66));
    nrt_tensor_batch_op_t bad_op = {250, 8, b1};
    nrt_tensor_batch_t bad_batch = {dev2, &bad_op, 1};
    EXPECT_STATUS(nrt_tensor_read_batch(&bad_batch, 1, false), NRT_INVALID);
    EXPECT_STATUS(nrt_tensor_read_batch(NULL, 1, false), NRT_INVALID);
    OK(nrt_tensor_read_batch(NULL, 0, false));

    /* Tensor sets. */
    nrt_tensor_set_t *set = NULL;
    nrt_tensor_t *got = (nrt_tensor_t *)0x2;
    OK(nrt_allocate_tensor_set(&set));
    OK(nrt_add_tensor_to_tensor_set(set, "a", dev));
    OK(nrt_add_tensor_to_tensor_set(set, "a", dev2)); /* replaces */
    OK(nrt_get_tensor_from_tensor_set(set, "a", &got));
    EXPECT(got == dev2);
    got = (nrt_tensor_t *)0x2;
    EXPECT_STATUS(nrt_get_tensor_from_tensor_set(set, "missing", &got), NRT_FAILURE);
    EXPECT(got == (nrt_tensor_t *)0x2);
    EXPECT_STATUS(nrt_add_tensor_to_tensor_set(set, NULL, dev), NRT_INVALID);
    EXPECT_STATUS(nrt_add_tensor_to_tensor_set(buf, "a", dev), NRT_INVALID_HANDLE);
    nrt_destroy_tensor_set(&set);
    EXPECT(set == NULL);

    /* Output completion counter: nothing executed yet. */
    OK(nrt_tensor_check_output_completion(dev, 0, 0));
    EXPECT_STATUS(nrt_tensor_check_output_completion(dev, 1000, 1), NRT_TIMEOUT);
    EXPECT_STATUS(nrt_tensor_check_output_completion(NULL, 0, 0), NRT_INVALID);
    OK(nrt_tensor_reset_output_completion(dev));

    /* Memory stats (size-versioned), collectives with one participant, OOM report. */
    nrt_vnc_memory_stats_t st;
    size_t st_out = 0;
    OK(nrt_get_vnc_memory_stats(0, &st, sizeof st, &st_out));
    EXPECT(st_out == sizeof st && st.bytes_used >= 512 && st.bytes_limit > st.bytes_used);
    uint64_t half[2] = {0, 0x1234};
    OK(nrt_get_vnc_memory_stats(0, (nrt_vnc_memory_stats_t *)half, 8, &st_out));
    EXPECT(half[1] == 0x1234 && half[0] == st.bytes_used && st_out == 16);
    EXPECT_STATUS(nrt_get_vnc_memory_stats(99, &st, sizeof st, &st_out), NRT_INVALID);
    char in[4] = {1, 2, 3, 4}, gathered[4] = {0};
    OK(nrt_all_gather(0, 0, 1, 4, in, gathered));
    EXPECT(memcmp(in, gathered, 4) == 0);
    EXPECT_STATUS(nrt_all_gather(0, 2, 2, 4, in, gathered), NRT_INVALID);
    uint32_t hid = 99;
    OK(nrt_host_device_id_get(0, &hid));
    EXPECT(hid == 0);
    EXPECT_STATUS(nrt_host_device_id_get(5, &hid), NRT_INVALID);
    void *hbm_va = (void *)0x5;
    size_t hbm_size = 5;
    EXPECT_STATUS(nrt_get_hbm_mmap_va(0, 0, &hbm_va, &hbm_size), NRT_INVALID); /* HBM not mapped (NEURON_RT_MAP_HBM) */
    EXPECT(hbm_va == (void *)0x5 && hbm_size == 5);
    EXPECT_STATUS(nrt_get_hbm_mmap_va(3, 0, &hbm_va, &hbm_size), NRT_INVALID);

    /* Free: NULLs the pointer; a freed handle is NRT_INVALID_HANDLE. */
    nrt_tensor_t *stale = dev;
    nrt_tensor_free(&dev);
    EXPECT(dev == NULL);
    EXPECT_STATUS(nrt_tensor_write(stale, buf, 0, 1), NRT_INVALID_HANDLE);
    OK(nrt_tensor_read(slice, out, 0, 64)); /* storage lives on */
    nrt_tensor_free(&dev); /* NULL: no-op */
    nrt_tensor_free(&slice);
    nrt_tensor_free(&sub);
    nrt_tensor_free(&dev2);
    nrt_tensor_free(&host);
    nrt_tensor_free(&virt);
    nrt_tensor_free(&empty);
    size_t after = 0;
    OK(nrt_get_vnc_memory_stats(0, &st, sizeof st, &after));
    nrt_close();
    return finish("tensor_api");
}
