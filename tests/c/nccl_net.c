/* nrt_get_libnccl_net: `nccl_net present` expects the plugin (a stand-in
 * libnccom-net.so on LD_LIBRARY_PATH exporting ncclNetPlugin_v6) to be
 * opened and its symbol found through the returned handle; `nccl_net
 * absent` expects NULL, *err = 1 and a message naming the library. */
#include "check.h"
#include "nrt/nrt_experimental.h"
#include <dlfcn.h>

int main(int argc, char **argv) {
    int present = argc > 1 && strcmp(argv[1], "present") == 0;
    int err = 7;
    char msg[256] = {0};
    void *h = nrt_get_libnccl_net(&err, msg, sizeof msg);
    if (present) {
        EXPECT(h != NULL);
        EXPECT(err == 0 && msg[0] == 0);
        EXPECT(h != NULL && dlsym(h, "ncclNetPlugin_v6") != NULL);
        if (h) dlclose(h);
    } else {
        EXPECT(h == NULL);
        EXPECT(err == 1 && strstr(msg, "libnccom-net.so") != NULL);
    }
    return finish(present ? "nccl_net present" : "nccl_net absent");
}
