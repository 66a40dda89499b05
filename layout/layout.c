/* layout.c — resolution of placements and framework splits to per-rank boxes.
 *
 * The model: for each mesh position and each tensor dim, the position holds an ordered
 * list of global indices (its local tensor's rows along that dim, in local order). The
 * list starts as 0..n−1 and every mesh dim, left to right, replaces it by the part its
 * split gives to the position's coordinate: torch.chunk for Shard, the two-level chunking
 * of _StridedShard, a padded or balanced chunk, or a fused rule that assembles the
 * position's pieces of each segment. Lists are kept as runs (arithmetic progressions);
 * the position's local buffer is the row-major product of its lists (with padding rows
 * where a padded split says so), and each product of runs is one box.
 *
 * Every layout, whatever built it, goes through the builder, which checks that boxes lie
 * in the tensor and in their buffer and never overlap within a rank. Storage is
 * compressed-row: entries sorted by global rank, each pointing at a run of RsLocalBox. */
#include "layout/layout.h"

#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(rs-layout-error-quark, rs_layout_error)
/* clang-format on */

typedef struct {
    guint32 rank;
    guint first_box;
    guint n_boxes;
    guint64 local_n_elems;
    guint64 held_n_elems;
    gint64 buffer_shape[RS_MAX_DIMS];
} LayoutEntry;

struct _RsLayout {
    gint ref_count;
    guint n_dims;
    gint64 shape[RS_MAX_DIMS];
    guint64 n_elems;
    GArray *entries;    /* LayoutEntry, sorted by rank */
    GArray *boxes;      /* RsLocalBox */
    RsMesh *mesh;       /* nullable */
    guint n_placements; /* > 0 only for pure DTensor layouts */
    RsPlacement placements[RS_MAX_MESH_DIMS];
    char *description; /* nullable: "R,S(0)" or an explicit layout's text */
    gboolean disjoint;
};

/* --- index lists --- */

typedef struct {
    gint64 lo, step, count;
} Run;

typedef struct {
    GArray *runs; /* Run */
    gint64 len;   /* Σ counts */
} IndexList;

static void
il_init(IndexList *l)
{
    l->runs = g_array_new(FALSE, FALSE, sizeof(Run));
    l->len = 0;
}

static void
il_clear(IndexList *l)
{
    if (l->runs != NULL)
        g_array_unref(l->runs);
    l->runs = NULL;
    l->len = 0;
}

static void
il_reset(IndexList *l)
{
    g_array_set_size(l->runs, 0);
    l->len = 0;
}

/* Appends a run, merging it into the last one when together they form one progression:
 * a run of two or more keeps its step and may absorb the next element; two single
 * elements merge only when adjacent, so unrelated rows never become a surprising step. */
static void
il_append(IndexList *l, gint64 lo, gint64 step, gint64 count)
{
    if (count <= 0)
        return;
    if (count == 1)
        step = 1;
    l->len += count;
    if (l->runs->len > 0) {
        Run *last = &g_array_index(l->runs, Run, l->runs->len - 1);
        gint64 s = last->count >= 2 ? last->step : (count >= 2 ? step : 1);
        gboolean steps_agree = (last->count < 2 || last->step == s) && (count < 2 || step == s);
        if (steps_agree && lo == last->lo + last->count * s) {
            last->step = s;
            last->count += count;
            return;
        }
    }
    Run r = {lo, step, count};
    g_array_append_val(l->runs, r);
}

/* Appends list positions [a, b) of @src to @out. */
static void
il_append_slice(IndexList *out, const IndexList *src, gint64 a, gint64 b)
{
    a = MAX(a, 0);
    b = MIN(b, src->len);
    gint64 pos = 0;
    for (guint i = 0; i < src->runs->len && pos < b; i++) {
        const Run *r = &g_array_index(src->runs, Run, i);
        gint64 from = MAX(a, pos), to = MIN(b, pos + r->count);
        if (from < to)
            il_append(out, r->lo + (from - pos) * r->step, r->step, to - from);
        pos += r->count;
    }
}

/* torch.chunk(list, k)[c] as positions: [min(c·chunk, n), min((c+1)·chunk, n)). */
static void
chunk_bounds(gint64 n, gint64 k, gint64 c, gint64 *a, gint64 *b)
{
    gint64 chunk = (n + k - 1) / k;
    *a = MIN(c * chunk, n);
    *b = MIN((c + 1) * chunk, n);
}

/* --- splits --- */

RsSplit
rs_split_placement(RsPlacement placement)
{
    RsSplit s;
    memset(&s, 0, sizeof s);
    s.kind = RS_SPLIT_PLACEMENT;
    s.placement = placement;
    s.dim = placement.dim;
    return s;
}

static const char *
fusion_kind_name(RsFusionKind kind)
{
    switch (kind) {
    case RS_FUSION_CONCAT:
        return "concat";
    case RS_FUSION_QKV:
        return "qkv";
    case RS_FUSION_QKV_GROUPED:
        return "qkv-grouped";
    case RS_FUSION_INTERLEAVED:
        return "interleaved";
    }
    return "invalid";
}

char *
rs_split_format(const RsSplit *split)
{
    switch (split->kind) {
    case RS_SPLIT_PLACEMENT:
        return rs_placements_format(&split->placement, 1);
    case RS_SPLIT_PADDED:
        return g_strdup_printf("pad%" G_GINT64_FORMAT "(%d)", split->multiple, split->dim);
    case RS_SPLIT_BALANCED:
        return g_strdup_printf("balanced(%d)", split->dim);
    case RS_SPLIT_FUSED: {
        const RsFusion *f = &split->fusion;
        GString *s = g_string_new(NULL);
        g_string_append_printf(s, "%s(%d: ", fusion_kind_name(f->kind), split->dim);
        if (f->kind == RS_FUSION_QKV || f->kind == RS_FUSION_QKV_GROUPED) {
            gint64 u = MAX(f->unit, 1);
            g_string_append_printf(s,
                                   "%" G_GINT64_FORMAT "+%" G_GINT64_FORMAT "+%" G_GINT64_FORMAT
                                   " heads of %" G_GINT64_FORMAT ")",
                                   f->segment_len[0] / u, f->segment_len[1] / u,
                                   f->segment_len[2] / u, u);
        } else if (f->kind == RS_FUSION_INTERLEAVED) {
            g_string_append_printf(s, "%" G_GINT64_FORMAT " rows, %" G_GINT64_FORMAT " parts)",
                                   f->segment_len[0], f->unit);
        } else {
            for (guint i = 0; i < f->n_segments; i++)
                g_string_append_printf(s, "%s%" G_GINT64_FORMAT, i ? "+" : "", f->segment_len[i]);
            g_string_append_c(s, ')');
        }
        return g_string_free(s, FALSE);
    }
    }
    return g_strdup("invalid");
}

static gint64
fusion_total(const RsFusion *f)
{
    gint64 n = 0;
    for (guint i = 0; i < f->n_segments && i < RS_MAX_SEGMENTS; i++)
        n += f->segment_len[i];
    return n;
}

/* Checks a fused split against the mesh size @k of its mesh dim. */
static gboolean
check_fusion(const RsFusion *f, guint m, gint64 k, gint64 extent, GError **error)
{
    g_autofree char *text = NULL;
    RsSplit tmp = {.kind = RS_SPLIT_FUSED, .fusion = *f};
    text = rs_split_format(&tmp);
    if (f->n_segments < 1 || f->n_segments > RS_MAX_SEGMENTS) {
        g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                    "split %u: a fusion has 1 to %d segments", m, RS_MAX_SEGMENTS);
        return FALSE;
    }
    for (guint i = 0; i < f->n_segments; i++) {
        if (f->segment_len[i] < 0) {
            g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                        "split %u: segment %u has negative length", m, i);
            return FALSE;
        }
    }
    if (fusion_total(f) != extent) {
        g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                    "split %u (%s): the segments add up to %" G_GINT64_FORMAT
                    " rows but the dim has %" G_GINT64_FORMAT,
                    m, text, fusion_total(f), extent);
        return FALSE;
    }
    switch (f->kind) {
    case RS_FUSION_CONCAT:
        return TRUE;
    case RS_FUSION_INTERLEAVED:
        if (f->n_segments != 1 || f->unit < 1 || f->segment_len[0] % f->unit != 0) {
            g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                        "split %u (%s): %" G_GINT64_FORMAT
                        " rows do not interleave %" G_GINT64_FORMAT " parts",
                        m, text, f->segment_len[0], f->unit);
            return FALSE;
        }
        return TRUE;
    case RS_FUSION_QKV:
    case RS_FUSION_QKV_GROUPED:
        break;
    }
    gint64 u = f->unit;
    if (f->n_segments != 3 || u < 1 || f->segment_len[0] % u || f->segment_len[1] % u ||
        f->segment_len[1] != f->segment_len[2]) {
        g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                    "split %u (%s): q, k, v must be whole heads of %" G_GINT64_FORMAT
                    " rows with as many k as v rows",
                    m, text, u);
        return FALSE;
    }
    gint64 n_q = f->segment_len[0] / u, n_kv = f->segment_len[1] / u;
    if (n_kv == 0 || n_q % n_kv != 0) {
        g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_HEADS,
                    "%" G_GINT64_FORMAT " KV heads do not divide %" G_GINT64_FORMAT " query heads",
                    n_kv, n_q);
        return FALSE;
    }
    if (f->kind == RS_FUSION_QKV_GROUPED) {
        if (n_kv % k != 0) {
            g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_HEADS,
                        "tp=%" G_GINT64_FORMAT " does not divide the %" G_GINT64_FORMAT
                        " query groups (KV heads)",
                        k, n_kv);
            return FALSE;
        }
        return TRUE;
    }
    if (n_q % k != 0) {
        g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_HEADS,
                    "tp=%" G_GINT64_FORMAT " does not divide the %" G_GINT64_FORMAT " query heads",
                    k, n_q);
        return FALSE;
    }
    if (n_kv % k != 0 && k % n_kv != 0) {
        g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_HEADS,
                    "%" G_GINT64_FORMAT " KV heads and tp=%" G_GINT64_FORMAT
                    ": neither divides the other",
                    n_kv, k);
        return FALSE;
    }
    return TRUE;
}

/* The list a fused split gives coordinate @c of @k, in concatenated coordinates. */
static void
fusion_list(const RsFusion *f, gint64 k, gint64 c, IndexList *out)
{
    il_reset(out);
    switch (f->kind) {
    case RS_FUSION_CONCAT: {
        gint64 start = 0;
        for (guint s = 0; s < f->n_segments; s++) {
            gint64 a, b;
            chunk_bounds(f->segment_len[s], k, c, &a, &b);
            il_append(out, start + a, 1, b - a);
            start += f->segment_len[s];
        }
        return;
    }
    case RS_FUSION_INTERLEAVED: {
        gint64 parts = f->unit, per_part = f->segment_len[0] / parts, a, b;
        chunk_bounds(per_part, k, c, &a, &b);
        for (gint64 p = 0; p < parts; p++)
            il_append(out, a * parts + p, parts, b - a);
        return;
    }
    case RS_FUSION_QKV: {
        gint64 u = f->unit, n_q = f->segment_len[0] / u, n_kv = f->segment_len[1] / u;
        gint64 q_per = n_q / k;
        il_append(out, c * q_per * u, 1, q_per * u);
        gint64 kv_first, kv_n;
        if (n_kv % k == 0) {
            kv_n = n_kv / k;
            kv_first = c * kv_n;
        } else {
            kv_n = 1;
            kv_first = c / (k / n_kv);
        }
        il_append(out, f->segment_len[0] + kv_first * u, 1, kv_n * u);
        il_append(out, f->segment_len[0] + f->segment_len[1] + kv_first * u, 1, kv_n * u);
        return;
    }
    case RS_FUSION_QKV_GROUPED: {
        gint64 u = f->unit, n_q = f->segment_len[0] / u, n_kv = f->segment_len[1] / u;
        gint64 q_per_group = n_q / n_kv, groups = n_kv / k;
        for (gint64 g = c * groups; g < (c + 1) * groups; g++) {
            il_append(out, g * q_per_group * u, 1, q_per_group * u);
            il_append(out, f->segment_len[0] + g * u, 1, u);
            il_append(out, f->segment_len[0] + f->segment_len[1] + g * u, 1, u);
        }
        return;
    }
    }
}

/* Validates @splits for a tensor of @shape on @mesh. */
static gboolean
check_splits(guint n_dims, const gint64 *shape, const RsMesh *mesh, const RsSplit *splits,
             guint n_splits, GError **error)
{
    guint n_mesh_dims = rs_mesh_get_n_dims(mesh);
    if (n_splits != n_mesh_dims) {
        g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                    "%u placement%s for a %u-dim mesh: give one placement per mesh dim", n_splits,
                    n_splits == 1 ? "" : "s", n_mesh_dims);
        return FALSE;
    }
    gboolean split_before[RS_MAX_DIMS] = {FALSE};
    gboolean locked[RS_MAX_DIMS] = {FALSE};
    for (guint m = 0; m < n_splits; m++) {
        const RsSplit *s = &splits[m];
        gint dim = s->kind == RS_SPLIT_PLACEMENT ? s->placement.dim : s->dim;
        gboolean splits_dim = s->kind != RS_SPLIT_PLACEMENT ||
                              s->placement.kind == RS_PLACEMENT_SHARD ||
                              s->placement.kind == RS_PLACEMENT_STRIDED_SHARD;
        if (s->kind == RS_SPLIT_PLACEMENT && s->placement.kind == RS_PLACEMENT_PARTIAL) {
            g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_UNSUPPORTED,
                        "placement %u is Partial: a weight is never a pending reduction; "
                        "reduce it before the refit",
                        m);
            return FALSE;
        }
        if (!splits_dim)
            continue;
        g_autofree char *text = rs_split_format(s);
        if (dim < 0 || (guint)dim >= n_dims) {
            g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                        "placement %u is %s but the tensor has %u dims (valid: 0-%d)", m, text,
                        n_dims, (gint)n_dims - 1);
            return FALSE;
        }
        if (s->kind == RS_SPLIT_PLACEMENT && s->placement.kind == RS_PLACEMENT_STRIDED_SHARD &&
            s->placement.split_factor < 1) {
            g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                        "placement %u is %s: the split factor must be at least 1", m, text);
            return FALSE;
        }
        if (locked[dim]) {
            g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                        "placement %u (%s) splits dim %d again after a padded or fused split", m,
                        text, dim);
            return FALSE;
        }
        gint64 k = rs_mesh_get_size(mesh, m);
        if (s->kind == RS_SPLIT_PADDED || s->kind == RS_SPLIT_FUSED) {
            if (split_before[dim]) {
                g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                            "placement %u (%s) must be the only split of dim %d", m, text, dim);
                return FALSE;
            }
            locked[dim] = TRUE;
        }
        if (s->kind == RS_SPLIT_PADDED) {
            if (s->multiple < 1) {
                g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                            "placement %u (%s): the padding multiple must be at least 1", m, text);
                return FALSE;
            }
            gint64 padded = (shape[dim] + s->multiple - 1) / s->multiple * s->multiple;
            if (padded % k != 0) {
                g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                            "placement %u (%s): %" G_GINT64_FORMAT
                            " rows padded to %" G_GINT64_FORMAT
                            " do not split over %" G_GINT64_FORMAT " ranks",
                            m, text, shape[dim], padded, k);
                return FALSE;
            }
        }
        if (s->kind == RS_SPLIT_FUSED && !check_fusion(&s->fusion, m, k, shape[dim], error))
            return FALSE;
        split_before[dim] = TRUE;
    }
    return TRUE;
}

static gboolean
check_shape(guint n_dims, const gint64 *shape, GError **error)
{
    if (n_dims > RS_MAX_DIMS) {
        g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                    "a tensor has at most %d dims, not %u", RS_MAX_DIMS, n_dims);
        return FALSE;
    }
    guint64 n = 1;
    for (guint d = 0; d < n_dims; d++) {
        if (shape[d] < 0) {
            g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                        "dim %u has negative size %" G_GINT64_FORMAT, d, shape[d]);
            return FALSE;
        }
        if (shape[d] != 0 && n > (G_GUINT64_CONSTANT(1) << 62) / (guint64)shape[d]) {
            g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_OVERFLOW,
                        "shape has more than 2^62 elements");
            return FALSE;
        }
        n = MAX(n * (guint64)shape[d], 1);
    }
    return TRUE;
}

/* The lists and buffer extents of one mesh position. */
typedef struct {
    IndexList lists[RS_MAX_DIMS];
    gint64 extent[RS_MAX_DIMS];
    IndexList tmp;
} Position;

static void
position_init(Position *p, guint n_dims)
{
    for (guint d = 0; d < n_dims; d++)
        il_init(&p->lists[d]);
    il_init(&p->tmp);
}

static void
position_clear(Position *p, guint n_dims)
{
    for (guint d = 0; d < n_dims; d++)
        il_clear(&p->lists[d]);
    il_clear(&p->tmp);
}

static void
swap_tmp(Position *p, guint d)
{
    IndexList t = p->lists[d];
    p->lists[d] = p->tmp;
    p->tmp = t;
}

/* Resolves the lists of the mesh position with @coords. Splits were checked. */
static void
position_resolve(Position *p, guint n_dims, const gint64 *shape, const RsMesh *mesh,
                 const guint *coords, const RsSplit *splits, guint n_splits)
{
    for (guint d = 0; d < n_dims; d++) {
        il_reset(&p->lists[d]);
        il_append(&p->lists[d], 0, 1, shape[d]);
        p->extent[d] = shape[d];
    }
    for (guint m = 0; m < n_splits; m++) {
        const RsSplit *s = &splits[m];
        gint64 k = rs_mesh_get_size(mesh, m), c = coords[m];
        guint d = (guint)(s->kind == RS_SPLIT_PLACEMENT ? s->placement.dim : s->dim);
        IndexList *cur = &p->lists[d];
        gint64 n = cur->len, a, b;
        il_reset(&p->tmp);
        switch (s->kind) {
        case RS_SPLIT_PLACEMENT:
            if (s->placement.kind == RS_PLACEMENT_SHARD) {
                chunk_bounds(n, k, c, &a, &b);
                il_append_slice(&p->tmp, cur, a, b);
            } else if (s->placement.kind == RS_PLACEMENT_STRIDED_SHARD) {
                gint64 f = s->placement.split_factor;
                for (gint64 j = 0; j < f; j++) {
                    gint64 pa, pb;
                    chunk_bounds(n, f, j, &pa, &pb);
                    chunk_bounds(pb - pa, k, c, &a, &b);
                    il_append_slice(&p->tmp, cur, pa + a, pa + b);
                }
            } else {
                continue; /* Replicate */
            }
            swap_tmp(p, d);
            p->extent[d] = p->lists[d].len;
            break;
        case RS_SPLIT_BALANCED: {
            gint64 base = n / k, rem = n % k;
            a = c * base + MIN(c, rem);
            b = a + base + (c < rem ? 1 : 0);
            il_append_slice(&p->tmp, cur, a, b);
            swap_tmp(p, d);
            p->extent[d] = p->lists[d].len;
            break;
        }
        case RS_SPLIT_PADDED: {
            gint64 padded = (n + s->multiple - 1) / s->multiple * s->multiple, per = padded / k;
            il_append_slice(&p->tmp, cur, c * per, (c + 1) * per);
            swap_tmp(p, d);
            p->extent[d] = per;
            break;
        }
        case RS_SPLIT_FUSED:
            fusion_list(&s->fusion, k, c, &p->tmp);
            swap_tmp(p, d);
            p->extent[d] = p->lists[d].len;
            break;
        }
    }
}

/* --- the builder --- */

typedef struct {
    RsBox box;
    gint64 position[RS_MAX_DIMS];
} PendingBox;

typedef struct {
    guint32 rank;
    gint64 buffer_shape[RS_MAX_DIMS];
    guint first, n; /* into pending boxes */
} PendingRank;

struct _RsLayoutBuilder {
    guint n_dims;
    gint64 shape[RS_MAX_DIMS];
    GArray *ranks; /* PendingRank */
    GArray *boxes; /* PendingBox */
    gboolean box_without_rank;
    char *description;
    RsMesh *mesh;
    guint n_placements;
    RsPlacement placements[RS_MAX_MESH_DIMS];
};

RsLayoutBuilder *
rs_layout_builder_new(guint n_dims, const gint64 *shape)
{
    g_return_val_if_fail(n_dims <= RS_MAX_DIMS, NULL);
    RsLayoutBuilder *b = g_new0(RsLayoutBuilder, 1);
    b->n_dims = n_dims;
    if (n_dims > 0)
        memcpy(b->shape, shape, n_dims * sizeof *shape);
    b->ranks = g_array_new(FALSE, FALSE, sizeof(PendingRank));
    b->boxes = g_array_new(FALSE, FALSE, sizeof(PendingBox));
    return b;
}

void
rs_layout_builder_free(RsLayoutBuilder *b)
{
    if (b == NULL)
        return;
    g_array_unref(b->ranks);
    g_array_unref(b->boxes);
    g_free(b->description);
    rs_mesh_free(b->mesh);
    g_free(b);
}

void
rs_layout_builder_add_rank(RsLayoutBuilder *b, guint32 rank, const gint64 *buffer_shape)
{
    PendingRank r;
    memset(&r, 0, sizeof r);
    r.rank = rank;
    if (b->n_dims > 0)
        memcpy(r.buffer_shape, buffer_shape, b->n_dims * sizeof *buffer_shape);
    r.first = b->boxes->len;
    g_array_append_val(b->ranks, r);
}

void
rs_layout_builder_add_box(RsLayoutBuilder *b, const RsBox *box, const gint64 *position)
{
    if (b->ranks->len == 0) {
        b->box_without_rank = TRUE;
        return;
    }
    if (box->n_dims > 0 && rs_box_is_empty(box))
        return;
    PendingBox pb;
    memset(&pb, 0, sizeof pb);
    pb.box = *box;
    if (b->n_dims > 0)
        memcpy(pb.position, position, b->n_dims * sizeof *position);
    g_array_append_val(b->boxes, pb);
    g_array_index(b->ranks, PendingRank, b->ranks->len - 1).n++;
}

void
rs_layout_builder_set_description(RsLayoutBuilder *b, const char *text)
{
    g_free(b->description);
    b->description = g_strdup(text);
}

static gint
entry_compare(gconstpointer a, gconstpointer b)
{
    guint32 ra = ((const LayoutEntry *)a)->rank, rb = ((const LayoutEntry *)b)->rank;
    return ra < rb ? -1 : ra > rb;
}

/* A box's extent in buffer coordinates: [position, position + count) per dim. */
static void
buffer_box(const PendingBox *pb, guint n_dims, RsBox *out)
{
    gint64 lo[RS_MAX_DIMS], hi[RS_MAX_DIMS];
    for (guint d = 0; d < n_dims; d++) {
        lo[d] = pb->position[d];
        hi[d] = pb->position[d] + rs_box_get_count(&pb->box, d);
    }
    rs_box_init_range(out, n_dims, lo, hi);
}

static gboolean
builder_fail(GError **error, guint32 rank, const RsBox *box, const char *what)
{
    g_autofree char *text = rs_box_format(box);
    g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID, "rank %u, box %s: %s", rank, text,
                what);
    return FALSE;
}

static gboolean
builder_check_rank(const RsLayoutBuilder *b, const PendingRank *r, GError **error)
{
    RsBox full, buffer_full;
    rs_box_init_full(&full, b->n_dims, b->shape);
    rs_box_init_full(&buffer_full, b->n_dims, r->buffer_shape);
    for (guint i = 0; i < r->n; i++) {
        const PendingBox *pb = &g_array_index(b->boxes, PendingBox, r->first + i);
        if (pb->box.n_dims != b->n_dims)
            return builder_fail(error, r->rank, &pb->box, "wrong number of dims");
        for (guint d = 0; d < b->n_dims; d++)
            if (pb->box.step[d] < 1)
                return builder_fail(error, r->rank, &pb->box, "a step below 1");
        if (!rs_box_is_within(&pb->box, &full))
            return builder_fail(error, r->rank, &pb->box, "outside the tensor");
        RsBox in_buffer;
        buffer_box(pb, b->n_dims, &in_buffer);
        gboolean inside = TRUE;
        for (guint d = 0; d < b->n_dims; d++)
            inside = inside && in_buffer.lo[d] >= 0 && in_buffer.hi[d] <= r->buffer_shape[d];
        if (!inside)
            return builder_fail(error, r->rank, &pb->box, "does not fit in the rank's buffer");
        for (guint j = 0; j < i; j++) {
            const PendingBox *other = &g_array_index(b->boxes, PendingBox, r->first + j);
            if (b->n_dims == 0 || rs_box_intersect(&pb->box, &other->box, NULL))
                return builder_fail(error, r->rank, &pb->box,
                                    "shares elements with another box of the rank");
            RsBox other_buffer;
            buffer_box(other, b->n_dims, &other_buffer);
            if (rs_box_intersect(&in_buffer, &other_buffer, NULL))
                return builder_fail(error, r->rank, &pb->box,
                                    "overlaps another box in the rank's buffer");
        }
    }
    return TRUE;
}

/* Whether distinct boxes (over all ranks) never overlap: sweep over dim 0. */
static gboolean
compute_disjoint(const RsLayout *layout)
{
    if (layout->n_dims == 0)
        return TRUE;
    g_autoptr(GHashTable) seen = g_hash_table_new(rs_box_hash, rs_box_equal);
    g_autoptr(GArray) distinct = g_array_new(FALSE, FALSE, sizeof(RsBox));
    for (guint i = 0; i < layout->boxes->len; i++) {
        const RsLocalBox *lb = &g_array_index(layout->boxes, RsLocalBox, i);
        if (g_hash_table_add(seen, (gpointer)&lb->box))
            g_array_append_val(distinct, lb->box);
    }
    g_array_sort(distinct, rs_box_compare_lo0);
    for (guint i = 0; i < distinct->len; i++) {
        const RsBox *a = &g_array_index(distinct, RsBox, i);
        for (guint j = i + 1; j < distinct->len; j++) {
            const RsBox *b = &g_array_index(distinct, RsBox, j);
            if (b->lo[0] >= a->hi[0])
                break;
            if (rs_box_intersect(a, b, NULL))
                return FALSE;
        }
    }
    return TRUE;
}

static RsLayout *
layout_alloc(guint n_dims, const gint64 *shape)
{
    RsLayout *layout = g_new0(RsLayout, 1);
    layout->ref_count = 1;
    layout->n_dims = n_dims;
    layout->n_elems = 1;
    for (guint d = 0; d < n_dims; d++) {
        layout->shape[d] = shape[d];
        layout->n_elems *= (guint64)shape[d];
    }
    layout->entries = g_array_new(FALSE, FALSE, sizeof(LayoutEntry));
    layout->boxes = g_array_new(FALSE, FALSE, sizeof(RsLocalBox));
    return layout;
}

RsLayout *
rs_layout_builder_finish(RsLayoutBuilder *b, GError **error)
{
    g_autoptr(RsLayoutBuilder) owned = b;
    if (!check_shape(b->n_dims, b->shape, error))
        return NULL;
    if (b->box_without_rank) {
        g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                    "a box was added before any rank");
        return NULL;
    }
    RsLayout *layout = layout_alloc(b->n_dims, b->shape);
    for (guint i = 0; i < b->ranks->len; i++) {
        const PendingRank *r = &g_array_index(b->ranks, PendingRank, i);
        if (!builder_check_rank(b, r, error)) {
            rs_layout_unref(layout);
            return NULL;
        }
        LayoutEntry e;
        memset(&e, 0, sizeof e);
        e.rank = r->rank;
        e.first_box = layout->boxes->len;
        e.n_boxes = r->n;
        e.local_n_elems = 1;
        gint64 strides[RS_MAX_DIMS];
        for (gint d = (gint)b->n_dims - 1; d >= 0; d--) {
            e.buffer_shape[d] = r->buffer_shape[d];
            strides[d] = (gint64)e.local_n_elems;
            e.local_n_elems *= (guint64)MAX(r->buffer_shape[d], 0);
        }
        for (guint j = 0; j < r->n; j++) {
            const PendingBox *pb = &g_array_index(b->boxes, PendingBox, r->first + j);
            RsLocalBox lb;
            memset(&lb, 0, sizeof lb);
            lb.box = pb->box;
            for (guint d = 0; d < b->n_dims; d++) {
                lb.strides_elems[d] = strides[d];
                lb.offset_elems += (guint64)(pb->position[d] * strides[d]);
            }
            e.held_n_elems += rs_box_get_n_elems(&lb.box);
            g_array_append_val(layout->boxes, lb);
        }
        g_array_append_val(layout->entries, e);
    }
    g_array_sort(layout->entries, entry_compare);
    for (guint i = 1; i < layout->entries->len; i++) {
        guint32 rank = g_array_index(layout->entries, LayoutEntry, i).rank;
        if (rank == g_array_index(layout->entries, LayoutEntry, i - 1).rank) {
            g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                        "rank %u appears twice in the layout", rank);
            rs_layout_unref(layout);
            return NULL;
        }
    }
    layout->mesh = g_steal_pointer(&b->mesh);
    layout->n_placements = b->n_placements;
    memcpy(layout->placements, b->placements, sizeof layout->placements);
    layout->description = g_steal_pointer(&b->description);
    layout->disjoint = compute_disjoint(layout);
    return layout;
}

/* --- split layouts --- */

static void emit_products(RsLayoutBuilder *builder, guint n_dims, GArray *const *kept,
                          GArray *const *at);

/* Adds the boxes of one position for the virtual-dim range [a, b) of dim @f, shifted so
 * that a becomes 0 (a = 0, b = extent for a plain tensor). */
static void
position_emit(RsLayoutBuilder *builder, const Position *p, guint n_dims, guint f, gint64 a,
              gint64 b)
{
    if (n_dims == 0) {
        RsBox scalar;
        rs_box_init_full(&scalar, 0, NULL);
        rs_layout_builder_add_box(builder, &scalar, NULL);
        return;
    }
    /* Per dim, the runs kept (restricted to [a, b) in dim f) with their list positions. */
    GArray *kept[RS_MAX_DIMS] = {NULL};
    GArray *at[RS_MAX_DIMS] = {NULL};
    gboolean empty = FALSE;
    for (guint d = 0; d < n_dims; d++) {
        kept[d] = g_array_new(FALSE, FALSE, sizeof(Run));
        at[d] = g_array_new(FALSE, FALSE, sizeof(gint64));
        gint64 pos = 0;
        for (guint i = 0; i < p->lists[d].runs->len; i++) {
            Run r = g_array_index(p->lists[d].runs, Run, i);
            gint64 first = 0, count = r.count;
            if (d == f) {
                /* Indices lo + j·step within [a, b). */
                if (r.lo < a)
                    first = (a - r.lo + r.step - 1) / r.step;
                gint64 last_excl =
                    r.lo + (r.count - 1) * r.step < b ? r.count : (b - r.lo + r.step - 1) / r.step;
                count = MIN(last_excl, r.count) - first;
            }
            if (count > 0) {
                Run sub = {r.lo + first * r.step - (d == f ? a : 0), r.step, count};
                gint64 sub_pos = pos + first;
                g_array_append_val(kept[d], sub);
                g_array_append_val(at[d], sub_pos);
            }
            pos += r.count;
        }
        empty = empty || kept[d]->len == 0;
    }
    if (!empty)
        emit_products(builder, n_dims, kept, at);
    for (guint d = 0; d < n_dims; d++) {
        g_array_unref(kept[d]);
        g_array_unref(at[d]);
    }
}

/* Adds one box per combination of kept runs (one per dim), at its list positions. */
static void
emit_products(RsLayoutBuilder *builder, guint n_dims, GArray *const *kept, GArray *const *at)
{
    guint idx[RS_MAX_DIMS] = {0};
    for (;;) {
        RsBox box;
        memset(&box, 0, sizeof box);
        box.n_dims = n_dims;
        gint64 position[RS_MAX_DIMS];
        for (guint d = 0; d < n_dims; d++) {
            const Run *r = &g_array_index(kept[d], Run, idx[d]);
            rs_box_set_dim(&box, d, r->lo, r->count, r->step);
            position[d] = g_array_index(at[d], gint64, idx[d]);
        }
        rs_layout_builder_add_box(builder, &box, position);
        gint d = (gint)n_dims - 1;
        while (d >= 0 && ++idx[d] == kept[d]->len)
            idx[d--] = 0;
        if (d < 0)
            break;
    }
}

/* Resolves every position of @mesh and adds it to each of the @n_out builders, builder i
 * receiving the virtual range [starts[i], starts[i+1]) of dim @f. */
static void
resolve_into(RsLayoutBuilder **builders, guint n_out, const gint64 *starts, guint f, guint n_dims,
             const gint64 *shape, const RsMesh *mesh, const RsSplit *splits, guint n_splits)
{
    Position p;
    position_init(&p, n_dims);
    guint n_ranks = rs_mesh_get_n_ranks(mesh);
    for (guint i = 0; i < n_ranks; i++) {
        guint coords[RS_MAX_MESH_DIMS];
        rs_mesh_get_coords(mesh, i, coords);
        position_resolve(&p, n_dims, shape, mesh, coords, splits, n_splits);
        for (guint o = 0; o < n_out; o++) {
            rs_layout_builder_add_rank(builders[o], rs_mesh_get_rank(mesh, i), p.extent);
            position_emit(builders[o], &p, n_dims, f, starts[o], starts[o + 1]);
        }
    }
    position_clear(&p, n_dims);
}

static char *
describe_splits(const RsSplit *splits, guint n_splits)
{
    GString *s = g_string_new(NULL);
    for (guint m = 0; m < n_splits; m++) {
        g_autofree char *one = rs_split_format(&splits[m]);
        g_string_append_printf(s, "%s%s", m ? "," : "", one);
    }
    return g_string_free(s, FALSE);
}

RsLayout *
rs_layout_new_split(guint n_dims, const gint64 *shape, const RsMesh *mesh, const RsSplit *splits,
                    guint n_splits, GError **error)
{
    g_return_val_if_fail(mesh != NULL, NULL);
    if (!check_shape(n_dims, shape, error) ||
        !check_splits(n_dims, shape, mesh, splits, n_splits, error))
        return NULL;
    RsLayoutBuilder *builder = rs_layout_builder_new(n_dims, shape);
    builder->mesh = rs_mesh_dup(mesh);
    builder->description = describe_splits(splits, n_splits);
    gboolean pure = TRUE;
    for (guint m = 0; m < n_splits; m++)
        pure = pure && splits[m].kind == RS_SPLIT_PLACEMENT;
    if (pure) {
        builder->n_placements = n_splits;
        for (guint m = 0; m < n_splits; m++)
            builder->placements[m] = splits[m].placement;
    }
    gint64 starts[2] = {0, n_dims > 0 ? shape[0] : 1};
    resolve_into(&builder, 1, starts, 0, n_dims, shape, mesh, splits, n_splits);
    return rs_layout_builder_finish(builder, error);
}

RsLayout *
rs_layout_new_dtensor(guint n_dims, const gint64 *shape, const RsMesh *mesh,
                      const RsPlacement *placements, guint n_placements, GError **error)
{
    RsSplit splits[RS_MAX_MESH_DIMS];
    RsPlacement resolved[RS_MAX_MESH_DIMS];
    guint n = MIN(n_placements, RS_MAX_MESH_DIMS);
    memcpy(resolved, placements, n * sizeof *resolved);
    /* Negative dims count from the last, as in PyTorch. */
    if (!rs_placements_normalize(resolved, n, n_dims, error)) {
        g_prefix_error(error, "placements: ");
        return NULL;
    }
    for (guint m = 0; m < n; m++)
        splits[m] = rs_split_placement(resolved[m]);
    return rs_layout_new_split(n_dims, shape, mesh, splits, MIN(n_placements, RS_MAX_MESH_DIMS),
                               error);
}

gboolean
rs_layout_new_fused_set(guint n_dims, const gint64 *shape, guint n_tensors, guint fuse_dim,
                        const gint64 *extents, const RsMesh *mesh, const RsSplit *splits,
                        guint n_splits, RsLayout **layouts_out, GError **error)
{
    g_return_val_if_fail(mesh != NULL && n_tensors >= 1 && n_tensors <= RS_MAX_SEGMENTS, FALSE);
    if (fuse_dim >= n_dims) {
        g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                    "fused dim %u of a %u-dim tensor", fuse_dim, n_dims);
        return FALSE;
    }
    gint64 vshape[RS_MAX_DIMS];
    memcpy(vshape, shape, n_dims * sizeof *shape);
    gint64 starts[RS_MAX_SEGMENTS + 1] = {0};
    for (guint i = 0; i < n_tensors; i++) {
        if (extents[i] < 0) {
            g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                        "tensor %u of the fused set has negative extent", i);
            return FALSE;
        }
        starts[i + 1] = starts[i] + extents[i];
    }
    vshape[fuse_dim] = starts[n_tensors];
    if (!check_shape(n_dims, vshape, error) ||
        !check_splits(n_dims, vshape, mesh, splits, n_splits, error))
        return FALSE;
    for (guint m = 0; m < n_splits; m++) {
        const RsSplit *s = &splits[m];
        if (s->kind != RS_SPLIT_FUSED || (guint)s->dim != fuse_dim)
            continue;
        gboolean match = s->fusion.n_segments == n_tensors;
        for (guint i = 0; match && i < n_tensors; i++)
            match = s->fusion.segment_len[i] == extents[i];
        if (!match) {
            g_autofree char *text = rs_split_format(s);
            g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                        "placement %u (%s): its segments are not the %u fused tensors", m, text,
                        n_tensors);
            return FALSE;
        }
    }
    g_autofree char *description = describe_splits(splits, n_splits);
    RsLayoutBuilder *builders[RS_MAX_SEGMENTS];
    for (guint i = 0; i < n_tensors; i++) {
        gint64 tshape[RS_MAX_DIMS];
        memcpy(tshape, shape, n_dims * sizeof *shape);
        tshape[fuse_dim] = extents[i];
        builders[i] = rs_layout_builder_new(n_dims, tshape);
        builders[i]->mesh = rs_mesh_dup(mesh);
        builders[i]->description =
            g_strdup_printf("%s, part %u of %u of a fused buffer", description, i + 1, n_tensors);
    }
    resolve_into(builders, n_tensors, starts, fuse_dim, n_dims, vshape, mesh, splits, n_splits);
    for (guint i = 0; i < n_tensors; i++) {
        layouts_out[i] = rs_layout_builder_finish(builders[i], error);
        if (layouts_out[i] == NULL) {
            for (guint j = 0; j < i; j++)
                g_clear_pointer(&layouts_out[j], rs_layout_unref);
            for (guint j = i + 1; j < n_tensors; j++)
                rs_layout_builder_free(builders[j]);
            return FALSE;
        }
    }
    return TRUE;
}

RsLayout *
rs_layout_new_replicated(guint n_dims, const gint64 *shape, const guint32 *ranks, guint n_ranks)
{
    guint size = n_ranks;
    g_autoptr(GError) error = NULL;
    g_autoptr(RsMesh) mesh =
        rs_mesh_new(1, &size, (const char *const[]){"r"}, ranks, n_ranks, &error);
    g_return_val_if_fail(mesh != NULL, NULL);
    RsPlacement r = {RS_PLACEMENT_REPLICATE, 0, 0};
    return rs_layout_new_dtensor(n_dims, shape, mesh, &r, 1, NULL);
}

void
rs_local_box_get_position(const RsLayout *layout, guint index, const RsLocalBox *lb,
                          gint64 *position)
{
    const gint64 *shape = rs_layout_get_buffer_shape(layout, index);
    for (guint d = 0; d < layout->n_dims; d++) {
        gint64 stride = lb->strides_elems[d];
        position[d] = stride > 0 && shape[d] > 0
                          ? (gint64)(lb->offset_elems / (guint64)stride) % shape[d]
                          : 0;
    }
}

RsLayout *
rs_layout_new_union(RsLayout *const *layouts, guint n_layouts, GError **error)
{
    g_return_val_if_fail(n_layouts >= 1, NULL);
    const RsLayout *first = layouts[0];
    RsLayoutBuilder *b = rs_layout_builder_new(first->n_dims, first->shape);
    GString *desc = g_string_new("union of ");
    for (guint i = 0; i < n_layouts; i++) {
        const RsLayout *l = layouts[i];
        if (l->n_dims != first->n_dims ||
            memcmp(l->shape, first->shape, l->n_dims * sizeof(gint64)) != 0) {
            g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                        "layouts of a union must have one shape");
            g_string_free(desc, TRUE);
            rs_layout_builder_free(b);
            return NULL;
        }
        g_autofree char *one = rs_layout_format(l);
        g_string_append_printf(desc, "%s(%s)", i ? " and " : "", one);
        for (guint e = 0; e < rs_layout_get_n_ranks(l); e++) {
            rs_layout_builder_add_rank(b, rs_layout_get_rank(l, e),
                                       rs_layout_get_buffer_shape(l, e));
            guint n;
            const RsLocalBox *boxes = rs_layout_get_boxes(l, e, &n);
            for (guint k = 0; k < n; k++) {
                gint64 position[RS_MAX_DIMS];
                rs_local_box_get_position(l, e, &boxes[k], position);
                rs_layout_builder_add_box(b, &boxes[k].box, position);
            }
        }
    }
    b->description = g_string_free(desc, FALSE);
    return rs_layout_builder_finish(b, error);
}

/* --- block derivations --- */

static gint64
ceil_div(gint64 a, gint64 b)
{
    return (a + b - 1) / b;
}

/* What rs_layout_new_blocked() derives from: the weight's layout, the block and the mode. */
typedef struct {
    const RsLayout *layout;
    const gint64 *block;
    gboolean whole_blocks;
    gboolean in_blocks;
} BlockedSpec;

/* Whole-blocks mode, dim @d of box @src at buffer position @position: the blocks lying
 * wholly in the box (a block the tensor's end cuts counts as whole). Returns: FALSE when
 * the box holds no whole block in this dim, so it is left out. */
static gboolean
blocked_dim_whole(const BlockedSpec *bs, const RsBox *src, guint d, gint64 position, PendingBox *pb)
{
    gint64 count = rs_box_get_count(src, d), bl = bs->block[d];
    gint64 lo = src->lo[d], hi = lo + count;
    gboolean ends_tensor = hi == bs->layout->shape[d];
    gint64 first = ceil_div(lo, bl);
    gint64 last = ends_tensor ? ceil_div(hi, bl) : hi / bl;
    if (count > 1 && src->step[d] != 1)
        last = first; /* a strided run holds no whole block */
    if (last <= first)
        return FALSE;
    gint64 e_lo = first * bl, e_hi = MIN(last * bl, bs->layout->shape[d]);
    if (bs->in_blocks)
        rs_box_set_dim(&pb->box, d, first, last - first, 1);
    else
        rs_box_set_dim(&pb->box, d, e_lo, e_hi - e_lo, 1);
    pb->position[d] = position + (e_lo - lo);
    return TRUE;
}

/* Aligned mode, dim @d of rank @rank's box @src at buffer position @position: the box must
 * start on a block boundary, end on one or at the tensor's end, have step 1 and sit at a
 * block-aligned buffer position. Returns: FALSE with RS_LAYOUT_ERROR_INVALID otherwise. */
static gboolean
blocked_dim_aligned(const BlockedSpec *bs, guint32 rank, const RsBox *src, guint d, gint64 position,
                    PendingBox *pb, GError **error)
{
    gint64 count = rs_box_get_count(src, d), bl = bs->block[d];
    gint64 lo = src->lo[d], hi = lo + count; /* step 1 required below */
    gboolean ends_tensor = hi == bs->layout->shape[d];
    /* What breaks the alignment, first of: a stride, its start, its end, its place. */
    g_autofree char *why =
        count > 1 && src->step[d] != 1
            ? g_strdup_printf("is strided (step %" G_GINT64_FORMAT ")", src->step[d])
        : lo % bl != 0 ? g_strdup_printf("starts at %" G_GINT64_FORMAT, lo)
        : hi % bl != 0 && !ends_tensor
            ? g_strdup_printf("ends at %" G_GINT64_FORMAT " (not the tensor's end)", hi)
        : position % bl != 0
            ? g_strdup_printf("sits at buffer position %" G_GINT64_FORMAT, position)
            : NULL;
    if (why != NULL) {
        g_autofree char *text = rs_box_format(src);
        g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                    "rank %u, box %s: dim %u %s, not aligned to blocks of %" G_GINT64_FORMAT
                    " elements, so its block scales cannot be laid out",
                    rank, text, d, why, bl);
        return FALSE;
    }
    if (bs->in_blocks) {
        rs_box_set_dim(&pb->box, d, lo / bl, ceil_div(hi, bl) - lo / bl, 1);
        pb->position[d] = position / bl;
    } else {
        rs_box_set_dim(&pb->box, d, lo, count, 1);
        pb->position[d] = position;
    }
    return TRUE;
}

/* The derived boxes of rank entry @e, appended to @derived (PendingBox) in the order of the
 * weight's boxes; in whole-blocks mode a box with no whole block is left out. Returns:
 * FALSE with RS_LAYOUT_ERROR_INVALID for a box that is not aligned to blocks. */
static gboolean
blocked_rank_boxes(const BlockedSpec *bs, guint e, GArray *derived, GError **error)
{
    const RsLayout *layout = bs->layout;
    guint32 rank = rs_layout_get_rank(layout, e);
    guint n;
    const RsLocalBox *boxes = rs_layout_get_boxes(layout, e, &n);
    for (guint k = 0; k < n; k++) {
        const RsBox *src = &boxes[k].box;
        gint64 position[RS_MAX_DIMS];
        rs_local_box_get_position(layout, e, &boxes[k], position);
        PendingBox pb;
        memset(&pb, 0, sizeof pb);
        pb.box.n_dims = layout->n_dims;
        gboolean keep = TRUE;
        for (guint d = 0; d < layout->n_dims && keep; d++) {
            if (bs->block[d] == 1) {
                rs_box_set_dim(&pb.box, d, src->lo[d], rs_box_get_count(src, d), src->step[d]);
                pb.position[d] = position[d];
            } else if (bs->whole_blocks) {
                keep = blocked_dim_whole(bs, src, d, position[d], &pb);
            } else if (!blocked_dim_aligned(bs, rank, src, d, position[d], &pb, error)) {
                return FALSE;
            }
        }
        if (keep)
            g_array_append_val(derived, pb);
    }
    return TRUE;
}

/* The local buffer shape of rank entry @e holding @derived: the weight's buffer (element
 * coordinates), that buffer in blocks (a destination's scales), or the boxes stacked along
 * dim 0 (a source's computed scales; this sets their positions). */
static void
blocked_buffer_shape(const BlockedSpec *bs, guint e, GArray *derived, gint64 *out_buffer)
{
    guint n_dims = bs->layout->n_dims;
    const gint64 *bshape = rs_layout_get_buffer_shape(bs->layout, e);
    if (!bs->in_blocks) {
        memcpy(out_buffer, bshape, n_dims * sizeof *bshape);
    } else if (!bs->whole_blocks) {
        for (guint d = 0; d < n_dims; d++)
            out_buffer[d] = ceil_div(bshape[d], bs->block[d]);
    } else {
        /* Computed scales: the rank's scale boxes stacked along dim 0. */
        for (guint d = 0; d < n_dims; d++)
            out_buffer[d] = 0;
        for (guint k = 0; k < derived->len; k++) {
            PendingBox *pb = &g_array_index(derived, PendingBox, k);
            for (guint d = 0; d < n_dims; d++) {
                gint64 c = rs_box_get_count(&pb->box, d);
                pb->position[d] = d == 0 ? out_buffer[0] : 0;
                out_buffer[d] = d == 0 ? out_buffer[0] + c : MAX(out_buffer[d], c);
            }
        }
    }
}

RsLayout *
rs_layout_new_blocked(const RsLayout *layout, const gint64 *block, gboolean whole_blocks,
                      gboolean in_blocks, GError **error)
{
    guint n_dims = layout->n_dims;
    const BlockedSpec bs = {layout, block, whole_blocks, in_blocks};
    gint64 out_shape[RS_MAX_DIMS];
    for (guint d = 0; d < n_dims; d++) {
        g_return_val_if_fail(block[d] >= 1, NULL);
        out_shape[d] = in_blocks ? ceil_div(layout->shape[d], block[d]) : layout->shape[d];
    }
    RsLayoutBuilder *b = rs_layout_builder_new(n_dims, out_shape);
    for (guint e = 0; e < rs_layout_get_n_ranks(layout); e++) {
        /* Derived boxes first, to size a stacked source buffer. */
        g_autoptr(GArray) derived = g_array_new(FALSE, FALSE, sizeof(PendingBox));
        if (!blocked_rank_boxes(&bs, e, derived, error)) {
            rs_layout_builder_free(b);
            return NULL;
        }
        gint64 out_buffer[RS_MAX_DIMS];
        blocked_buffer_shape(&bs, e, derived, out_buffer);
        rs_layout_builder_add_rank(b, rs_layout_get_rank(layout, e), out_buffer);
        for (guint k = 0; k < derived->len; k++) {
            const PendingBox *pb = &g_array_index(derived, PendingBox, k);
            rs_layout_builder_add_box(b, &pb->box, pb->position);
        }
    }
    g_autofree char *base = rs_layout_format(layout);
    b->description =
        g_strdup_printf("%s of (%s)", in_blocks ? "block scales" : "whole blocks", base);
    return rs_layout_builder_finish(b, error);
}

/* --- accessors --- */

RsLayout *
rs_layout_ref(RsLayout *layout)
{
    g_return_val_if_fail(layout != NULL, NULL);
    g_atomic_int_inc(&layout->ref_count);
    return layout;
}

void
rs_layout_unref(RsLayout *layout)
{
    if (layout == NULL || !g_atomic_int_dec_and_test(&layout->ref_count))
        return;
    g_array_unref(layout->entries);
    g_array_unref(layout->boxes);
    rs_mesh_free(layout->mesh);
    g_free(layout->description);
    g_free(layout);
}

guint
rs_layout_get_n_dims(const RsLayout *layout)
{
    return layout->n_dims;
}

const gint64 *
rs_layout_get_shape(const RsLayout *layout)
{
    return layout->shape;
}

guint64
rs_layout_get_n_elems(const RsLayout *layout)
{
    return layout->n_elems;
}

guint
rs_layout_get_n_ranks(const RsLayout *layout)
{
    return layout->entries->len;
}

guint32
rs_layout_get_rank(const RsLayout *layout, guint index)
{
    g_return_val_if_fail(index < layout->entries->len, 0);
    return g_array_index(layout->entries, LayoutEntry, index).rank;
}

gint
rs_layout_find_rank(const RsLayout *layout, guint32 rank)
{
    guint lo = 0, hi = layout->entries->len;
    const LayoutEntry *e = (const LayoutEntry *)layout->entries->data;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        if (e[mid].rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < layout->entries->len && e[lo].rank == rank ? (gint)lo : -1;
}

const RsLocalBox *
rs_layout_get_boxes(const RsLayout *layout, guint index, guint *n_boxes_out)
{
    g_return_val_if_fail(index < layout->entries->len, NULL);
    const LayoutEntry *e = &g_array_index(layout->entries, LayoutEntry, index);
    *n_boxes_out = e->n_boxes;
    return e->n_boxes ? &g_array_index(layout->boxes, RsLocalBox, e->first_box) : NULL;
}

gboolean
rs_box_rows_share_bytes(const RsBox *box, RsDtype dtype)
{
    guint64 pack = rs_dtype_get_elems_per_byte(dtype);
    return pack > 1 && box->n_dims > 1 &&
           (guint64)rs_box_get_count(box, box->n_dims - 1) % pack != 0;
}

gboolean
rs_layout_check_packed(const RsLayout *layout, RsDtype dtype, GError **error)
{
    guint64 p = rs_dtype_get_elems_per_byte(dtype);
    guint n_dims = rs_layout_get_n_dims(layout);
    if (p <= 1)
        return TRUE;
    const gint64 *shape = rs_layout_get_shape(layout);
    guint last = n_dims > 0 ? n_dims - 1 : 0;
    RsBox full;
    rs_box_init_full(&full, n_dims, shape);
    gboolean even_shape = n_dims > 0 && (guint64)shape[last] % p == 0;
    for (guint i = 0; i < rs_layout_get_n_ranks(layout); i++) {
        guint n;
        const RsLocalBox *boxes = rs_layout_get_boxes(layout, i, &n);
        for (guint b = 0; b < n; b++) {
            const RsLocalBox *lb = &boxes[b];
            gboolean whole = rs_box_is_equal(&lb->box, &full);
            gboolean ok = lb->offset_elems % p == 0;
            if (ok && !whole) {
                ok = even_shape && lb->box.step[last] == 1 && (guint64)lb->box.lo[last] % p == 0 &&
                     (guint64)lb->box.hi[last] % p == 0 && lb->strides_elems[last] == 1;
                for (guint d = 0; ok && d < last; d++)
                    ok = rs_box_get_count(&lb->box, d) <= 1 ||
                         (guint64)lb->strides_elems[d] % p == 0;
            }
            if (ok)
                continue;
            g_autofree char *text = rs_box_format(&lb->box);
            g_autofree char *full_text = rs_box_format(&full);
            const char *name = rs_dtype_get_name(dtype);
            if (!even_shape && !whole)
                g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                            "rank %u holds %s of the tensor %s, which splits a byte: %s packs "
                            "%" G_GUINT64_FORMAT
                            " values per byte along the last dim, whose extent %" G_GINT64_FORMAT
                            " is not a multiple of %" G_GUINT64_FORMAT
                            ", so only whole replicas of it can be held",
                            rs_layout_get_rank(layout, i), text, full_text, name, p,
                            n_dims > 0 ? shape[last] : 1, p);
            else
                g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                            "rank %u holds %s of the tensor %s at local element %" G_GUINT64_FORMAT
                            ", which splits a byte: %s packs %" G_GUINT64_FORMAT
                            " values per byte along the last dim, so a shard must start and end "
                            "on a multiple of %" G_GUINT64_FORMAT
                            " there, with its rows on byte boundaries of its buffer",
                            rs_layout_get_rank(layout, i), text, full_text, lb->offset_elems, name,
                            p, p);
            return FALSE;
        }
    }
    return TRUE;
}

guint64
rs_layout_get_local_n_elems(const RsLayout *layout, guint index)
{
    g_return_val_if_fail(index < layout->entries->len, 0);
    return g_array_index(layout->entries, LayoutEntry, index).local_n_elems;
}

guint64
rs_layout_get_held_n_elems(const RsLayout *layout, guint index)
{
    g_return_val_if_fail(index < layout->entries->len, 0);
    return g_array_index(layout->entries, LayoutEntry, index).held_n_elems;
}

const gint64 *
rs_layout_get_buffer_shape(const RsLayout *layout, guint index)
{
    g_return_val_if_fail(index < layout->entries->len, NULL);
    return g_array_index(layout->entries, LayoutEntry, index).buffer_shape;
}

const RsMesh *
rs_layout_get_mesh(const RsLayout *layout)
{
    return layout->mesh;
}

const RsPlacement *
rs_layout_get_placements(const RsLayout *layout, guint *n_out)
{
    *n_out = layout->n_placements;
    return layout->n_placements ? layout->placements : NULL;
}

guint64
rs_layout_count_held(const RsLayout *layout, guint32 rank, const RsBox *box)
{
    gint idx = rs_layout_find_rank(layout, rank);
    if (idx < 0)
        return 0;
    guint n;
    const RsLocalBox *boxes = rs_layout_get_boxes(layout, (guint)idx, &n);
    /* Boxes of one rank are disjoint (the builder checks), so the counts add up. */
    guint64 total = 0;
    for (guint i = 0; i < n; i++) {
        RsBox inter;
        if (rs_box_intersect(&boxes[i].box, box, &inter))
            total += rs_box_get_n_elems(&inter);
    }
    return total;
}

gboolean
rs_layout_has_disjoint_shards(const RsLayout *layout)
{
    return layout->disjoint;
}

char *
rs_layout_format(const RsLayout *layout)
{
    if (layout->mesh == NULL)
        return layout->description != NULL
                   ? g_strdup(layout->description)
                   : g_strdup_printf("explicit boxes on %u ranks", layout->entries->len);
    g_autofree char *mesh = rs_mesh_format(layout->mesh);
    return g_strdup_printf("mesh %s, %s", mesh, layout->description ? layout->description : "");
}

void
rs_local_box_init_row_major(RsLocalBox *local, guint n_dims, const gint64 *shape)
{
    memset(local, 0, sizeof *local);
    rs_box_init_full(&local->box, n_dims, shape);
    gint64 stride = 1;
    for (gint d = (gint)n_dims - 1; d >= 0; d--) {
        local->strides_elems[d] = stride;
        stride *= shape[d];
    }
}

guint64
rs_local_box_get_run_elems(const RsLocalBox *local, const RsBox *piece)
{
    /* Walk the dims from the last: a run grows over a dim while the elements are adjacent
     * (stride 1 for the last kept dim, then exactly one run's length for the next). */
    guint64 run = 1;
    for (gint d = (gint)piece->n_dims - 1; d >= 0; d--) {
        gint64 count = rs_box_get_count(piece, (guint)d);
        if (count == 1)
            continue;
        gint64 stride = piece->step[d] / local->box.step[d] * local->strides_elems[d];
        if (stride != (gint64)run)
            break;
        run *= (guint64)count;
    }
    return run;
}
