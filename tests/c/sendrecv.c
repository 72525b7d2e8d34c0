/* nrt_async_sendrecv.h over libfabric tcp on loopback.
 *
 *   sendrecv both        two LNCs of this process: a device tensor slice
 *                        crosses from LNC 0 to LNC 1; limits, bad handles
 *                        and wrong-state calls get their statuses.
 *   sendrecv send|recv   one side each, in two processes: LNC 0 of the
 *                        sender sends 4 MiB to LNC 1 of the receiver, which
 *                        checks the bytes.
 *
 * The driver (crates/nrt-capi/tests/c_api.rs) sets
 * NEURON_RT_ASYNC_SENDRECV_EXPERIMENTAL_ENABLED, the bootstrap port and
 * FI_PROVIDER=tcp, FI_TCP_IFACE=lo. Every wait here is bounded. */
#include "check.h"
#include "nrt/nrt_async_sendrecv.h"
#include <time.h>

#define BIG (4u << 20)

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Polls test_comm until connected; 0 on success. */
static int wait_comm(nrt_async_sendrecv_comm_t *c) {
    double end = now_s() + 60;
    for (;;) {
        bool done = false;
        NRT_STATUS s = nrt_async_sendrecv_test_comm(c, &done);
        if (s != NRT_SUCCESS) {
            fprintf(stderr, "test_comm returned %s\n", nrt_get_status_as_str(s));
            return 1;
        }
        if (done) return 0;
        if (now_s() > end) {
            fprintf(stderr, "a communicator never connected\n");
            return 1;
        }
        struct timespec nap = {0, 200000};
        nanosleep(&nap, NULL);
    }
}

/* Polls test_request until done; returns the size or (size_t)-1. */
static size_t wait_req(nrt_async_sendrecv_request_t *r) {
    double end = now_s() + 60;
    for (;;) {
        bool done = false;
        size_t size = 0;
        NRT_STATUS s = nrt_async_sendrecv_test_request(r, &done, &size);
        if (s != NRT_SUCCESS) {
            fprintf(stderr, "test_request returned %s\n", nrt_get_status_as_str(s));
            return (size_t)-1;
        }
        if (done) return size;
        if (now_s() > end) {
            fprintf(stderr, "a transfer never completed\n");
            return (size_t)-1;
        }
        struct timespec nap = {0, 100000};
        nanosleep(&nap, NULL);
    }
}

static void fill(uint8_t *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)((i * 131 + seed) >> 3);
}

static int both(void) {
    int num = 0;
    OK(nrt_async_sendrecv_get_max_num_communicators_per_lnc(&num));
    EXPECT(num == 128);
    OK(nrt_async_sendrecv_get_max_num_pending_request(&num));
    EXPECT(num == 128);
    EXPECT_STATUS(nrt_async_sendrecv_get_max_num_pending_request(NULL), NRT_INVALID);

    OK(nrt_async_sendrecv_init(0));
    OK(nrt_async_sendrecv_init(1));
    EXPECT_STATUS(nrt_async_sendrecv_init(1), NRT_FAILURE);
    EXPECT_STATUS(nrt_async_sendrecv_init(128), NRT_FAILURE);

    nrt_async_sendrecv_comm_t *tx = NULL, *rx = NULL;
    OK(nrt_async_sendrecv_connect("127.0.0.1", 1, 0, &tx));
    EXPECT_STATUS(nrt_async_sendrecv_connect("no such host", 1, 0, &tx), NRT_FAILURE);
    EXPECT_STATUS(nrt_async_sendrecv_connect("127.0.0.1", 1, 7, &tx), NRT_FAILURE); /* LNC 7 not initialised */
    EXPECT_STATUS(nrt_async_sendrecv_connect("127.0.0.1", 1, 0, NULL), NRT_INVALID);

    nrt_tensor_t *src = NULL, *dst = NULL;
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 65536, "src", &src));
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 65536, "dst", &dst));
    static uint8_t in[65536], out[65536];
    fill(in, sizeof in, 5);
    OK(nrt_tensor_write(src, in, 0, sizeof in));
    memset(out, 0x5A, sizeof out);
    OK(nrt_tensor_write(dst, out, 0, sizeof out));

    /* Not connected yet: posts are refused with INVALID_HANDLE (the
     * accept has not even been made). */
    nrt_async_sendrecv_request_t *req = NULL;
    EXPECT_STATUS(nrt_async_sendrecv_send_tensor(src, 0, 16, tx, &req), NRT_INVALID_HANDLE);

    OK(nrt_async_sendrecv_accept("127.0.0.1", 0, 1, &rx));
    if (wait_comm(tx) || wait_comm(rx)) return 1;

    nrt_async_sendrecv_request_t *s = NULL, *r = NULL;
    OK(nrt_async_sendrecv_recv_tensor(dst, 1024, 40000, rx, &r));
    OK(nrt_async_sendrecv_send_tensor(src, 4096, 40000, tx, &s));
    EXPECT(wait_req(s) == 40000);
    EXPECT(wait_req(r) == 40000);
    OK(nrt_async_sendrecv_flush(1));
    OK(nrt_tensor_read(dst, out, 0, sizeof out));
    EXPECT(memcmp(out + 1024, in + 4096, 40000) == 0);
    EXPECT(out[1023] == 0x5A && out[1024 + 40000] == 0x5A);

    /* A finished request is gone; bad arguments. */
    bool done = true;
    size_t size = 7;
    EXPECT_STATUS(nrt_async_sendrecv_test_request(s, &done, &size), NRT_INVALID_HANDLE);
    EXPECT_STATUS(nrt_async_sendrecv_test_request(NULL, &done, &size), NRT_INVALID_HANDLE);
    EXPECT_STATUS(nrt_async_sendrecv_test_request(r, NULL, &size), NRT_INVALID);
    EXPECT_STATUS(nrt_async_sendrecv_send_tensor(src, 65000, 1000, tx, &req), NRT_FAILURE); /* out of bounds */
    EXPECT_STATUS(nrt_async_sendrecv_send_tensor(src, 0, 16, rx, &req), NRT_FAILURE);       /* wrong direction */
    EXPECT_STATUS(nrt_async_sendrecv_send_tensor(NULL, 0, 16, tx, &req), NRT_FAILURE);
    EXPECT_STATUS(nrt_async_sendrecv_send_tensor(src, 0, 16, NULL, &req), NRT_FAILURE);
    EXPECT_STATUS(nrt_async_sendrecv_send_tensor(src, 0, 16, (nrt_async_sendrecv_comm_t *)in, &req), NRT_INVALID_HANDLE);
    EXPECT_STATUS(nrt_async_sendrecv_test_comm((nrt_async_sendrecv_comm_t *)in, &done), NRT_INVALID_HANDLE);
    EXPECT_STATUS(nrt_async_sendrecv_test_comm(tx, NULL), NRT_INVALID);
    EXPECT_STATUS(nrt_async_sendrecv_flush(5), NRT_FAILURE);

    OK(nrt_async_sendrecv_close(0));
    OK(nrt_async_sendrecv_close(1));
    EXPECT_STATUS(nrt_async_sendrecv_close(1), NRT_FAILURE);
    /* Closed: the communicator handles are dead. */
    EXPECT_STATUS(nrt_async_sendrecv_test_comm(tx, &done), NRT_INVALID_HANDLE);
    /* A clean close allows a new init. */
    OK(nrt_async_sendrecv_init(0));
    OK(nrt_async_sendrecv_close(0));
    nrt_tensor_free(&src);
    nrt_tensor_free(&dst);
    return 0;
}

static int one_side(int send) {
    int lnc = send ? 0 : 1;
    OK(nrt_async_sendrecv_init(lnc));
    nrt_async_sendrecv_comm_t *c = NULL;
    if (send)
        OK(nrt_async_sendrecv_connect("127.0.0.1", 1, 0, &c));
    else
        OK(nrt_async_sendrecv_accept("127.0.0.1", 0, 1, &c));
    if (wait_comm(c)) return 1;
    nrt_tensor_t *t = NULL;
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, BIG, "payload", &t));
    uint8_t *want = malloc(BIG), *got = malloc(BIG);
    fill(want, BIG, 11);
    nrt_async_sendrecv_request_t *r = NULL;
    if (send) {
        OK(nrt_tensor_write(t, want, 0, BIG));
        OK(nrt_async_sendrecv_send_tensor(t, 0, BIG, c, &r));
    } else {
        OK(nrt_async_sendrecv_recv_tensor(t, 0, BIG, c, &r));
    }
    EXPECT(wait_req(r) == BIG);
    if (!send) {
        OK(nrt_async_sendrecv_flush(1));
        OK(nrt_tensor_read(t, got, 0, BIG));
        EXPECT(memcmp(got, want, BIG) == 0);
    }
    OK(nrt_async_sendrecv_close(lnc));
    nrt_tensor_free(&t);
    free(want);
    free(got);
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "both";
    /* Only while the runtime is up. */
    EXPECT_STATUS(nrt_async_sendrecv_init(0), NRT_UNINITIALIZED);
    OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""));
    int rc = strcmp(mode, "both") == 0 ? both() : one_side(strcmp(mode, "send") == 0);
    nrt_close();
    char name[64];
    snprintf(name, sizeof name, "sendrecv %s", mode);
    return finish(name) | rc;
}
