/* fuzz-scenario.c — scenario YAML (layout/scenario.h) loaded from a path: it loads or fails
 * with an error (building the scenario loads full-size models, too slow for a fuzzer; the
 * conventions and GPU lists it parses are checked here). */
#include "fuzz-common.h"
#include "layout/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    if (size > 64 << 10)
        return 0;
    char *path = fuzz_write_file("s.yaml", data, size);
    GError *error = NULL;
    RsScenario *s = rs_scenario_load_file(path, &error);
    fuzz_remove(path);
    if (s == NULL) {
        g_assert_nonnull(error);
        g_clear_error(&error);
        return 0;
    }
    rs_scenario_free(s);
    return 0;
}
