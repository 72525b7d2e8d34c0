// A C++17 libnrt client in the shape of nrtpy / spike's C++ layer: core
// count before init, init / load (vnc_count 1, as spike passes) / execute
// the copy example / read back / close, then init again in the same
// process. Prints "client ok" and exits 0 only if every step did what
// libnrt documents.
#include <nrt/nrt.h>
#include <nrt/nrt_experimental.h>
#include <nrt/nrt_status.h>
#include <nrt/nrt_version.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const std::string &what) {
    if (!ok) {
        std::fprintf(stderr, "FAILED: %s\n", what.c_str());
        ++failures;
    }
}

void ok(NRT_STATUS s, const std::string &what) {
    check(s == NRT_SUCCESS, what + " -> " + std::to_string(static_cast<int>(s)));
}

int run_once(const std::vector<char> &neff) {
    ok(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "cmake-client", "1.0"), "nrt_init");
    nrt_model_t *model = nullptr;
    ok(nrt_load(neff.data(), neff.size(), 0, 1, &model), "nrt_load (vnc_count 1)");
    if (!model) return 1;
    nrt_tensor_info_array_t *info = nullptr;
    ok(nrt_get_model_tensor_info(model, &info), "nrt_get_model_tensor_info");
    if (!info) return 1;
    nrt_tensor_set_t *ins = nullptr, *outs = nullptr;
    ok(nrt_allocate_tensor_set(&ins), "allocate input set");
    ok(nrt_allocate_tensor_set(&outs), "allocate output set");
    std::vector<nrt_tensor_t *> tensors;
    std::vector<float> input;
    nrt_tensor_t *out = nullptr;
    size_t out_size = 0;
    for (uint64_t i = 0; i < info->tensor_count; ++i) {
        const nrt_tensor_info_t &t = info->tensor_array[i];
        nrt_tensor_t *tensor = nullptr;
        ok(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, t.size, t.name, &tensor), std::string("allocate ") + t.name);
        tensors.push_back(tensor);
        if (t.usage == NRT_TENSOR_USAGE_INPUT) {
            input.resize(t.size / sizeof(float));
            for (size_t k = 0; k < input.size(); ++k) input[k] = 0.5f * static_cast<float>(k) - 3.0f;
            ok(nrt_tensor_write(tensor, input.data(), 0, t.size), "write input");
            ok(nrt_add_tensor_to_tensor_set(ins, t.name, tensor), "add input");
        } else {
            out = tensor;
            out_size = t.size;
            ok(nrt_add_tensor_to_tensor_set(outs, t.name, tensor), "add output");
        }
    }
    ok(nrt_execute(model, ins, outs), "nrt_execute");
    std::vector<float> output(out_size / sizeof(float), -1.0f);
    if (out) ok(nrt_tensor_read(out, output.data(), 0, out_size), "read output");
    check(out != nullptr && output == input, "the copy example's output equals its input");
    for (auto *t : tensors) nrt_tensor_free(&t);
    nrt_destroy_tensor_set(&ins);
    nrt_destroy_tensor_set(&outs);
    ok(nrt_free_model_tensor_info(info), "free tensor info");
    ok(nrt_unload(model), "nrt_unload");
    nrt_close();
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s copy.neff\n", argv[0]);
        return 2;
    }
    std::ifstream f(argv[1], std::ios::binary);
    std::vector<char> neff((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    check(!neff.empty(), "reading the NEFF");

    uint32_t visible = 0;
    ok(nrt_get_visible_nc_count(&visible), "nrt_get_visible_nc_count before nrt_init");
    check(visible >= 1, "at least one visible core before init");
    nrt_version_t v{};
    ok(nrt_get_version(&v, sizeof v), "nrt_get_version");
    check(v.rt_major == NRT_RS_LIBNRT_MAJOR && v.rt_minor == NRT_RS_LIBNRT_MINOR, "rt_major.rt_minor is the libnrt API version");
    check(std::strncmp(v.rt_detail, "nrt-rs ", 7) == 0, "rt_detail names nrt-rs");

    run_once(neff);
    run_once(neff);  // init -> close -> init in one process
    if (failures == 0) std::printf("client ok: libnrt %llu.%llu, %u visible cores, %s\n", static_cast<unsigned long long>(v.rt_major),
                                   static_cast<unsigned long long>(v.rt_minor), visible, v.rt_detail);
    return failures == 0 ? 0 : 1;
}
