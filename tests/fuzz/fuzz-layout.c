/* fuzz-layout.c — mesh, ranks and placements strings (base/mesh.h) resolved into layouts of
 * a small tensor, then a one-tensor refit planned with every strategy and each plan checked
 * by rs_plan_check (every destination element received once, from a holder).
 *
 * Input: five lines — tensor shape ("8x4"), source mesh, source ranks (empty: 0..N-1),
 * source placements, destination mesh, destination ranks, destination placements. A plan
 * that builds but fails its check is a bug (abort). */
#include "base/mesh.h"
#include "fuzz-common.h"
#include "layout/layout.h"
#include "layout/refit.h"
#include "plan/plan.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A layout of @shape from three lines; NULL when they do not form one. */
static RsLayout *
layout_from(guint n_dims, const gint64 *shape, char *mesh_text, char *ranks, char *placements)
{
    g_autoptr(RsMesh) mesh =
        rs_mesh_parse(g_strstrip(mesh_text), *g_strstrip(ranks) ? ranks : NULL, NULL);
    if (mesh == NULL || rs_mesh_get_n_ranks(mesh) > 64)
        return NULL;
    RsPlacement p[RS_MAX_MESH_DIMS];
    guint n;
    if (!rs_placements_parse(placements, p, &n, NULL))
        return NULL;
    return rs_layout_new_dtensor(n_dims, shape, mesh, p, n, NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    g_autofree char *text = fuzz_text(data, size);
    g_auto(GStrv) lines = g_strsplit(text, "\n", 8);
    if (g_strv_length(lines) < 7)
        return 0;
    g_auto(GStrv) dims = g_strsplit(lines[0], "x", -1);
    guint n_dims = g_strv_length(dims);
    if (n_dims < 1 || n_dims > 3)
        return 0;
    gint64 shape[RS_MAX_DIMS];
    guint64 elems = 1;
    for (guint d = 0; d < n_dims; d++) {
        guint64 v;
        if (!g_ascii_string_to_unsigned(g_strstrip(dims[d]), 10, 0, 64, &v, NULL))
            return 0;
        shape[d] = (gint64)v;
        elems *= MAX(v, 1);
    }
    if (elems > 4096)
        return 0;
    g_autoptr(RsLayout) src = layout_from(n_dims, shape, lines[1], lines[2], lines[3]);
    g_autoptr(RsLayout) dst = layout_from(n_dims, shape, lines[4], lines[5], lines[6]);
    if (src == NULL || dst == NULL)
        return 0;
    g_autoptr(RsRefit) refit = rs_refit_new();
    if (!rs_refit_add_tensor(refit, "t", RS_DTYPE_F32, src, dst, NULL))
        return 0;
    RsPlanOptions options;
    rs_plan_options_init(&options, NULL);
    for (guint s = 0; s < RS_STRATEGY_N; s++) {
        GError *error = NULL;
        g_autoptr(RsPlan) plan = rs_plan_build_full(refit, (RsStrategy)s, &options, &error);
        if (plan == NULL) {
            g_clear_error(&error);
            continue;
        }
        if (!rs_plan_check(plan, refit, &error))
            g_error("strategy %u: a plan that fails its check: %s", s, error->message);
    }
    return 0;
}
