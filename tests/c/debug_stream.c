/* ndebug_stream.h end to end, the way nkipy's DebugHandler uses it: a
 * client connects to the logical core the model runs on, waits on the
 * descriptor with epoll, reads each event into its header and a malloc'd
 * payload (freed here), and checks the printed tiles of the device-print
 * example (x, then y = 2x + 1) against what it passed in and got out.
 * Usage: debug_stream <device-print.neff> */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "nrt/ndebug_stream.h"
#include <stdint.h>
#include <sys/epoll.h>
#include <unistd.h>

#define ROWS 4
#define COLS 8
#define BYTES (ROWS * COLS * 4)

static nrt_tensor_set_t *one(const char *name, nrt_tensor_t **t) {
    nrt_tensor_set_t *s = NULL;
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, BYTES, name, t));
    OK(nrt_allocate_tensor_set(&s));
    OK(nrt_add_tensor_to_tensor_set(s, name, *t));
    return s;
}

/* Reads one event, checks it against `want`, frees its payload. */
static void expect_event(int fd, const char *prefix, const float *want) {
    ndebug_stream_event_header_t h;
    void *payload = NULL;
    OK(nrt_debug_client_read_one_event(fd, &h, &payload));
    if (!payload) return;
    const ndebug_stream_payload_debug_tensor_read_t *p = payload;
    EXPECT(h.type == NDEBUG_STREAM_EVENT_TYPE_DEBUG_TENSOR_READ);
    EXPECT(h.data_size == sizeof(*p) + BYTES);
    EXPECT(strcmp(p->prefix, prefix) == 0);
    EXPECT(p->logical_nc_id == 0);
    EXPECT(p->pipe == 3); /* DVE */
    EXPECT(strcmp(p->tensor_dtype, "float32") == 0);
    EXPECT(p->tensor_shape[0] == ROWS && p->tensor_shape[1] == COLS && p->tensor_shape[2] == 0);
    EXPECT(p->tensor_data_size == BYTES);
    EXPECT(memcmp(p->tensor_data, want, BYTES) == 0);
    free(payload);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s <device-print.neff>\n", argv[0]);
        return 2;
    }
    size_t size = 0;
    void *neff = read_file(argv[1], &size);
    OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "2.0", ""));
    nrt_model_t *model = NULL;
    OK(nrt_load(neff, size, 0, -1, &model));
    if (!model) return finish("debug_stream");
    nrt_tensor_t *x = NULL, *y = NULL;
    nrt_tensor_set_t *ins = one("x", &x), *outs = one("y", &y);
    float xv[ROWS * COLS], yv[ROWS * COLS], want[ROWS * COLS];
    for (int i = 0; i < ROWS * COLS; i++) {
        xv[i] = (float)i * 0.25f - 3.0f;
        want[i] = xv[i] * 2.0f + 1.0f;
    }
    OK(nrt_tensor_write(x, xv, 0, BYTES));

    int fd = -1;
    OK(nrt_debug_client_connect(0, &fd));
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    EXPECT(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0);
    struct epoll_event got[1];
    EXPECT(epoll_wait(ep, got, 1, 0) == 0); /* nothing yet */
    for (int run = 0; run < 3; run++) {
        OK(nrt_execute(model, ins, outs));
        OK(nrt_tensor_read(y, yv, 0, BYTES));
        EXPECT(memcmp(yv, want, BYTES) == 0);
        EXPECT(epoll_wait(ep, got, 1, 1000) == 1 && got[0].data.fd == fd);
        expect_event(fd, "x", xv);
        expect_event(fd, "y", want);
        ndebug_stream_event_header_t h;
        void *payload = (void *)0x5a5a;
        EXPECT_STATUS(nrt_debug_client_read_one_event(fd, &h, &payload), NRT_QUEUE_EMPTY);
        EXPECT(payload == (void *)0x5a5a);
        EXPECT(epoll_wait(ep, got, 1, 0) == 0); /* drained: not readable */
    }
    close(ep);
    nrt_debug_client_connect_close(fd);
    /* The core takes a new client after the close. */
    OK(nrt_debug_client_connect(0, &fd));
    nrt_debug_client_connect_close(fd);

    nrt_destroy_tensor_set(&ins);
    nrt_destroy_tensor_set(&outs);
    nrt_tensor_free(&x);
    nrt_tensor_free(&y);
    OK(nrt_unload(model));
    nrt_close();
    free(neff);
    return finish("debug_stream");
}
