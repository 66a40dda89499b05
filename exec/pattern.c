/* pattern.c — keystream values per (tensor, global index); filling and checking local boxes.
 *
 * Boxes are walked row by row (the last dim). A row whose global indices are consecutive
 * and whose local elements are adjacent is filled or checked as one run of the keystream;
 * other rows element by element. */
#include "exec/pattern.h"
#include "exec/region-index.h"

#include <string.h>

/* The keystream (splitmix64's output function, Steele, Lea, Flood 2014) is
 * region-index.h's, which the CUDA fill and check kernels run too. */
static inline guint64
mix64(guint64 z)
{
    return rs_pattern_mix64(z);
}

static inline guint64
word(guint64 seed, guint64 j)
{
    return rs_pattern_word(seed, j);
}

guint64
rs_pattern_seed(guint32 tensor_idx)
{
    return mix64(((guint64)tensor_idx + 1) * G_GUINT64_CONSTANT(0xD1B54A32D192ED03));
}

void
rs_pattern_get_elem(guint64 seed, guint64 index, guint elem_bytes, guint8 *out)
{
    guint64 v = rs_pattern_elem_value(seed, index, elem_bytes);
    for (guint b = 0; b < elem_bytes; b++)
        out[b] = (guint8)(v >> (8 * b));
}

static inline void
store_word(guint8 *out, guint64 w, guint from_byte, guint to_byte)
{
    for (guint b = from_byte; b < to_byte; b++)
        *out++ = (guint8)(w >> (8 * b));
}

void
rs_pattern_fill_run(guint64 seed, guint64 first, guint64 count, guint elem_bytes, guint8 *out)
{
    guint64 byte = first * elem_bytes, end = (first + count) * elem_bytes;
    /* A partial first word, whole words, a partial last word. */
    if (byte % 8 != 0 && byte < end) {
        guint64 j = byte / 8;
        guint to = (guint)MIN(8, end - j * 8);
        store_word(out, word(seed, j), (guint)(byte % 8), to);
        out += to - byte % 8;
        byte = j * 8 + to;
    }
    for (; byte + 8 <= end; byte += 8, out += 8) {
        guint64 w = word(seed, byte / 8);
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
        memcpy(out, &w, 8);
#else
        store_word(out, w, 0, 8);
#endif
    }
    if (byte < end)
        store_word(out, word(seed, byte / 8), 0, (guint)(end - byte));
}

/* Walks the rows of @local->box: calls @fn with the global index of the row's first
 * element, the global step between its elements, the count, the row's first local element
 * and the local stride (elements). Returns FALSE when @fn asked to stop. */
typedef gboolean (*RowFunc)(guint64 g0, gint64 g_step, gint64 count, guint64 local_first,
                            gint64 local_stride, const gint64 *pos, gpointer data);

static gboolean
walk_rows(guint n_dims, const gint64 *shape, const RsLocalBox *local, RowFunc fn, gpointer data)
{
    const RsBox *box = &local->box;
    if (rs_box_is_empty(box))
        return TRUE;
    if (n_dims == 0) {
        gint64 pos[1] = {0};
        return fn(0, 1, 1, local->offset_elems, 1, pos, data);
    }
    gint64 gstride[RS_MAX_DIMS];
    gint64 s = 1;
    for (gint d = (gint)n_dims - 1; d >= 0; d--) {
        gstride[d] = s;
        s *= shape[d];
    }
    guint last = n_dims - 1;
    gint64 k[RS_MAX_DIMS] = {0};
    gint64 row = rs_box_get_count(box, last);
    for (;;) {
        guint64 g0 = 0;
        gint64 local_first = (gint64)local->offset_elems;
        for (guint d = 0; d < n_dims; d++) {
            g0 += (guint64)(rs_box_get_index(box, d, k[d]) * gstride[d]);
            local_first += k[d] * local->strides_elems[d];
        }
        if (!fn(g0, box->step[last], row, (guint64)local_first, local->strides_elems[last], k,
                data))
            return FALSE;
        gint d = (gint)last - 1;
        while (d >= 0 && ++k[d] == rs_box_get_count(box, (guint)d))
            k[d--] = 0;
        if (d < 0)
            return TRUE;
    }
}

typedef struct {
    guint64 seed;
    guint elem_bytes;
    guint8 *buffer;
    const guint8 *cbuffer;
    guint n_dims;
    const RsBox *box;
    RsPatternMismatch *mismatch;
    guint8 *scratch;
} WalkData;

#define SCRATCH_ELEMS 4096

static gboolean
fill_row(guint64 g0, gint64 g_step, gint64 count, guint64 local_first, gint64 local_stride,
         const gint64 *pos, gpointer data)
{
    WalkData *w = data;
    guint e = w->elem_bytes;
    guint8 *p = w->buffer + local_first * e;
    if (g_step == 1 && local_stride == 1) {
        rs_pattern_fill_run(w->seed, g0, (guint64)count, e, p);
        return TRUE;
    }
    for (gint64 i = 0; i < count; i++)
        rs_pattern_get_elem(w->seed, g0 + (guint64)(i * g_step), e, p + i * local_stride * e);
    return TRUE;
}

void
rs_pattern_fill_box(guint64 seed, guint n_dims, const gint64 *shape, const RsLocalBox *local,
                    guint8 *buffer, guint elem_bytes)
{
    WalkData w = {seed, elem_bytes, buffer, NULL, n_dims, &local->box, NULL, NULL};
    walk_rows(n_dims, shape, local, fill_row, &w);
}

static void
record_bad(WalkData *w, guint64 g, const gint64 *pos, gint64 i, const guint8 *expected,
           const guint8 *got)
{
    RsPatternMismatch *m = w->mismatch;
    if (m->n_bad++ > 0)
        return;
    guint last = w->n_dims > 0 ? w->n_dims - 1 : 0;
    for (guint d = 0; d < w->n_dims; d++)
        m->global_index[d] = rs_box_get_index(w->box, d, d == last ? i : pos[d]);
    m->flat_index = g;
    memset(m->expected, 0, sizeof m->expected);
    memset(m->got, 0, sizeof m->got);
    memcpy(m->expected, expected, w->elem_bytes);
    memcpy(m->got, got, w->elem_bytes);
}

static gboolean
check_row(guint64 g0, gint64 g_step, gint64 count, guint64 local_first, gint64 local_stride,
          const gint64 *pos, gpointer data)
{
    WalkData *w = data;
    guint e = w->elem_bytes;
    const guint8 *p = w->cbuffer + local_first * e;
    if (g_step == 1 && local_stride == 1) {
        for (gint64 i0 = 0; i0 < count; i0 += SCRATCH_ELEMS) {
            gint64 n = MIN(SCRATCH_ELEMS, count - i0);
            rs_pattern_fill_run(w->seed, g0 + (guint64)i0, (guint64)n, e, w->scratch);
            if (memcmp(w->scratch, p + i0 * e, (gsize)n * e) == 0)
                continue;
            for (gint64 i = 0; i < n; i++)
                if (memcmp(w->scratch + i * e, p + (i0 + i) * e, e) != 0)
                    record_bad(w, g0 + (guint64)(i0 + i), pos, i0 + i, w->scratch + i * e,
                               p + (i0 + i) * e);
        }
        return TRUE;
    }
    guint8 expected[8];
    for (gint64 i = 0; i < count; i++) {
        guint64 g = g0 + (guint64)(i * g_step);
        rs_pattern_get_elem(w->seed, g, e, expected);
        const guint8 *got = p + i * local_stride * e;
        if (memcmp(expected, got, e) != 0)
            record_bad(w, g, pos, i, expected, got);
    }
    return TRUE;
}

gboolean
rs_pattern_check_box(guint64 seed, guint n_dims, const gint64 *shape, const RsLocalBox *local,
                     const guint8 *buffer, guint elem_bytes, RsPatternMismatch *mismatch)
{
    guint64 before = mismatch->n_bad;
    g_autofree guint8 *scratch = g_malloc((gsize)SCRATCH_ELEMS * elem_bytes);
    WalkData w = {seed, elem_bytes, NULL, buffer, n_dims, &local->box, mismatch, scratch};
    walk_rows(n_dims, shape, local, check_row, &w);
    return mismatch->n_bad == before;
}

void
rs_box_index_init(RsBoxIndex *index, guint n_dims, const gint64 *shape, const RsLocalBox *local)
{
    memset(index, 0, sizeof *index);
    index->n_dims = n_dims;
    index->offset_elems = local->offset_elems;
    guint64 n = 1;
    gint64 s = 1;
    for (gint d = (gint)n_dims - 1; d >= 0; d--) {
        index->count[d] = rs_box_get_count(&local->box, (guint)d);
        index->lo[d] = local->box.lo[d];
        index->step[d] = local->box.step[d];
        index->gstride[d] = s;
        index->lstride[d] = local->strides_elems[d];
        s *= shape[d];
        n *= (guint64)MAX(index->count[d], 0);
    }
    index->n_elems = rs_box_is_empty(&local->box) ? 0 : n;
}
