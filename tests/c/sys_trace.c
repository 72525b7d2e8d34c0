/* The observability headers from C: nrt_sys_trace.h (what nrtpy's
 * device-mode benchmark does: a session on one core, N executions, fetch,
 * nc_exec_running start/stop paired by tracking_id into N device
 * durations), nrt_profile.h (device profiles, continuous profiling,
 * inspect) and nrt_trace_start/stop, with their bad arguments.
 * With --compiler, the compiler's sample NEFF instead: its profile names
 * the compiler's instructions, and each execution at LNC 2 gives one
 * nc_exec_running pair per physical core.
 * Usage: sys_trace <copy.neff> <out dir> | sys_trace --compiler <compiler.neff> <out dir> */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "nrt/nrt_experimental.h"
#include "nrt/nrt_profile.h"
#include "nrt/nrt_sys_trace.h"
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#define BYTES (8 * 128 * 4)
#define N 8
#define MAX_PAIRS 64

/* One nc_exec_running pair as a client parses it. */
typedef struct {
    uint64_t tracking_id, exec_id, core;
    uint64_t start_ns, stop_ns; /* data.nc_timestamp_ns, what nrtpy subtracts */
    uint64_t start_ps, stop_ps; /* data.nc_timestamp_ps, exact */
    bool has_start, has_stop;
} pair_t;

static uint64_t field(const char *obj, const char *end, const char *key) {
    const char *p = strstr(obj, key);
    if (!p || p > end) return UINT64_MAX;
    return strtoull(p + strlen(key), NULL, 10);
}

/* Pairs the nc_exec_running events of a fetched JSON document. */
static int pair_events(const char *json, pair_t *pairs, int max) {
    int n = 0;
    const char *p = json;
    while ((p = strstr(p, "{\"event_type\":\"")) != NULL) {
        const char *next = strstr(p + 1, "{\"event_type\":\"");
        const char *end = next ? next : p + strlen(p);
        if (strncmp(p + 15, "nc_exec_running\"", 16) == 0) {
            uint64_t id = field(p, end, "\"tracking_id\":");
            uint64_t ts = field(p, end, "\"nc_timestamp_ns\":");
            uint64_t ps = field(p, end, "\"nc_timestamp_ps\":");
            bool start = strstr(p, "\"phase\":\"start\"") && strstr(p, "\"phase\":\"start\"") < end;
            int i = 0;
            while (i < n && pairs[i].tracking_id != id) i++;
            if (i == n && n < max) {
                memset(&pairs[n], 0, sizeof pairs[n]);
                pairs[n++].tracking_id = id;
            }
            if (i < n) {
                pairs[i].exec_id = field(p, end, "\"exec_id\":");
                pairs[i].core = field(p, end, "\"device_core_idx\":");
                if (start) {
                    pairs[i].start_ns = ts;
                    pairs[i].start_ps = ps;
                    pairs[i].has_start = true;
                } else {
                    pairs[i].stop_ns = ts;
                    pairs[i].stop_ps = ps;
                    pairs[i].has_stop = true;
                }
            }
        }
        p = end;
    }
    return n;
}

static int count(const char *s, const char *needle) {
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

static char *fetch(const nrt_sys_trace_fetch_options_t *opt, size_t *len) {
    char *buf = NULL;
    *len = 0;
    OK(nrt_sys_trace_fetch_events(&buf, len, opt));
    EXPECT(buf && strlen(buf) == *len);
    return buf;
}

static long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static char *slurp(const char *path) {
    size_t n = 0;
    char *b = read_file(path, &n);
    char *s = realloc(b, n + 1);
    s[n] = 0;
    return s;
}

static void sys_trace_api(nrt_model_t *model, nrt_tensor_set_t *ins, nrt_tensor_set_t *outs) {
    /* The event type list. */
    const char **types = NULL;
    size_t ntypes = 0;
    OK(nrt_sys_trace_get_event_types(&types, &ntypes));
    int found = 0;
    for (size_t i = 0; i < ntypes; i++) {
        if (strcmp(types[i], "nc_exec_running") == 0 || strcmp(types[i], "nrt_execute") == 0 || strcmp(types[i], "nrt_load") == 0) found++;
    }
    EXPECT(ntypes >= 10 && found == 3);
    nrt_sys_trace_free_event_types(types, ntypes);
    EXPECT_STATUS(nrt_sys_trace_get_event_types(NULL, &ntypes), NRT_INVALID);
    EXPECT_STATUS(nrt_sys_trace_get_event_types(&types, NULL), NRT_INVALID);

    /* Configuration: bad arguments, then one core as nrtpy opens it. */
    EXPECT_STATUS(nrt_sys_trace_config_allocate(NULL), NRT_INVALID);
    nrt_sys_trace_config_t *cfg = NULL;
    OK(nrt_sys_trace_config_allocate(&cfg));
    EXPECT_STATUS(nrt_sys_trace_config_set_capture_enabled_for_event_type(cfg, "no_such_event", true), NRT_INVALID);
    EXPECT_STATUS(nrt_sys_trace_config_set_capture_enabled_for_event_type(cfg, NULL, true), NRT_INVALID);
    EXPECT_STATUS(nrt_sys_trace_config_set_capture_enabled_for_event_type((nrt_sys_trace_config_t *)0x40, "nrt_load", true), NRT_INVALID_HANDLE);
    OK(nrt_sys_trace_config_set_capture_enabled_for_event_type(cfg, "nrt_load", false));
    const char **en = NULL;
    size_t nen = 0;
    OK(nrt_sys_trace_config_get_enabled_event_types(cfg, &en, &nen));
    EXPECT(nen == ntypes - 1);
    for (size_t i = 0; i < nen; i++) EXPECT(strcmp(en[i], "nrt_load") != 0);
    nrt_sys_trace_free_event_types(en, nen);
    nrt_sys_trace_config_set_defaults(cfg);
    OK(nrt_sys_trace_config_get_enabled_event_types(cfg, &en, &nen));
    EXPECT(nen == ntypes);
    nrt_sys_trace_free_event_types(en, nen);
    EXPECT_STATUS(nrt_sys_trace_config_get_enabled_event_types(NULL, &en, &nen), NRT_INVALID);
    /* Void setters ignore NULL handles (logged). */
    nrt_sys_trace_config_set_max_events_per_nc(NULL, 5);
    nrt_sys_trace_config_set_capture_enabled_for_nc(NULL, 0, true);
    nrt_sys_trace_config_set_defaults(NULL);
    nrt_sys_trace_config_free(NULL);
    nrt_sys_trace_config_set_max_events_per_nc(cfg, 1000);
    nrt_sys_trace_config_set_capture_enabled_for_nc(cfg, 0, true);
    nrt_sys_trace_config_set_capture_enabled_for_nc(cfg, 1, false);

    /* Fetch before start, start with NULL. */
    char *buf = (char *)0x1;
    size_t len = 7;
    EXPECT_STATUS(nrt_sys_trace_fetch_events(&buf, &len, NULL), NRT_INVALID);
    EXPECT(buf == (char *)0x1 && len == 7);
    EXPECT_STATUS(nrt_sys_trace_start(NULL), NRT_INVALID);

    OK(nrt_sys_trace_start(cfg));
    EXPECT_STATUS(nrt_sys_trace_start(cfg), NRT_INVALID); /* already running */
    nrt_sys_trace_config_free(cfg);                        /* the session keeps its copy */

    nrt_sys_trace_fetch_options_t *fo = NULL;
    EXPECT_STATUS(nrt_sys_trace_fetch_options_allocate(NULL), NRT_INVALID);
    OK(nrt_sys_trace_fetch_options_allocate(&fo));
    nrt_sys_trace_fetch_options_set_nc_idx(fo, 0);
    nrt_sys_trace_fetch_options_set_max_events_per_nc(fo, 0);
    nrt_sys_trace_fetch_options_set_defaults(NULL);
    nrt_sys_trace_fetch_options_set_nc_idx(NULL, 0);
    nrt_sys_trace_fetch_options_set_max_events_per_nc(NULL, 1);
    EXPECT_STATUS(nrt_sys_trace_fetch_events(NULL, &len, fo), NRT_INVALID);
    EXPECT_STATUS(nrt_sys_trace_fetch_events(&buf, NULL, fo), NRT_INVALID);

    /* Warm-up, then drained (nrtpy's drain_events). */
    OK(nrt_execute(model, ins, outs));
    char *warm = fetch(fo, &len);
    EXPECT(count(warm, "\"event_type\":\"nc_exec_running\"") == 2);
    nrt_sys_trace_buffer_free(warm);

    /* N executions, one fetch, pairs by tracking_id. */
    for (int i = 0; i < N; i++) OK(nrt_execute(model, ins, outs));
    char *json = fetch(fo, &len);
    EXPECT(strncmp(json, "{\"events\":[", 11) == 0);
    pair_t pairs[MAX_PAIRS];
    int n = pair_events(json, pairs, MAX_PAIRS);
    EXPECT(n == N);
    uint64_t first = 0, prev_stop = 0;
    for (int i = 0; i < n; i++) {
        EXPECT(pairs[i].has_start && pairs[i].has_stop);
        EXPECT(pairs[i].stop_ns > pairs[i].start_ns);
        EXPECT(pairs[i].start_ns >= prev_stop); /* one device clock, executions in order */
        prev_stop = pairs[i].stop_ns;
        uint64_t d = pairs[i].stop_ns - pairs[i].start_ns;
        uint64_t d_ps = pairs[i].stop_ps - pairs[i].start_ps;
        EXPECT(d_ps / 1000 <= d + 1 && d <= d_ps / 1000 + 1);
        /* The simulator is deterministic: every repeat costs the same
         * device time, to the picosecond. */
        if (i == 0) first = d_ps;
        EXPECT(d_ps == first);
        printf("sys_trace: execution %d device time %llu ns\n", i, (unsigned long long)d);
    }
    EXPECT(count(json, "\"event_type\":\"nrt_execute\",\"phase\":\"stop\"") == N);
    EXPECT(count(json, "\"rank_id\":0") > 0);
    nrt_sys_trace_buffer_free(json);
    /* Consumed once. */
    json = fetch(NULL, &len);
    EXPECT(count(json, "\"event_type\"") == 0);
    nrt_sys_trace_buffer_free(json);
    nrt_sys_trace_buffer_free(NULL);
    nrt_sys_trace_fetch_options_free(fo);
    nrt_sys_trace_fetch_options_free(NULL);
    OK(nrt_sys_trace_stop());
    OK(nrt_sys_trace_stop()); /* nothing running: nothing to do */
    EXPECT_STATUS(nrt_sys_trace_fetch_events(&buf, &len, NULL), NRT_INVALID);
}

static void profile_api(nrt_model_t *model, nrt_tensor_set_t *ins, nrt_tensor_set_t *outs, const char *dir) {
    char path[4096], sum[4200];
    snprintf(path, sizeof path, "%s/copy.ntff", dir);
    snprintf(sum, sizeof sum, "%s.summary.json", path);
    EXPECT_STATUS(nrt_profile_stop(path), NRT_INVALID); /* nothing started */
    EXPECT_STATUS(nrt_profile_start(NULL, path), NRT_INVALID);
    EXPECT_STATUS(nrt_profile_start((nrt_model_t *)0x40, path), NRT_INVALID_HANDLE);
    OK(nrt_profile_start(model, path));
    EXPECT_STATUS(nrt_profile_start(model, path), NRT_INVALID); /* already profiled */
    OK(nrt_execute(model, ins, outs));
    EXPECT_STATUS(nrt_profile_stop(NULL), NRT_INVALID);
    OK(nrt_profile_stop(path));
    EXPECT(file_size(path) > 0 && file_size(sum) > 0);
    char *t = slurp(path);
    EXPECT(strstr(t, "\"traceEvents\"") != NULL);
    EXPECT(count(t, "\"ph\":\"X\"") > 0);
    free(t);

    /* Continuous profiling. */
    EXPECT_STATUS(nrt_profile_continuous_options_allocate(NULL), NRT_INVALID);
    nrt_profile_continuous_options_t *co = NULL;
    OK(nrt_profile_continuous_options_allocate(&co));
    EXPECT_STATUS(nrt_profile_continuous_options_set_output_dir(co, ""), NRT_INVALID);
    EXPECT_STATUS(nrt_profile_continuous_options_set_output_dir(co, NULL), NRT_INVALID);
    OK(nrt_profile_continuous_options_set_output_dir(co, dir));
    EXPECT_STATUS(nrt_profile_continuous_save(0, co), NRT_INVALID); /* not running */
    EXPECT_STATUS(nrt_profile_continuous_stop(), NRT_INVALID);
    OK(nrt_profile_continuous_start(co));
    EXPECT_STATUS(nrt_profile_continuous_start(co), NRT_INVALID);
    EXPECT_STATUS(nrt_profile_continuous_save(0, co), NRT_INVALID); /* nothing executed yet */
    OK(nrt_execute(model, ins, outs));
    OK(nrt_execute(model, ins, outs));
    OK(nrt_profile_continuous_save(0, co));
    EXPECT_STATUS(nrt_profile_continuous_save(999, co), NRT_INVALID);
    OK(nrt_profile_continuous_stop());
    OK(nrt_profile_continuous_options_free(co));
    EXPECT_STATUS(nrt_profile_continuous_options_free(co), NRT_INVALID_HANDLE);

    /* Inspect configuration. */
    EXPECT_STATUS(nrt_inspect_config_allocate(NULL), NRT_INVALID);
    nrt_inspect_config_t *ic = NULL;
    OK(nrt_inspect_config_allocate(&ic));
    const char **acts = NULL;
    size_t nacts = 0;
    OK(nrt_inspect_config_get_all_activity_types(&acts, &nacts));
    EXPECT(nacts == 4 && strcmp(acts[0], "system_profile") == 0 && strcmp(acts[1], "device_profile") == 0);
    nrt_inspect_config_free_activity_types(acts, nacts);
    OK(nrt_inspect_config_set_activity(ic, "all", false));
    OK(nrt_inspect_config_get_enabled_activity_types(ic, &acts, &nacts));
    EXPECT(nacts == 0);
    nrt_inspect_config_free_activity_types(acts, nacts);
    EXPECT_STATUS(nrt_inspect_config_set_activity(ic, "gpu_util", true), NRT_INVALID);
    OK(nrt_inspect_config_set_activity(ic, "system_profile", true));
    OK(nrt_inspect_config_set_activity(ic, "device_profile", true));
    OK(nrt_inspect_config_get_enabled_activity_types(ic, &acts, &nacts));
    EXPECT(nacts == 2);
    nrt_inspect_config_free_activity_types(acts, nacts);
    OK(nrt_inspect_config_set_defaults(ic));
    OK(nrt_inspect_config_set_session_id(ic, 3));
    EXPECT_STATUS(nrt_inspect_config_set_output_dir(ic, ""), NRT_INVALID);
    EXPECT_STATUS(nrt_inspect_config_set_output_dir(NULL, dir), NRT_INVALID);
    OK(nrt_inspect_config_set_output_dir(ic, dir));
    OK(nrt_inspect_config_set_sys_trace_max_events_per_nc(ic, 100));
    OK(nrt_inspect_config_set_capture_enabled_for_nc(ic, 0, true));
    EXPECT_STATUS(nrt_inspect_config_set_capture_enabled_for_event_type_string(ic, "bogus", true), NRT_INVALID);
    OK(nrt_inspect_config_set_capture_enabled_for_event_type_string(ic, "cc_running", false));
    OK(nrt_inspect_config_set_enable_inspect_on_fail(ic, false));
    /* Both switches off: nothing is captured, stop has nothing to end. */
    OK(nrt_inspect_begin_with_options(ic));
    EXPECT_STATUS(nrt_inspect_stop(), NRT_INVALID);
    OK(nrt_inspect_config_set_enable_inspect(ic, true));
    OK(nrt_inspect_begin_with_options(ic));
    EXPECT_STATUS(nrt_inspect_begin_with_options(ic), NRT_INVALID);
    OK(nrt_execute(model, ins, outs));
    OK(nrt_inspect_stop());
    OK(nrt_inspect_config_free(ic));
    EXPECT_STATUS(nrt_inspect_config_free(ic), NRT_INVALID_HANDLE);
    EXPECT_STATUS(nrt_inspect_config_get_enabled_activity_types(ic, &acts, &nacts), NRT_INVALID_HANDLE);

    /* nrt_inspect_begin: configured by NEURON_RT_INSPECT_*; a bad filter
     * is NRT_INVALID, then hardware events only under <dir>/env. */
    char envdir[4200];
    snprintf(envdir, sizeof envdir, "%s/env", dir);
    setenv("NEURON_RT_INSPECT_OUTPUT_DIR", envdir, 1);
    setenv("NEURON_RT_INSPECT_EVENT_FILTER_TYPE", "bogus_event", 1);
    EXPECT_STATUS(nrt_inspect_begin(), NRT_INVALID);
    setenv("NEURON_RT_INSPECT_EVENT_FILTER_TYPE", "hardware,^cc_running", 1);
    setenv("NEURON_RT_INSPECT_CPU_UTIL", "0", 1);
    OK(nrt_inspect_begin());
    OK(nrt_execute(model, ins, outs));
    OK(nrt_inspect_stop());
    unsetenv("NEURON_RT_INSPECT_EVENT_FILTER_TYPE");
    unsetenv("NEURON_RT_INSPECT_CPU_UTIL");

    /* nrt_trace_start/stop: the host events as a Chrome trace. */
    char tpath[4200];
    snprintf(tpath, sizeof tpath, "%s/api_trace.json", dir);
    EXPECT_STATUS(nrt_trace_stop(tpath), NRT_INVALID);
    OK(nrt_trace_start(true));
    OK(nrt_execute(model, ins, outs));
    EXPECT_STATUS(nrt_trace_stop(NULL), NRT_INVALID);
    OK(nrt_trace_stop(tpath));
    char *tt = slurp(tpath);
    EXPECT(strstr(tt, "\"traceEvents\"") && strstr(tt, "\"name\":\"nrt_execute\""));
    free(tt);
}

/* A compiler NEFF: profile names carry the compiler's instruction names;
 * on an LNC 2 core one nc_exec_running pair per physical core. */
static void compiler_neff(const char *neff_path, const char *dir) {
    size_t size = 0;
    void *neff = read_file(neff_path, &size);
    nrt_model_t *m = NULL;
    OK(nrt_load(neff, size, 0, -1, &m));
    free(neff);
    if (!m) return;
    nrt_tensor_info_array_t *ti = NULL;
    OK(nrt_get_model_tensor_info(m, &ti));
    nrt_tensor_set_t *ins = NULL, *outs = NULL;
    OK(nrt_allocate_tensor_set(&ins));
    OK(nrt_allocate_tensor_set(&outs));
    nrt_tensor_t *ts[8] = {0};
    for (uint64_t i = 0; ti && i < ti->tensor_count && i < 8; i++) {
        nrt_tensor_info_t *t = &ti->tensor_array[i];
        OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, t->size, t->name, &ts[i]));
        OK(nrt_add_tensor_to_tensor_set(t->usage == NRT_TENSOR_USAGE_INPUT ? ins : outs, t->name, ts[i]));
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/matmul.ntff", dir);
    OK(nrt_profile_start(m, path));
    OK(nrt_execute(m, ins, outs));
    OK(nrt_profile_stop(path));
    char *t = slurp(path);
    EXPECT(strstr(t, "\"name\":\"I-") != NULL); /* the compiler's names */
    EXPECT(strstr(t, "MATMUL") != NULL);
    free(t);

    nrt_sys_trace_config_t *cfg = NULL;
    OK(nrt_sys_trace_config_allocate(&cfg));
    OK(nrt_sys_trace_start(cfg));
    nrt_sys_trace_config_free(cfg);
    for (int i = 0; i < 3; i++) OK(nrt_execute(m, ins, outs));
    size_t len = 0;
    char *json = fetch(NULL, &len);
    pair_t pairs[MAX_PAIRS];
    int n = pair_events(json, pairs, MAX_PAIRS);
    /* LNC 2 (the simulated trn2's default): a pair per physical core of
     * each execution, on two different cores, sharing the exec_id. */
    printf("sys_trace: compiler NEFF: %d nc_exec_running pairs for 3 executions\n", n);
    EXPECT(n == 6);
    for (int i = 0; i < n; i++) {
        int same = 0, other_core = 0;
        for (int j = 0; j < n; j++) {
            if (pairs[j].exec_id != pairs[i].exec_id) continue;
            same++;
            if (pairs[j].core != pairs[i].core) other_core++;
        }
        EXPECT(same == 2 && other_core == 1);
        EXPECT(pairs[i].has_start && pairs[i].has_stop && pairs[i].stop_ps > pairs[i].start_ps);
    }
    nrt_sys_trace_buffer_free(json);
    OK(nrt_sys_trace_stop());
    for (int i = 0; i < 8; i++)
        if (ts[i]) nrt_tensor_free(&ts[i]);
    nrt_destroy_tensor_set(&ins);
    nrt_destroy_tensor_set(&outs);
    OK(nrt_free_model_tensor_info(ti));
    OK(nrt_unload(m));
}

int main(int argc, char **argv) {
    if (argc != 3 && !(argc == 4 && strcmp(argv[1], "--compiler") == 0)) {
        fprintf(stderr, "usage: %s <copy.neff> <out dir> | %s --compiler <compiler.neff> <out dir>\n", argv[0], argv[0]);
        return 2;
    }
    if (argc == 4) {
        OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "2.0", ""));
        compiler_neff(argv[2], argv[3]);
        nrt_close();
        return finish("sys_trace --compiler");
    }
    /* Before init: configurations work, sessions do not. */
    nrt_sys_trace_config_t *cfg = NULL;
    OK(nrt_sys_trace_config_allocate(&cfg));
    EXPECT_STATUS(nrt_sys_trace_start(cfg), NRT_UNINITIALIZED);
    nrt_sys_trace_config_free(cfg);
    EXPECT_STATUS(nrt_profile_continuous_start(NULL), NRT_UNINITIALIZED);

    size_t size = 0;
    void *neff = read_file(argv[1], &size);
    OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "2.0", ""));
    nrt_model_t *model = NULL;
    OK(nrt_load(neff, size, 0, -1, &model));
    if (!model) return finish("sys_trace");
    nrt_tensor_t *tin = NULL, *tout = NULL;
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, BYTES, "input", &tin));
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, BYTES, "output", &tout));
    nrt_tensor_set_t *ins = NULL, *outs = NULL;
    OK(nrt_allocate_tensor_set(&ins));
    OK(nrt_allocate_tensor_set(&outs));
    OK(nrt_add_tensor_to_tensor_set(ins, "input", tin));
    OK(nrt_add_tensor_to_tensor_set(outs, "output", tout));

    sys_trace_api(model, ins, outs);
    profile_api(model, ins, outs, argv[2]);

    nrt_tensor_free(&tin);
    nrt_tensor_free(&tout);
    nrt_destroy_tensor_set(&ins);
    nrt_destroy_tensor_set(&outs);
    OK(nrt_unload(model));
    nrt_close();
    free(neff);
    return finish("sys_trace");
}
