/* test-layouts.c — see test-layouts.h. */
#include "tests/test-layouts.h"

RsLayout *
test_dtensor(guint n_dims, const gint64 *shape, const char *mesh, const char *ranks,
             const char *placements)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsMesh) m = rs_mesh_parse(mesh, ranks, &error);
    g_assert_no_error(error);
    RsPlacement p[RS_MAX_MESH_DIMS];
    guint n;
    g_assert_true(rs_placements_parse(placements, p, &n, &error));
    RsLayout *l = rs_layout_new_dtensor(n_dims, shape, m, p, n, &error);
    g_assert_no_error(error);
    return l;
}
