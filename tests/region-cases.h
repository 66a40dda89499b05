/* region-cases.h — random local boxes and pieces for the tests of pack, unpack, copies and
 * the pattern (test-region-index.c on the CPU, test-gpu.c on a device). */
#pragma once

#include <glib.h>
#include <string.h>

#include "layout/layout.h"

static const guint elem_sizes[] = {1, 2, 4, 8};

/* A random local box of a tensor of @n_dims dims with shape @shape, laid out row-major with
 * padding per dim, or transposed (dims reversed), at a random offset; and a random piece
 * inside it (random sub-range and step multiple per dim). */
typedef struct {
    guint n_dims;
    gint64 shape[RS_MAX_DIMS];
    RsLocalBox local;
    RsBox piece;
    guint64 buffer_elems;
} RandomCase;

static G_GNUC_UNUSED void
random_case(GRand *rng, RandomCase *c)
{
    memset(c, 0, sizeof *c);
    c->n_dims = (guint)g_rand_int_range(rng, 1, 5);
    gint64 lo[RS_MAX_DIMS], count[RS_MAX_DIMS], step[RS_MAX_DIMS];
    for (guint d = 0; d < c->n_dims; d++) {
        c->shape[d] = g_rand_int_range(rng, 1, d + 1 == c->n_dims ? 300 : 9);
        step[d] = g_rand_int_range(rng, 0, 4) == 0 ? 2 : 1;
        lo[d] = g_rand_int_range(rng, 0, (gint32)MIN(c->shape[d], 3));
        gint64 max_count = (c->shape[d] - lo[d] + step[d] - 1) / step[d];
        count[d] = g_rand_int_range(rng, 1, (gint32)max_count + 1);
    }
    c->local.box.n_dims = c->n_dims;
    for (guint d = 0; d < c->n_dims; d++)
        rs_box_set_dim(&c->local.box, d, lo[d], count[d], step[d]);
    /* Strides: row-major over padded counts, or the reverse (a transposed buffer). */
    gboolean transposed = c->n_dims > 1 && g_rand_int_range(rng, 0, 4) == 0;
    gint64 s = 1;
    for (guint i = 0; i < c->n_dims; i++) {
        guint d = transposed ? i : c->n_dims - 1 - i;
        c->local.strides_elems[d] = s;
        s *= count[d] + g_rand_int_range(rng, 0, 3);
    }
    c->local.offset_elems = (guint64)g_rand_int_range(rng, 0, 40);
    c->buffer_elems = c->local.offset_elems + (guint64)s;
    /* The piece: a sub-range of the local box's indices, every first or second one. */
    c->piece.n_dims = c->n_dims;
    for (guint d = 0; d < c->n_dims; d++) {
        gint64 k0 = g_rand_int_range(rng, 0, (gint32)count[d]);
        gint64 ratio = g_rand_int_range(rng, 0, 3) == 0 ? 2 : 1;
        gint64 n = g_rand_int_range(rng, 1, (gint32)((count[d] - k0 + ratio - 1) / ratio) + 1);
        rs_box_set_dim(&c->piece, d, lo[d] + k0 * step[d], n, step[d] * ratio);
    }
}

static G_GNUC_UNUSED guint8 *
random_bytes(GRand *rng, gsize n)
{
    guint8 *b = g_malloc(MAX(n, 1));
    for (gsize i = 0; i < n; i++)
        b[i] = (guint8)g_rand_int(rng);
    return b;
}

