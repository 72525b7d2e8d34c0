/* The asynchronous C API on the copy example.
 *   async_api <copy.neff> explicit  - nrta_* schedule calls, statuses
 *        written on completion, eventfds for a sequence and for an XU
 *        driven through epoll, tensor-op queue (the eight-argument tensor
 *        calls, on the tensor's own logical core and on another), refusals;
 *   async_api <copy.neff> implicit  - run with
 *        NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS > 0: nrt_execute
 *        returns at once, statuses reach the registered callback, drain;
 *   async_api <copy.neff> untracked - run with implicit async on,
 *        NEURON_SIM_INJECT=hang and a short NEURON_RT_EXEC_TIMEOUT: the
 *        batch calls' `unsafe` skips tensor tracking (returns while the
 *        hung execution still uses the tensor), without it they wait;
 *   async_api <copy.neff> bench N D P - N executions with D kept
 *        queued, completions awaited by pattern P (xu, batch or poll; see
 *        bench_run): prints executions/s and the mean gap between
 *        completions. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include "check.h"
#include "nrt/nrt_async.h"
#include "nrt/nrt_experimental.h"

#define ROWS 8
#define COLS 128
#define BYTES (ROWS * COLS * 4)
#define RUNS 24

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void fill(float *x, int seed) {
    for (int i = 0; i < ROWS * COLS; i++) x[i] = (float)((i * 13 + seed * 7) % 977) * 0.5f - 1.0f;
}

/* Waits on `ep` (up to 10 s) and returns the tag of the ready descriptor
 * after draining its counter, or -1. */
static int wait_one(int ep, uint64_t *count) {
    struct epoll_event ev;
    int n = epoll_wait(ep, &ev, 1, 10000);
    if (n != 1) return -1;
    uint64_t v = 0;
    if (read((int)(ev.data.u64 >> 32), &v, sizeof v) != sizeof v) return -1;
    if (count) *count = v;
    return (int)(ev.data.u64 & 0xffffffff);
}

static void watch(int ep, int fd, uint32_t tag) {
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = ((uint64_t)(uint32_t)fd << 32) | tag};
    EXPECT(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0);
}

struct io {
    nrt_model_t *model;
    nrt_tensor_t *tin, *tout;
    nrt_tensor_set_t *ins, *outs;
    float *x, *y;
};

static void setup(struct io *io, const char *path) {
    size_t size = 0;
    void *neff = read_file(path, &size);
    OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "2.0", ""));
    OK(nrt_load(neff, size, 0, -1, &io->model));
    free(neff);
    io->x = malloc(BYTES);
    io->y = malloc(BYTES);
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, BYTES, "input", &io->tin));
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, BYTES, "output", &io->tout));
    OK(nrt_allocate_tensor_set(&io->ins));
    OK(nrt_allocate_tensor_set(&io->outs));
    OK(nrt_add_tensor_to_tensor_set(io->ins, "input", io->tin));
    OK(nrt_add_tensor_to_tensor_set(io->outs, "output", io->tout));
    fill(io->x, 3);
    OK(nrt_tensor_write(io->tin, io->x, 0, BYTES));
}

static int explicit_api(struct io *io) {
    nrta_seq_t seq = 0, untouched = 77;
    NRT_STATUS st[RUNS];
    /* Refusals leave the outputs alone. */
    EXPECT_STATUS(nrta_execute_schedule(io->model, io->ins, io->outs, 0, NULL, NULL), NRT_INVALID);
    EXPECT_STATUS(nrta_execute_schedule(io->model, io->ins, io->outs, 1, NULL, &untouched), NRT_INVALID);
    nrt_tensor_t *hin = NULL;
    nrt_tensor_set_t *hins = NULL;
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_VIRTUAL, -1, BYTES, "hin", &hin));
    OK(nrt_allocate_tensor_set(&hins));
    OK(nrt_add_tensor_to_tensor_set(hins, "input", hin));
    EXPECT_STATUS(nrta_execute_schedule(io->model, hins, io->outs, 0, NULL, &untouched), NRT_INVALID);
    EXPECT(untouched == 77);
    bool done = true;
    EXPECT_STATUS(nrta_is_completed(((nrta_seq_t)0x0001 << 48) | 1, &done), NRT_INVALID);

    /* An eventfd for every completion of the compute XU, driven by epoll. */
    int ep = epoll_create1(EPOLL_CLOEXEC);
    int xu_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    watch(ep, xu_efd, 1);
    OK(nrta_event_register_xu_completion(0, NRTA_XU_COMPUTE, 0, xu_efd));

    nrta_seq_t seqs[RUNS];
    int queued = 0, completed = 0, full = 0;
    while (queued < RUNS) {
        st[queued] = -1;
        NRT_STATUS s = nrta_execute_schedule(io->model, io->ins, io->outs, 0, &st[queued], &seq);
        if (s == NRT_SUCCESS) {
            seqs[queued++] = seq;
        } else if (s == NRT_QUEUE_FULL) {
            /* Back-pressure changes nothing: no sequence id, no status
             * written; wait for one completion, then retry. */
            EXPECT(seq == (queued ? seqs[queued - 1] : 0) && st[queued] == (NRT_STATUS)-1);
            full++;
            uint64_t c = 0;
            EXPECT(wait_one(ep, &c) == 1);
            completed += (int)c;
        } else {
            EXPECT_STATUS(s, NRT_SUCCESS);
            break;
        }
    }
    /* A per-sequence eventfd for the last one. */
    int seq_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    watch(ep, seq_efd, 2);
    OK(nrta_event_register_seq_id_completion(seqs[RUNS - 1], seq_efd));
    int got_seq = 0;
    while (!got_seq) {
        uint64_t c = 0;
        int tag = wait_one(ep, &c);
        if (tag == 2) got_seq = 1;
        else if (tag == 1) completed += (int)c;
        else {
            EXPECT(tag == 1 || tag == 2);
            break;
        }
    }
    for (int i = 0; i < RUNS; i++) {
        EXPECT(NRTA_SEQ_GET_SEQ_NUM(seqs[i]) == (uint64_t)i + 1);
        EXPECT(NRTA_SEQ_GET_XU_ID(seqs[i]) == NRTA_XU_COMPUTE);
        EXPECT(st[i] == NRT_SUCCESS);
        OK(nrta_is_completed(seqs[i], &done));
        EXPECT(done);
    }
    nrta_seq_t last = 0;
    OK(nrta_get_sequence(0, NRTA_XU_COMPUTE, 0, &last));
    EXPECT(last == seqs[RUNS - 1]);
    EXPECT_STATUS(nrta_is_completed(seqs[RUNS - 1] + 1, &done), NRT_INVALID);
    EXPECT_STATUS(nrta_get_sequence(0, 7, 0, &last), NRT_INVALID);
    OK(nrt_tensor_read(io->tout, io->y, 0, BYTES));
    EXPECT(memcmp(io->x, io->y, BYTES) == 0);
    OK(nrt_tensor_check_output_completion(io->tout, 10000000, RUNS));

    /* Tensor-op queue: write, copy, read, in order, on the tensors' own
     * logical core (nrt_tensor_get_lnc_index); an eventfd for the last. */
    int lnc = -1;
    OK(nrt_tensor_get_lnc_index(io->tin, &lnc));
    EXPECT(lnc == 0);
    fill(io->x, 11);
    NRT_STATUS ws = -1, cs = -1, rs = -1;
    OK(nrta_tensor_write(io->tin, io->x, 0, BYTES, lnc, 0, &ws, &seq));
    OK(nrta_tensor_copy(io->tin, 0, io->tout, 0, BYTES, 0, &cs, &seq));
    memset(io->y, 0, BYTES);
    OK(nrta_tensor_read(io->y, io->tout, 0, BYTES, lnc, 0, &rs, &seq));
    EXPECT(NRTA_SEQ_GET_SEQ_NUM(seq) == 3 && NRTA_SEQ_GET_XU_ID(seq) == NRTA_XU_TENSOR_OP);
    int handle = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    OK(nrta_event_register_seq_id_completion(seq, handle));
    watch(ep, handle, 3);
    uint64_t c = 0;
    int tag;
    while ((tag = wait_one(ep, &c)) == 1) {}
    EXPECT(tag == 3);
    close(handle);
    EXPECT(ws == NRT_SUCCESS && cs == NRT_SUCCESS && rs == NRT_SUCCESS);
    EXPECT(memcmp(io->x, io->y, BYTES) == 0);
    /* Another logical core of the device moves the tensor with its own
     * engines, on its own TENSOR_OP unit (the sequence names it). */
    uint32_t vncs = 0;
    OK(nrt_get_visible_vnc_count(&vncs));
    if (vncs > 1) {
        fill(io->x, 19);
        OK(nrta_tensor_write(io->tin, io->x, 0, BYTES, 1, 1, &ws, &seq));
        EXPECT(NRTA_SEQ_GET_XU_ID(seq) == ((1u << 8) | (1u << 4) | NRTA_XU_TENSOR_OP));
        memset(io->y, 0, BYTES);
        OK(nrta_tensor_read(io->y, io->tin, 0, BYTES, 1, 1, &rs, &seq));
        for (int spin = 0; spin < 1000000; spin++) {
            bool d = false;
            OK(nrta_is_completed(seq, &d));
            if (d) break;
            usleep(10);
        }
        EXPECT(ws == NRT_SUCCESS && rs == NRT_SUCCESS);
        EXPECT(memcmp(io->x, io->y, BYTES) == 0);
    }
    /* Refusals: each leaves the sequence output alone. */
    nrta_seq_t keep = 55;
    EXPECT_STATUS(nrta_tensor_write(io->tin, io->x, BYTES, 4, 0, 0, NULL, &keep), NRT_INVALID);
    EXPECT_STATUS(nrta_tensor_read(io->y, hin, 0, 4, 0, 0, NULL, &keep), NRT_INVALID);
    EXPECT_STATUS(nrta_tensor_copy(io->tin, 0, io->tout, 0, 4, 2, NULL, &keep), NRT_INVALID);
    EXPECT_STATUS(nrta_tensor_write(io->tin, io->x, 0, 4, (int)vncs, 0, NULL, &keep), NRT_INVALID);
    EXPECT_STATUS(nrta_tensor_read(io->y, io->tin, 0, 4, -1, 0, NULL, &keep), NRT_INVALID);
    EXPECT(keep == 55);
    EXPECT_STATUS(nrt_tensor_get_lnc_index(hin, &lnc), NRT_INVALID);
    printf("explicit: %d queue-full retries\n", full);
    close(xu_efd);
    close(seq_efd);
    close(ep);
    nrt_close();
    return finish("async_api explicit");
}

struct call {
    uint32_t model_id, vnc;
    uint64_t job;
    NRT_STATUS status;
};
static struct call g_calls[64];
static atomic_int g_ncalls;
/* Callbacks whose entry is written: counted after the write, so a reader
   that sees the count sees the entries (the count of calls alone is
   taken before the write; ThreadSanitizer reported reading an entry
   still being written). */
static atomic_int g_written;
static int g_param;

static void on_done(void *params, uint32_t model_id, uint32_t vnc, uint64_t job_id, NRT_STATUS status) {
    int i = atomic_fetch_add(&g_ncalls, 1);
    if (params == &g_param && i < 64) g_calls[i] = (struct call){model_id, vnc, job_id, status};
    atomic_fetch_add(&g_written, 1);
}

static int implicit_api(struct io *io) {
    OK(nrt_register_async_exec_callback(on_done, &g_param));
    for (int i = 0; i < 10; i++) OK(nrt_execute(io->model, io->ins, io->outs));
    /* A read of an output still in use waits for its executions. */
    OK(nrt_tensor_read(io->tout, io->y, 0, BYTES));
    EXPECT(memcmp(io->x, io->y, BYTES) == 0);
    OK(nrt_async_drain_queued_execs(0));
    /* The drain returns after the callbacks have returned. */
    EXPECT(atomic_load(&g_written) == 10);
    EXPECT(atomic_load(&g_ncalls) == 10);
    for (int i = 0; i < 10 && i < atomic_load(&g_written); i++) {
        EXPECT(g_calls[i].status == NRT_SUCCESS && g_calls[i].vnc == 0);
        EXPECT(i == 0 || g_calls[i].job > g_calls[i - 1].job);
        EXPECT(g_calls[i].model_id == g_calls[0].model_id);
    }
    /* Host tensors are refused in async mode. */
    nrt_tensor_t *hin = NULL;
    nrt_tensor_set_t *hins = NULL;
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_VIRTUAL, -1, BYTES, "hin", &hin));
    OK(nrt_allocate_tensor_set(&hins));
    OK(nrt_add_tensor_to_tensor_set(hins, "input", hin));
    EXPECT_STATUS(nrt_execute(io->model, hins, io->outs), NRT_INVALID);
    nrt_close();
    return finish("async_api implicit");
}

/* The untracked calls, made from their own thread while the execution
 * hangs: the main thread waits (boundedly) for them to return. */
struct untracked {
    struct io *io;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int returned;
    NRT_STATUS read, write;
};

static void *untracked_calls(void *arg) {
    struct untracked *u = arg;
    nrt_tensor_batch_op_t rop = {0, BYTES, u->io->y};
    nrt_tensor_batch_t rb = {u->io->tout, &rop, 1};
    nrt_tensor_batch_op_t wop = {0, 16, u->io->x};
    nrt_tensor_batch_t wb = {u->io->tin, &wop, 1};
    NRT_STATUS r = nrt_tensor_read_batch(&rb, 1, true);
    NRT_STATUS w = nrt_tensor_write_batch(&wb, 1, true);
    pthread_mutex_lock(&u->lock);
    u->read = r, u->write = w, u->returned = 1;
    pthread_cond_signal(&u->cond);
    pthread_mutex_unlock(&u->lock);
    return NULL;
}

static atomic_int g_hung_done;
static atomic_int g_hung_status = -1;

static void on_hung(void *params, uint32_t model_id, uint32_t vnc, uint64_t job_id, NRT_STATUS status) {
    (void)params, (void)model_id, (void)vnc, (void)job_id;
    atomic_store(&g_hung_status, (int)status);
    atomic_store(&g_hung_done, 1);
}

static int untracked_api(struct io *io) {
    OK(nrt_register_async_exec_callback(on_hung, NULL));
    /* Hangs on the device until NEURON_RT_EXEC_TIMEOUT (10 s); until
       then the execution uses both tensors. */
    OK(nrt_execute(io->model, io->ins, io->outs));
    struct untracked u = {.io = io, .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, untracked_calls, &u) == 0);
    /* Untracked, they return while the execution still runs: well before
       the timeout ends it (a tracked call would wait for that). */
    struct timespec limit;
    clock_gettime(CLOCK_REALTIME, &limit);
    limit.tv_sec += 7;
    pthread_mutex_lock(&u.lock);
    while (!u.returned && pthread_cond_timedwait(&u.cond, &u.lock, &limit) == 0) {
    }
    int returned = u.returned;
    pthread_mutex_unlock(&u.lock);
    EXPECT(returned);
    EXPECT(atomic_load(&g_hung_done) == 0);
    pthread_join(t, NULL);
    OK(u.read);
    OK(u.write);
    /* Tracked, the same read waits for the execution to end. */
    nrt_tensor_batch_op_t rop = {0, BYTES, io->y};
    nrt_tensor_batch_t rb = {io->tout, &rop, 1};
    OK(nrt_tensor_read_batch(&rb, 1, false));
    OK(nrt_async_drain_queued_execs(0));
    EXPECT(atomic_load(&g_hung_done) == 1);
    EXPECT(atomic_load(&g_hung_status) == NRT_TIMEOUT);
    nrt_close();
    return finish("async_api untracked");
}

/* One bench run; prints executions/s and the mean gap for `pattern`:
 *  "xu":    a blocking eventfd of the compute XU, read after every refill
 *           (one worker-side eventfd write and reader wake-up per
 *           completion);
 *  "batch": refill, then sleep on a sequence eventfd until half of the
 *           queue has completed (one write and wake-up per depth/2
 *           completions);
 *  "poll":  the runtime's own way of waiting (`ExecUnit::wait`): refill,
 *           then poll nrta_is_completed for the oldest request for up to
 *           200 us (yielding the CPU every 8 polls) and only then sleep on
 *           its sequence eventfd.
 *           A sleeping client wakes tens of microseconds after the write
 *           on a VM, long after a queue of short executions ran dry. */
static int bench_run(struct io *io, int n, int depth, const char *pattern) {
    nrta_seq_t *seqs = calloc((size_t)n, sizeof *seqs);
    NRT_STATUS *st = calloc((size_t)n, sizeof *st);
    bool poll = strcmp(pattern, "poll") == 0;
    /* xu counts completions on the unit's eventfd; batch and poll wait
     * for one request through its sequence eventfd. */
    bool by_xu = strcmp(pattern, "xu") == 0;
    int efd = eventfd(0, EFD_CLOEXEC);
    if (by_xu) OK(nrta_event_register_xu_completion(0, NRTA_XU_COMPUTE, 0, efd));
    double t0 = now_us(), t_first = 0;
    int issued = 0, completed = 0;
    while (completed < n) {
        while (issued < n && issued - completed < depth) {
            NRT_STATUS s = nrta_execute_schedule(io->model, io->ins, io->outs, 0, &st[issued], &seqs[issued]);
            if (s == NRT_QUEUE_FULL) break;
            if (s != NRT_SUCCESS) {
                EXPECT_STATUS(s, NRT_SUCCESS);
                return finish("async_api bench");
            }
            issued++;
        }
        uint64_t c = 0;
        if (!by_xu) {
            /* Sleep until the request half-way down the queue is done,
             * then count every completion since. */
            /* poll waits for the oldest request (a refill per completion
             * keeps the queue full however long the refill takes),
             * batch for the one half-way down the queue. */
            int target = poll ? completed : completed + ((issued - completed) / 2 > 0 ? (issued - completed) / 2 : 1) - 1;
            bool done = false;
            if (poll) {
                double until = now_us() + 200;
                for (int k = 1; !done; k++) {
                    OK(nrta_is_completed(seqs[target], &done));
                    if (k % 8 == 0) {
                        if (now_us() > until) break;
                        sched_yield();
                    }
                }
            }
            if (!done) {
                OK(nrta_event_register_seq_id_completion(seqs[target], efd));
                if (read(efd, &c, sizeof c) != sizeof c) {
                    EXPECT(!"eventfd read failed");
                    break;
                }
            }
            c = 0;
            while (completed + (int)c < issued) {
                bool fin = false;
                OK(nrta_is_completed(seqs[completed + (int)c], &fin));
                if (!fin) break;
                c++;
            }
        } else if (read(efd, &c, sizeof c) != sizeof c) {
            EXPECT(!"eventfd read failed");
            break;
        }
        if (completed == 0) t_first = now_us();
        completed += (int)c;
    }
    double t_last = now_us();
    bool done = false;
    for (int i = 0; i < n; i++) EXPECT(st[i] == NRT_SUCCESS);
    OK(nrta_is_completed(seqs[n - 1], &done));
    EXPECT(done);
    printf("pattern=%s executions_per_s=%.1f gap_us=%.3f\n", pattern, n / ((t_last - t0) / 1e6), (t_last - t_first) / (n > 1 ? n - 1 : 1));
    close(efd);
    free(seqs);
    free(st);
    return 0;
}

static int bench(struct io *io, int n, int depth, const char *pattern) {
    /* One pattern per process: an XU eventfd registration stays for the
     * life of the runtime, and every later completion would pay its
     * write. */
    if (strcmp(pattern, "xu") != 0 && strcmp(pattern, "batch") != 0 && strcmp(pattern, "poll") != 0) {
        fprintf(stderr, "unknown pattern %s (xu, batch or poll)\n", pattern);
        return 2;
    }
    bench_run(io, n, depth, pattern);
    nrt_close();
    return finish("async_api bench");
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s <copy.neff> explicit|implicit|untracked|bench N D xu|batch|poll\n", argv[0]);
        return 2;
    }
    struct io io = {0};
    setup(&io, argv[1]);
    int rc = 2;
    if (!io.model) rc = finish("async_api");
    else if (strcmp(argv[2], "explicit") == 0) rc = explicit_api(&io);
    else if (strcmp(argv[2], "implicit") == 0) rc = implicit_api(&io);
    else if (strcmp(argv[2], "untracked") == 0) rc = untracked_api(&io);
    else if (strcmp(argv[2], "bench") == 0 && argc >= 6) rc = bench(&io, atoi(argv[3]), atoi(argv[4]), argv[5]);
    else fprintf(stderr, "unknown mode %s\n", argv[2]);
    /* The host buffers (the library's objects went with nrt_close);
       LeakSanitizer checks that nothing else is left. */
    free(io.x);
    free(io.y);
    return rc;
}
