/* Sizes a client chooses never abort it: every host buffer the library
 * sizes from a call (host and virtual tensors, staging of slices and
 * attached buffers, the bounce buffer of a copy, the copy nrta_tensor_write
 * takes) is checked before it is allocated, and one the host cannot give
 * is NRT_RESOURCE with the outputs untouched. Before those checks each of
 * these calls aborted the process, so this runs as a program of its own.
 *
 * Two kinds of refusal: sizes beyond what the host holds at all (refused
 * up front), and sizes the allocator refuses (here: an address-space
 * limit set below them with setrlimit, after the buffers the client
 * itself lends are mapped). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE under -std=c11 */
#include "check.h"
#include "nrt/nrt_async.h"
#include "nrt/nrt_experimental.h"
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

/* Bytes of the tensors the allocator is made to refuse to stage. */
#define BIG ((size_t)4 << 30)

/* Current address-space size of this process (/proc/self/statm). */
static size_t vm_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (!f || fscanf(f, "%lu", &pages) != 1) {
        fprintf(stderr, "cannot read /proc/self/statm\n");
        exit(2);
    }
    fclose(f);
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: host_sizes copy.neff\n");
        return 2;
    }
    size_t neff_size = 0;
    void *neff = read_file(argv[1], &neff_size);
    OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""));
    nrt_model_t *model = NULL;
    OK(nrt_load(neff, neff_size, 0, 1, &model));

    /* Sizes no host holds: refused before anything is allocated. */
    const size_t huge[] = {(size_t)1 << 50, (size_t)1 << 62, SIZE_MAX / 2, SIZE_MAX};
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        nrt_tensor_t *t = (nrt_tensor_t *)0x1;
        EXPECT_STATUS(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, -1, huge[i], "huge", &t), NRT_RESOURCE);
        EXPECT_STATUS(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_VIRTUAL, -1, huge[i], "huge", &t), NRT_RESOURCE);
        EXPECT_STATUS(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, huge[i], "huge", &t), NRT_RESOURCE);
        EXPECT(t == (nrt_tensor_t *)0x1);
    }

    /* A device tensor and a caller buffer of BIG bytes (untouched: the
     * simulated HBM and the mapping are backed lazily), then an
     * address-space limit under BIG: staging either must fail cleanly. */
    nrt_tensor_t *dev = NULL, *slice = NULL, *att = NULL, *in = NULL, *out = NULL;
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, BIG, "big", &dev));
    OK(nrt_tensor_allocate_slice(dev, 64, BIG - 64, "big slice", &slice));
    uint8_t *lent = mmap(NULL, BIG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    EXPECT(lent != MAP_FAILED);
    OK(nrt_tensor_allocate_empty("lent", &att));
    OK(nrt_tensor_attach_buffer(att, lent, BIG));
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 4096, "input", &in));
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 4096, "output", &out));
    nrt_tensor_set_t *ins = NULL, *outs = NULL;
    OK(nrt_allocate_tensor_set(&ins));
    OK(nrt_allocate_tensor_set(&outs));
    OK(nrt_add_tensor_to_tensor_set(ins, "input", slice));
    OK(nrt_add_tensor_to_tensor_set(outs, "output", out));

    struct rlimit lim = {vm_bytes() + ((size_t)1 << 30), RLIM_INFINITY};
    lim.rlim_max = lim.rlim_cur;
    if (setrlimit(RLIMIT_AS, &lim) != 0) {
        perror("setrlimit");
        return 2;
    }
    /* The allocator refuses each of these (1 GiB of headroom, BIG wanted). */
    nrt_tensor_t *t = (nrt_tensor_t *)0x1;
    EXPECT_STATUS(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, -1, BIG, "host", &t), NRT_RESOURCE);
    EXPECT(t == (nrt_tensor_t *)0x1);
    EXPECT_STATUS(nrt_execute(model, ins, outs), NRT_RESOURCE);
    EXPECT_STATUS(nrt_tensor_copy(dev, 0, att, 0, BIG), NRT_RESOURCE);
    EXPECT_STATUS(nrt_tensor_copy(att, 0, dev, 0, BIG), NRT_RESOURCE);
    nrta_seq_t seq = 0;
    NRT_STATUS ret = NRT_SUCCESS;
    EXPECT_STATUS(nrta_tensor_write(dev, lent, 0, BIG, 0, 0, &ret, &seq), NRT_RESOURCE);
    EXPECT(seq == 0);
    /* A world larger than any instance is refused before a rank list of
     * its size is made. */
    EXPECT_STATUS(nrt_barrier(0, 0, UINT32_MAX), NRT_INVALID);
    EXPECT_STATUS(nrt_barrier(0, 0, 65537), NRT_INVALID);

    /* What fits still works, and the runtime is whole afterwards. */
    uint8_t buf[4096];
    memset(buf, 7, sizeof buf);
    OK(nrt_tensor_write(in, buf, 0, sizeof buf));
    OK(nrt_add_tensor_to_tensor_set(ins, "input", in));
    OK(nrt_execute(model, ins, outs));
    memset(buf, 0, sizeof buf);
    OK(nrt_tensor_read(out, buf, 0, sizeof buf));
    EXPECT(buf[0] == 7 && buf[4095] == 7);
    OK(nrt_tensor_copy(dev, 0, att, 0, 4096));

    nrt_destroy_tensor_set(&ins);
    nrt_destroy_tensor_set(&outs);
    nrt_tensor_free(&slice);
    nrt_tensor_free(&att);
    nrt_tensor_free(&dev);
    nrt_tensor_free(&in);
    nrt_tensor_free(&out);
    OK(nrt_unload(model));
    nrt_close();
    free(neff);
    return finish("host_sizes");
}
