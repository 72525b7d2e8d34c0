// The headers from C++: every header compiles as C++17 (extern "C"
// linkage), and a call through them links against libnrt.so and runs.
#include "nrt/nrt.h"
#include "nrt/nrt_status.h"
#include "nrt/nrt_version.h"
#include "nrt/nrt_experimental.h"
#include "nrt/nrt_async.h"
#include "nrt/nrt_profile.h"
#include "nrt/nrt_sys_trace.h"
#include "nrt/nrt_async_sendrecv.h"
#include "nrt/nec.h"
#include "nrt/ndebug_stream.h"
#include <cstdio>
#include <cstring>

int main() {
    nrt_version_t v{};
    NRT_STATUS s = nrt_get_version(&v, sizeof v);
    uint32_t n = 0;
    NRT_STATUS c = nrt_get_total_vnc_count(&n);
    bool ok = s == NRT_SUCCESS && c == NRT_SUCCESS && std::strncmp(v.rt_detail, "nrt-rs", 6) == 0 && n > 0;
    std::printf("cxx_headers: %s (%s, %u logical cores)\n", ok ? "ok" : "FAILED", v.rt_detail, n);
    return ok ? 0 : 1;
}
