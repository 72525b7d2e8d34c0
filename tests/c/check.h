/* Shared helpers of the C API tests: status checks that report the
 * failing line and a closing summary line. */
#ifndef NRT_RS_TEST_CHECK_H
#define NRT_RS_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nrt/nrt.h"

static int g_checks;
static int g_failures;

#define EXPECT(cond)                                                                   \
    do {                                                                               \
        g_checks++;                                                                    \
        if (!(cond)) {                                                                 \
            g_failures++;                                                              \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                              \
    } while (0)

#define EXPECT_STATUS(call, want)                                                          \
    do {                                                                                   \
        NRT_STATUS got_ = (call);                                                          \
        g_checks++;                                                                        \
        if (got_ != (want)) {                                                              \
            g_failures++;                                                                  \
            fprintf(stderr, "%s:%d: %s returned %s (%d), expected %s\n", __FILE__, __LINE__, \
                    #call, nrt_get_status_as_str(got_), (int)got_, #want);                 \
        }                                                                                  \
    } while (0)

#define OK(call) EXPECT_STATUS(call, NRT_SUCCESS)

/* For a program that cannot run here: prints the one line the Rust driver
 * turns into a skipped test ("<name>: skipped: <why>") and returns the
 * exit code (0). */
static inline int skipped(const char *name, const char *why) {
    printf("%s: skipped: %s\n", name, why);
    return 0;
}

/* Prints the closing line and returns the exit code. */
static inline int finish(const char *name) {
    printf("%s: %d checks, %d failed\n", name, g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
}

/* Reads a whole file; exits on failure. */
static inline void *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = malloc((size_t)n);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
    *size = (size_t)n;
    return buf;
}

#endif
