/* A complete libnrt client in C: load a NEFF from disk, allocate every
 * input and output from the model's tensor info, fill the inputs,
 * execute, read the outputs back and check them.
 *
 *   client MODEL.neff [--copy]
 *
 * Prints one checksum line per output. With --copy it also checks the
 * copy example's contract (examples/copy: every output equals the input
 * of the same size). Exits 0 only if every call succeeded and the check
 * held. Build with the Makefile or CMakeLists.txt beside it (README.md). */
#include <nrt/nrt.h>
#include <nrt/nrt_experimental.h> /* nrt_get_model_tensor_info */
#include <nrt/nrt_status.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints what failed with libnrt's name for the status; returns 1 on failure. */
static int failed(NRT_STATUS status, const char *what) {
    if (status == NRT_SUCCESS) return 0;
    fprintf(stderr, "client: %s failed: %s (%d)\n", what, nrt_get_status_as_str(status), (int)status);
    return 1;
}

/* Reads a whole file into a malloc'd buffer; NULL on failure. */
static void *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    void *buf = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n);
        if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
    }
    fclose(f);
    *size = n > 0 ? (size_t)n : 0;
    return buf;
}

/* FNV-1a over the bytes: a checksum to compare runs by. */
static uint64_t fnv1a(const unsigned char *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--copy") != 0)) {
        fprintf(stderr, "usage: %s MODEL.neff [--copy]\n", argv[0]);
        return 2;
    }
    int check_copy = argc == 3;
    size_t neff_size = 0;
    void *neff = read_file(argv[1], &neff_size);
    if (!neff) {
        fprintf(stderr, "client: cannot read %s\n", argv[1]);
        return 1;
    }
    if (failed(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), "nrt_init")) return 1;

    /* On logical core 0 (the first of NEURON_RT_VISIBLE_CORES); vnc_count
     * -1: as many as the NEFF needs. */
    nrt_model_t *model = NULL;
    int errors = failed(nrt_load(neff, neff_size, 0, -1, &model), "nrt_load");
    free(neff);
    nrt_tensor_info_array_t *info = NULL;
    if (!errors) errors += failed(nrt_get_model_tensor_info(model, &info), "nrt_get_model_tensor_info");
    nrt_tensor_set_t *inputs = NULL, *outputs = NULL;
    if (!errors) errors += failed(nrt_allocate_tensor_set(&inputs), "nrt_allocate_tensor_set");
    if (!errors) errors += failed(nrt_allocate_tensor_set(&outputs), "nrt_allocate_tensor_set");

    uint64_t count = errors ? 0 : info->tensor_count;
    nrt_tensor_t **tensors = calloc(count ? count : 1, sizeof *tensors);
    unsigned char **host = calloc(count ? count : 1, sizeof *host);
    if (!tensors || !host) errors++;

    /* One device tensor per entry of the tensor info, on the model's
     * logical core (a tensor on another core is refused at execute).
     * Inputs get a deterministic byte pattern. */
    for (uint64_t i = 0; !errors && i < count; i++) {
        const nrt_tensor_info_t *t = &info->tensor_array[i];
        errors += failed(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, t->size, t->name, &tensors[i]), t->name);
        host[i] = malloc(t->size ? t->size : 1);
        if (!host[i]) {
            errors++;
            break;
        }
        if (t->usage == NRT_TENSOR_USAGE_INPUT) {
            for (size_t k = 0; k < t->size; k++) host[i][k] = (unsigned char)(k * 7 + i * 13);
            errors += failed(nrt_tensor_write(tensors[i], host[i], 0, t->size), "nrt_tensor_write");
            errors += failed(nrt_add_tensor_to_tensor_set(inputs, t->name, tensors[i]), "nrt_add_tensor_to_tensor_set");
        } else {
            errors += failed(nrt_add_tensor_to_tensor_set(outputs, t->name, tensors[i]), "nrt_add_tensor_to_tensor_set");
        }
    }

    if (!errors) errors += failed(nrt_execute(model, inputs, outputs), "nrt_execute");

    for (uint64_t i = 0; !errors && i < count; i++) {
        const nrt_tensor_info_t *t = &info->tensor_array[i];
        if (t->usage != NRT_TENSOR_USAGE_OUTPUT) continue;
        errors += failed(nrt_tensor_read(tensors[i], host[i], 0, t->size), "nrt_tensor_read");
        printf("output %s: %zu bytes, fnv1a %016llx\n", t->name, t->size, (unsigned long long)fnv1a(host[i], t->size));
        if (!check_copy) continue;
        int matched = 0;
        for (uint64_t j = 0; j < count; j++) {
            const nrt_tensor_info_t *in = &info->tensor_array[j];
            if (in->usage == NRT_TENSOR_USAGE_INPUT && in->size == t->size) {
                matched = memcmp(host[i], host[j], t->size) == 0;
                break;
            }
        }
        if (!matched) {
            fprintf(stderr, "client: output %s is not a copy of the input\n", t->name);
            errors++;
        }
    }

    for (uint64_t i = 0; i < count; i++) {
        if (tensors[i]) nrt_tensor_free(&tensors[i]);
        free(host[i]);
    }
    free(tensors);
    free(host);
    nrt_destroy_tensor_set(&inputs);
    nrt_destroy_tensor_set(&outputs);
    if (info) nrt_free_model_tensor_info(info);
    if (model) nrt_unload(model);
    nrt_close();
    if (errors) return 1;
    printf("client: %s ok%s\n", argv[1], check_copy ? " (output equals input)" : "");
    return 0;
}
