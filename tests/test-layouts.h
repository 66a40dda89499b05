/* test-layouts.h — layouts for the plan and strategy tests, shared by test-strategy.c and
 * test-peers.c. */
#pragma once

#include "layout/layout.h"

/**
 * test_dtensor:
 * @n_dims: dims of @shape
 * @shape: [n_dims] the global shape, elements
 * @mesh: a mesh spec as rs_mesh_parse() takes it ("2x4")
 * @ranks: its ranks ("0-7")
 * @placements: DTensor placements as rs_placements_parse() takes them ("S(0)R")
 *
 * Aborts the test on a bad argument.
 *
 * Returns: (transfer full): the DTensor layout.
 */
RsLayout *test_dtensor(guint n_dims, const gint64 *shape, const char *mesh, const char *ranks,
                       const char *placements);
