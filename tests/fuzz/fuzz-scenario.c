/* fuzz-scenario.c — scenario YAML (layout/scenario.h) loaded from a path and built: the
 * model, topology and both conventions resolved into layouts (rs_scenario_build), then
 * the refit planned with every strategy and each plan checked by rs_plan_check (every
 * destination element received once, from a holder).
 *
 * To keep one input under a second, the model is shrunk before the build: widths divided by
 * at least 64 (RsModelOptions.scale; head, expert and layer counts kept, so the parallel
 * layouts are the scenario's) and one decoder layer (the scenario's first when it names a
 * range). Scenarios of more than 1024 GPUs or a refit above 64 MiB are built but not
 * planned. A plan that builds but fails its check is a bug (abort). */
#include "fuzz-common.h"
#include "layout/refit.h"
#include "layout/scenario.h"
#include "plan/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { FUZZ_MIN_SCALE = 64, FUZZ_MAX_GPUS = 1024 };
#define FUZZ_MAX_REFIT_BYTES ((guint64)64 << 20)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    if (size > 64 << 10)
        return 0;
    char *path = fuzz_write_file("s.yaml", data, size);
    GError *error = NULL;
    g_autoptr(RsScenario) s = rs_scenario_load_file(path, &error);
    fuzz_remove(path);
    if (s == NULL) {
        g_assert_nonnull(error);
        g_clear_error(&error);
        return 0;
    }
    s->scale = MAX(s->scale, FUZZ_MIN_SCALE);
    gint layer = s->has_layer_range ? s->first_layer : 0;
    s->has_layer_range = TRUE;
    s->first_layer = s->last_layer = layer;
    guint n_gpus =
        (s->train_gpus ? s->train_gpus->len : 0) + (s->infer_gpus ? s->infer_gpus->len : 0);
    if (n_gpus > FUZZ_MAX_GPUS)
        return 0;
    RsScenarioBuild build;
    if (!rs_scenario_build(s, &build, &error)) {
        g_assert_nonnull(error);
        g_clear_error(&error);
        return 0;
    }
    if (rs_refit_get_size_bytes(build.refit) <= FUZZ_MAX_REFIT_BYTES) {
        RsPlanOptions options;
        rs_plan_options_init(&options, build.topology);
        for (guint k = 0; k < RS_STRATEGY_N; k++) {
            g_autoptr(RsPlan) plan =
                rs_plan_build_full(build.refit, (RsStrategy)k, &options, &error);
            if (plan == NULL) {
                g_assert_nonnull(error);
                g_clear_error(&error);
                continue;
            }
            if (!rs_plan_check(plan, build.refit, &error))
                g_error("strategy %u: a plan that fails its check: %s", k, error->message);
        }
    }
    rs_scenario_build_clear(&build);
    return 0;
}
