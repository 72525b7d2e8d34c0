// A C++17 client of libnrt 2.29+'s asynchronous API, written the way
// current clients (nkipy's spike) call it, built against include/ alone:
// the eight-argument nrta_tensor_write / nrta_tensor_read with the
// tensor's logical core (nrt_tensor_get_lnc_index), NRT_STATUS* results,
// one eventfd registered per execution unit (TENSOR_OP and COMPUTE of
// every logical core) driven through epoll, and progress read by polling
// sequences (nrta_get_sequence against each request's sequence number).
//
// Usage: async_pipeline <mlp.neff> <W.f32> <b.f32> [iterations]
//
// On up to four logical cores, each with its own copy of examples/mlp
// (y = relu(x @ W + b), x [128, 512], W [512, 512]) and two buffer slots,
// every iteration is a pipeline: write x (TENSOR_OP) -> execute (COMPUTE)
// -> read y (TENSOR_OP). A stage is scheduled only once the stage before
// it completed (requests on different units are not ordered, libnrt's
// rule), and NRT_QUEUE_FULL is retried at the next wake-up. Every y is
// checked against the formula computed here in fp32. Prints
// "async_pipeline: ..." and exits 0 only if everything matched.
#include <nrt/nrt.h>
#include <nrt/nrt_async.h>
#include <nrt/nrt_experimental.h>
#include <nrt/nrt_status.h>

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int M = 128, K = 512, N = 512;
constexpr int MAX_LNC = 4, SLOTS = 2;

int failures = 0;

void check(bool ok, const std::string &what) {
    if (!ok) {
        std::fprintf(stderr, "FAILED: %s\n", what.c_str());
        ++failures;
    }
}

bool ok(NRT_STATUS s, const std::string &what) {
    check(s == NRT_SUCCESS, what + " -> " + nrt_get_status_as_str(s));
    return s == NRT_SUCCESS;
}

std::vector<char> slurp(const char *path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Whether sequence `seq` of unit (lnc, xu, queue 0) has completed: the
// unit's last completed sequence number has reached it (spike's test).
bool reached(int lnc, nrta_xu_t xu, nrta_seq_t seq) {
    nrta_seq_t last = 0;
    if (!ok(nrta_get_sequence(static_cast<uint32_t>(lnc), xu, 0, &last), "nrta_get_sequence")) return false;
    return NRTA_SEQ_GET_SEQ_NUM(last) >= NRTA_SEQ_GET_SEQ_NUM(seq);
}

enum class Stage { Idle, Writing, Executing, Reading };

struct Slot {
    nrt_tensor_t *x = nullptr, *y = nullptr;
    nrt_tensor_set_t *ins = nullptr, *outs = nullptr;
    std::vector<float> host_x = std::vector<float>(M * K), host_y = std::vector<float>(M * N);
    Stage stage = Stage::Idle;
    nrta_seq_t seq = 0;
    // One status per stage: a stage retried after NRT_QUEUE_FULL checks
    // the previous stage's status again.
    NRT_STATUS write_status = NRT_SUCCESS, exec_status = NRT_SUCCESS, read_status = NRT_SUCCESS;
    int iteration = -1;
};

struct Core {
    int lnc = 0;
    nrt_model_t *model = nullptr;
    std::array<Slot, SLOTS> slots;
    int started = 0, finished = 0;
};

void fill(std::vector<float> &x, uint32_t seed) {
    uint32_t state = seed;
    for (auto &v : x) {
        state = state * 1664525u + 1013904223u;
        v = static_cast<float>(state >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f;
    }
}

// relu(x @ W + b) in fp32, K order; returns how many elements differ by
// more than 1e-3.
int mismatches(const std::vector<float> &x, const std::vector<float> &y, const float *w, const float *b) {
    int bad = 0;
    std::vector<float> acc(N);
    for (int i = 0; i < M; ++i) {
        std::fill(acc.begin(), acc.end(), 0.0f);
        for (int k = 0; k < K; ++k) {
            const float xv = x[i * K + k];
            const float *wr = w + static_cast<size_t>(k) * N;
            for (int j = 0; j < N; ++j) acc[j] += xv * wr[j];
        }
        for (int j = 0; j < N; ++j) {
            const float want = acc[j] + b[j] > 0.0f ? acc[j] + b[j] : 0.0f;
            if (std::fabs(y[i * N + j] - want) > 1e-3f) ++bad;
        }
    }
    return bad;
}

// Schedules the next stage of `s` if its previous request completed;
// returns false when the queue was full (retry later).
bool advance(Core &c, Slot &s, int iterations, const float *w, const float *b) {
    const std::string where = "lnc " + std::to_string(c.lnc) + " iteration " + std::to_string(s.iteration);
    switch (s.stage) {
    case Stage::Idle: {
        if (c.started >= iterations) return true;
        s.iteration = c.started;
        fill(s.host_x, 1000u * static_cast<uint32_t>(c.lnc) + static_cast<uint32_t>(s.iteration) + 1);
        int lnc = -1;
        ok(nrt_tensor_get_lnc_index(s.x, &lnc), "nrt_tensor_get_lnc_index");
        check(lnc == c.lnc, "the input tensor lives on its logical core");
        s.write_status = static_cast<NRT_STATUS>(-1);
        const NRT_STATUS r = nrta_tensor_write(s.x, s.host_x.data(), 0, sizeof(float) * M * K, lnc, 0, &s.write_status, &s.seq);
        if (r == NRT_QUEUE_FULL) return false;
        if (!ok(r, "nrta_tensor_write " + where)) return true;
        ++c.started;
        s.stage = Stage::Writing;
        return true;
    }
    case Stage::Writing: {
        if (!reached(c.lnc, NRTA_XU_TENSOR_OP, s.seq)) return true;
        // The status was written before the completion became visible.
        ok(s.write_status, "write status " + where);
        s.exec_status = static_cast<NRT_STATUS>(-1);
        const NRT_STATUS r = nrta_execute_schedule(c.model, s.ins, s.outs, 0, &s.exec_status, &s.seq);
        if (r == NRT_QUEUE_FULL) return false;
        if (ok(r, "nrta_execute_schedule " + where)) s.stage = Stage::Executing;
        return true;
    }
    case Stage::Executing: {
        if (!reached(c.lnc, NRTA_XU_COMPUTE, s.seq)) return true;
        ok(s.exec_status, "execute status " + where);
        s.read_status = static_cast<NRT_STATUS>(-1);
        const NRT_STATUS r = nrta_tensor_read(s.host_y.data(), s.y, 0, sizeof(float) * M * N, c.lnc, 0, &s.read_status, &s.seq);
        if (r == NRT_QUEUE_FULL) return false;
        if (ok(r, "nrta_tensor_read " + where)) s.stage = Stage::Reading;
        return true;
    }
    case Stage::Reading: {
        if (!reached(c.lnc, NRTA_XU_TENSOR_OP, s.seq)) return true;
        ok(s.read_status, "read status " + where);
        const int bad = mismatches(s.host_x, s.host_y, w, b);
        check(bad == 0, where + ": " + std::to_string(bad) + " elements differ from relu(x @ W + b)");
        ++c.finished;
        s.stage = Stage::Idle;
        return advance(c, s, iterations, w, b);
    }
    }
    return true;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s <mlp.neff> <W.f32> <b.f32> [iterations]\n", argv[0]);
        return 2;
    }
    const std::vector<char> neff = slurp(argv[1]);
    const std::vector<char> wb = slurp(argv[2]), bb = slurp(argv[3]);
    const int iterations = argc > 4 ? std::atoi(argv[4]) : 3;
    check(wb.size() == sizeof(float) * K * N && bb.size() == sizeof(float) * N, "W and b sizes");
    if (failures) return 1;
    const float *w = reinterpret_cast<const float *>(wb.data());
    const float *b = reinterpret_cast<const float *>(bb.data());

    if (!ok(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "async-pipeline", "1.0"), "nrt_init")) return 1;
    uint32_t visible = 0;
    ok(nrt_get_visible_vnc_count(&visible), "nrt_get_visible_vnc_count");
    check(visible >= 2, "at least two logical cores are visible");
    const int cores_n = static_cast<int>(std::min<uint32_t>(visible, MAX_LNC));

    int ep = epoll_create1(EPOLL_CLOEXEC);
    std::vector<int> fds;
    std::vector<Core> cores(static_cast<size_t>(cores_n));
    for (int l = 0; l < cores_n; ++l) {
        Core &c = cores[static_cast<size_t>(l)];
        c.lnc = l;
        ok(nrt_load(neff.data(), neff.size(), l, -1, &c.model), "nrt_load on lnc " + std::to_string(l));
        nrt_model_info_t info{};
        size_t info_size = 0;
        ok(nrt_get_model_info(c.model, &info, sizeof info, &info_size), "nrt_get_model_info");
        check(info.vnc == static_cast<uint32_t>(l), "the model runs on the logical core it was loaded on");
        for (Slot &s : c.slots) {
            ok(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, l, sizeof(float) * M * K, "x", &s.x), "allocate x");
            ok(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, l, sizeof(float) * M * N, "y", &s.y), "allocate y");
            ok(nrt_allocate_tensor_set(&s.ins), "input set");
            ok(nrt_allocate_tensor_set(&s.outs), "output set");
            ok(nrt_add_tensor_to_tensor_set(s.ins, "x", s.x), "add x");
            ok(nrt_add_tensor_to_tensor_set(s.outs, "y", s.y), "add y");
        }
        // One eventfd per execution unit the pipeline uses.
        for (nrta_xu_t xu : {NRTA_XU_TENSOR_OP, NRTA_XU_COMPUTE}) {
            const int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
            ok(nrta_event_register_xu_completion(l, xu, 0, fd), "nrta_event_register_xu_completion");
            epoll_event ev{};
            ev.events = EPOLLIN;
            ev.data.fd = fd;
            check(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0, "epoll_ctl");
            fds.push_back(fd);
        }
    }
    if (failures) return 1;

    const auto t0 = std::chrono::steady_clock::now();
    int full = 0, wakeups = 0;
    auto all_done = [&] {
        for (const Core &c : cores)
            if (c.finished < iterations) return false;
        return true;
    };
    while (!all_done() && failures == 0) {
        bool refused = false;
        for (Core &c : cores)
            for (Slot &s : c.slots)
                if (!advance(c, s, iterations, w, b)) refused = true;
        full += refused;
        if (all_done()) break;
        // Sleep until some unit completes something (bounded: a lost
        // wake-up would show as a timeout, not a hang).
        epoll_event evs[2 * MAX_LNC];
        const int n = epoll_wait(ep, evs, 2 * MAX_LNC, 60000);
        check(n > 0, "an execution unit completed something within 60 s");
        if (n <= 0) break;
        ++wakeups;
        for (int i = 0; i < n; ++i) {
            uint64_t count = 0;
            if (read(evs[i].data.fd, &count, sizeof count) != sizeof count) check(false, "eventfd read");
        }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    for (Core &c : cores) {
        for (Slot &s : c.slots) {
            nrt_destroy_tensor_set(&s.ins);
            nrt_destroy_tensor_set(&s.outs);
            nrt_tensor_free(&s.x);
            nrt_tensor_free(&s.y);
        }
        ok(nrt_unload(c.model), "nrt_unload");
    }
    for (int fd : fds) close(fd);
    close(ep);
    nrt_close();
    std::printf("async_pipeline: %d logical cores x %d iterations (write, execute, read) in %.2f s, %d wake-ups, %d queue-full retries, %d failed\n",
                cores_n, iterations, secs, wakeups, full, failures);
    return failures == 0 ? 0 : 1;
}
