/* Device memory mapped into the process and the instance's topology:
 * nrt_get_hbm_mmap_va, device tensors' VAs, nrt_memcpy_to_device,
 * nrt_get_dmabuf_fd, nrt_get_attached_efa_bdf and
 * nrt_host_device_id_rid_map_get, before init and in four settings.
 * Usage: hbm_map mapped <copy.neff>   (NEURON_RT_MAP_HBM=1, one trn2 device)
 *        hbm_map unmapped             (NEURON_RT_MAP_HBM unset)
 *        hbm_map trn2x16              (NEURON_SIM_INSTANCE=trn2.48xlarge, mapped)
 *        hbm_map noefa                (NEURON_SIM_INSTANCE=inf2.xlarge, mapped) */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <unistd.h>
#include "check.h"
#include "nrt/nrt_experimental.h"

#define BYTES 4096 /* the copy example: 8 x 128 float32 */

static void before_init(void) {
    void *va = (void *)0x5;
    size_t size = 5;
    int fd = -7;
    uint32_t count = 64, map[64];
    char bdf[32];
    size_t len = sizeof bdf;
    EXPECT_STATUS(nrt_get_hbm_mmap_va(0, 0, &va, &size), NRT_UNINITIALIZED);
    EXPECT_STATUS(nrt_get_dmabuf_fd(0x1000, 64, &fd), NRT_UNINITIALIZED);
    EXPECT_STATUS(nrt_host_device_id_rid_map_get(&count, map), NRT_UNINITIALIZED);
    EXPECT_STATUS(nrt_get_attached_efa_bdf(bdf, bdf, &len), NRT_UNINITIALIZED);
    EXPECT_STATUS(nrt_memcpy_to_device(bdf, bdf, 4), NRT_UNINITIALIZED);
    EXPECT(va == (void *)0x5 && size == 5 && fd == -7 && count == 64 && len == sizeof bdf);
}

/* The HBM regions of device `d`: each a window, then "no more regions". */
static int regions(int d, void **va0, size_t *size0) {
    int n = 0;
    for (;; n++) {
        void *va = NULL;
        size_t size = 0;
        NRT_STATUS s = nrt_get_hbm_mmap_va(d, n, &va, &size);
        if (s == NRT_INVALID_HANDLE) break;
        EXPECT_STATUS(s, NRT_SUCCESS);
        if (s != NRT_SUCCESS) break;
        EXPECT(va != NULL && size > 0);
        if (n == 0) *va0 = va, *size0 = size;
    }
    return n;
}

static void mapped(const char *neff_path) {
    void *r0 = NULL;
    size_t r0_size = 0;
    EXPECT(regions(0, &r0, &r0_size) == 4); /* trn2: four HBM channels */
    void *va = (void *)0x5;
    size_t size = 5;
    EXPECT_STATUS(nrt_get_hbm_mmap_va(0, -1, &va, &size), NRT_INVALID);
    EXPECT_STATUS(nrt_get_hbm_mmap_va(1, 0, &va, &size), NRT_INVALID); /* one device */
    EXPECT_STATUS(nrt_get_hbm_mmap_va(0, 0, NULL, &size), NRT_INVALID);
    EXPECT(va == (void *)0x5 && size == 5);

    /* A device tensor's VA is its device memory. */
    nrt_tensor_t *t = NULL;
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, BYTES, "t", &t));
    uint8_t *tva = nrt_tensor_get_va(t);
    EXPECT(tva != NULL && tva >= (uint8_t *)r0 && tva + BYTES <= (uint8_t *)r0 + r0_size);
    if (!tva) return;
    uint8_t buf[BYTES], out[BYTES];
    for (int i = 0; i < BYTES; i++) buf[i] = (uint8_t)(i * 13 + 5);
    OK(nrt_tensor_write(t, buf, 0, BYTES));
    EXPECT(memcmp(tva, buf, BYTES) == 0);
    tva[100] = 0xEE; /* a store through the mapping */
    OK(nrt_tensor_read(t, out, 0, BYTES));
    EXPECT(out[100] == 0xEE && out[99] == buf[99]);
    OK(nrt_memcpy_to_device(tva + 8, "\x11\x22\x33", 3));
    OK(nrt_tensor_read(t, out, 8, 3));
    EXPECT(memcmp(out, "\x11\x22\x33", 3) == 0);
    EXPECT_STATUS(nrt_memcpy_to_device((uint8_t *)r0 + r0_size - 2, buf, 4), NRT_INVALID); /* past the region */

    /* dma-buf: the channel's memfd, positioned at the address. */
    int fd = -1;
    OK(nrt_get_dmabuf_fd((uint64_t)(uintptr_t)(tva + 8), 64, &fd));
    EXPECT(fd >= 0);
    if (fd >= 0) {
        off_t pos = lseek(fd, 0, SEEK_CUR);
        EXPECT(pos == (off_t)((tva + 8) - (uint8_t *)r0));
        uint8_t got[3] = {0};
        EXPECT(pread(fd, got, 3, pos) == 3 && memcmp(got, "\x11\x22\x33", 3) == 0);
        off_t page = pos & ~(off_t)4095;
        uint8_t *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, page);
        EXPECT(m != MAP_FAILED);
        if (m != MAP_FAILED) {
            EXPECT(memcmp(m + (pos - page), "\x11\x22\x33", 3) == 0);
            m[pos - page + 3] = 0x44; /* a NIC's write through the descriptor */
            munmap(m, 8192);
        }
        close(fd);
        OK(nrt_tensor_read(t, out, 11, 1));
        EXPECT(out[0] == 0x44);
    }
    int untouched = -7;
    EXPECT_STATUS(nrt_get_dmabuf_fd((uint64_t)(uintptr_t)buf, 64, &untouched), NRT_INVALID); /* host memory */
    EXPECT_STATUS(nrt_get_dmabuf_fd((uint64_t)(uintptr_t)tva, 0, &untouched), NRT_INVALID);
    EXPECT_STATUS(nrt_get_dmabuf_fd((uint64_t)(uintptr_t)r0 + r0_size - 8, 64, &untouched), NRT_INVALID);
    EXPECT_STATUS(nrt_get_dmabuf_fd((uint64_t)(uintptr_t)tva, 64, NULL), NRT_INVALID);
    EXPECT(untouched == -7);

    /* The EFA NIC of the device holding the address (trn2-1: NIC 0). */
    char bdf[16];
    size_t len = sizeof bdf;
    OK(nrt_get_attached_efa_bdf(tva, bdf, &len));
    EXPECT(len == 12 && strcmp(bdf, "0000:80:00.0") == 0);
    char small[12];
    len = sizeof small;
    EXPECT_STATUS(nrt_get_attached_efa_bdf(tva, small, &len), NRT_RESOURCE);
    EXPECT(len == sizeof small);
    len = sizeof bdf;
    EXPECT_STATUS(nrt_get_attached_efa_bdf(buf, bdf, &len), NRT_FAILURE); /* not device memory */
    EXPECT_STATUS(nrt_get_attached_efa_bdf(tva, NULL, &len), NRT_INVALID);

    /* The routing-id map of a one-device instance. */
    uint32_t count = 64, map[64] = {7};
    OK(nrt_host_device_id_rid_map_get(&count, map));
    EXPECT(count == 1 && map[0] == 0);
    count = 0;
    EXPECT_STATUS(nrt_host_device_id_rid_map_get(&count, map), NRT_INVALID);
    EXPECT_STATUS(nrt_host_device_id_rid_map_get(NULL, map), NRT_INVALID);

    /* An execution reads what nrt_memcpy_to_device wrote. */
    size_t neff_size = 0;
    void *neff = read_file(neff_path, &neff_size);
    nrt_model_t *model = NULL;
    OK(nrt_load(neff, neff_size, 0, -1, &model));
    nrt_tensor_t *tin = NULL, *tout = NULL;
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, BYTES, "input", &tin));
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, BYTES, "output", &tout));
    nrt_tensor_set_t *ins = NULL, *outs = NULL;
    OK(nrt_allocate_tensor_set(&ins));
    OK(nrt_allocate_tensor_set(&outs));
    OK(nrt_add_tensor_to_tensor_set(ins, "input", tin));
    OK(nrt_add_tensor_to_tensor_set(outs, "output", tout));
    for (int run = 0; run < 2; run++) {
        for (int i = 0; i < BYTES; i++) buf[i] = (uint8_t)(i * 7 + run * 3);
        OK(nrt_memcpy_to_device(nrt_tensor_get_va(tin), buf, BYTES));
        OK(nrt_execute(model, ins, outs));
        OK(nrt_tensor_read(tout, out, 0, BYTES));
        EXPECT(memcmp(out, buf, BYTES) == 0);
        EXPECT(memcmp(nrt_tensor_get_va(tout), buf, BYTES) == 0); /* the output, seen through the mapping */
    }
    nrt_destroy_tensor_set(&ins);
    nrt_destroy_tensor_set(&outs);
    nrt_tensor_free(&tin);
    nrt_tensor_free(&tout);
    OK(nrt_unload(model));
    free(neff);
    nrt_tensor_free(&t);
}

static void unmapped(void) {
    void *va = (void *)0x5;
    size_t size = 5;
    EXPECT_STATUS(nrt_get_hbm_mmap_va(0, 0, &va, &size), NRT_INVALID); /* not mapped: interface not available */
    EXPECT(va == (void *)0x5 && size == 5);
    nrt_tensor_t *t = NULL;
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, BYTES, "t", &t));
    EXPECT(nrt_tensor_get_va(t) == NULL);
    int fd = -7;
    char bdf[16];
    size_t len = sizeof bdf;
    EXPECT_STATUS(nrt_get_dmabuf_fd(0x1000, 64, &fd), NRT_INVALID);
    EXPECT_STATUS(nrt_get_attached_efa_bdf(bdf, bdf, &len), NRT_FAILURE);
    EXPECT(fd == -7 && len == sizeof bdf);
    uint32_t count = 4, map[4] = {9, 9, 9, 9};
    OK(nrt_host_device_id_rid_map_get(&count, map));
    EXPECT(count == 1 && map[0] == 0 && map[1] == 9);
    nrt_tensor_free(&t);
}

static void trn2x16(void) {
    /* The driver's trn2 routing ids by host device id. */
    static const uint32_t want[16] = {0, 8, 9, 1, 2, 10, 11, 3, 6, 14, 15, 7, 4, 12, 13, 5};
    uint32_t count = 64, map[64];
    OK(nrt_host_device_id_rid_map_get(&count, map));
    EXPECT(count == 16 && memcmp(map, want, sizeof want) == 0);
    count = 15;
    EXPECT_STATUS(nrt_host_device_id_rid_map_get(&count, map), NRT_INVALID);
    EXPECT(count == 15);
    /* Logical core 12 (LNC 2) is on device 3: its tensors map into
     * device 3's HBM and its EFA NIC is the fourth. */
    void *r0 = NULL;
    size_t r0_size = 0;
    EXPECT(regions(3, &r0, &r0_size) == 4);
    nrt_tensor_t *t = NULL;
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 12, 256, "t", &t));
    uint8_t *tva = nrt_tensor_get_va(t);
    EXPECT(tva != NULL);
    char bdf[16];
    size_t len = sizeof bdf;
    OK(nrt_get_attached_efa_bdf(tva, bdf, &len));
    EXPECT(len == 12 && strcmp(bdf, "0000:83:00.0") == 0);
    nrt_tensor_free(&t);
}

static void noefa(void) {
    nrt_tensor_t *t = NULL;
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 256, "t", &t));
    uint8_t *tva = nrt_tensor_get_va(t);
    EXPECT(tva != NULL);
    char bdf[16];
    size_t len = sizeof bdf;
    EXPECT_STATUS(nrt_get_attached_efa_bdf(tva, bdf, &len), NRT_FAILURE); /* inf2: no EFA NIC */
    EXPECT(len == sizeof bdf);
    nrt_tensor_free(&t);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s mapped <copy.neff> | unmapped | trn2x16 | noefa\n", argv[0]);
        return 2;
    }
    before_init();
    OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""));
    if (strcmp(argv[1], "mapped") == 0 && argc > 2) {
        mapped(argv[2]);
    } else if (strcmp(argv[1], "unmapped") == 0) {
        unmapped();
    } else if (strcmp(argv[1], "trn2x16") == 0) {
        trn2x16();
    } else if (strcmp(argv[1], "noefa") == 0) {
        noefa();
    } else {
        fprintf(stderr, "unknown mode %s\n", argv[1]);
        return 2;
    }
    nrt_close();
    char name[64];
    snprintf(name, sizeof name, "hbm_map %s", argv[1]);
    return finish(name);
}
