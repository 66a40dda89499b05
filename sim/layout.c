/* layout.c — resolution of DTensor placements to per-rank boxes.
 *
 * The model: a tensor's global index space is a box [0, shape). Each mesh position walks
 * the mesh dims left to right and narrows its box on every Shard(d) with torch.chunk
 * arithmetic, exactly as PyTorch computes local shapes and global offsets. Storage is
 * compressed-row: entries sorted by global rank, each pointing at a run of RsLocalBox. */
#include "sim/layout.h"

#include <string.h>

G_DEFINE_QUARK(rs-layout-error-quark, rs_layout_error)

typedef struct {
    guint32 rank;
    guint first_box;
    guint n_boxes;
    guint64 local_n_elems;
} LayoutEntry;

struct _RsLayout {
    gint ref_count;
    guint n_dims;
    gint64 shape[RS_MAX_DIMS];
    guint64 n_elems;
    GArray *entries; /* LayoutEntry, sorted by rank */
    GArray *boxes;   /* RsLocalBox */
    RsMesh *mesh;    /* nullable */
    guint n_placements;
    RsPlacement placements[RS_MAX_MESH_DIMS];
};

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

static void
local_box_init_row_major(RsLocalBox *lb, const RsBox *box)
{
    memset(lb, 0, sizeof *lb);
    lb->box = *box;
    lb->offset_elems = 0;
    gint64 stride = 1;
    for (gint d = (gint)box->n_dims - 1; d >= 0; d--) {
        lb->strides_elems[d] = stride;
        stride *= rs_box_get_count(box, (guint)d);
    }
}

static gint
entry_compare(gconstpointer a, gconstpointer b)
{
    guint32 ra = ((const LayoutEntry *)a)->rank, rb = ((const LayoutEntry *)b)->rank;
    return ra < rb ? -1 : ra > rb;
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
        n *= (guint64)shape[d];
    }
    return TRUE;
}

RsLayout *
rs_layout_new_dtensor(guint n_dims, const gint64 *shape, const RsMesh *mesh,
                      const RsPlacement *placements, guint n_placements, GError **error)
{
    g_return_val_if_fail(mesh != NULL, NULL);
    if (!check_shape(n_dims, shape, error))
        return NULL;
    guint n_mesh_dims = rs_mesh_get_n_dims(mesh);
    if (n_placements != n_mesh_dims) {
        g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                    "%u placements for a %u-dim mesh: give one placement per mesh dim",
                    n_placements, n_mesh_dims);
        return NULL;
    }
    for (guint m = 0; m < n_placements; m++) {
        if (placements[m].kind == RS_PLACEMENT_PARTIAL) {
            g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_UNSUPPORTED,
                        "placement %u is Partial: a weight is never a pending reduction; "
                        "reduce it before the refit",
                        m);
            return NULL;
        }
        if (placements[m].kind == RS_PLACEMENT_SHARD &&
            (placements[m].dim < 0 || (guint)placements[m].dim >= n_dims)) {
            g_set_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID,
                        "placement %u is Shard(%d) but the tensor has %u dims", m,
                        placements[m].dim, n_dims);
            return NULL;
        }
    }

    RsLayout *layout = layout_alloc(n_dims, shape);
    layout->mesh = rs_mesh_dup(mesh);
    layout->n_placements = n_placements;
    memcpy(layout->placements, placements, n_placements * sizeof *placements);

    guint n_ranks = rs_mesh_get_n_ranks(mesh);
    g_array_set_size(layout->entries, n_ranks);
    for (guint i = 0; i < n_ranks; i++) {
        guint coords[RS_MAX_MESH_DIMS];
        rs_mesh_get_coords(mesh, i, coords);
        RsBox box;
        rs_box_init_full(&box, n_dims, shape);
        for (guint m = 0; m < n_placements; m++) {
            if (placements[m].kind != RS_PLACEMENT_SHARD)
                continue;
            guint d = (guint)placements[m].dim;
            gint64 len = box.hi[d] - box.lo[d];
            gint64 k = rs_mesh_get_size(mesh, m);
            gint64 chunk = (len + k - 1) / k;
            gint64 start = MIN((gint64)coords[m] * chunk, len);
            gint64 end = MIN(((gint64)coords[m] + 1) * chunk, len);
            box.hi[d] = box.lo[d] + end;
            box.lo[d] += start;
        }
        LayoutEntry *e = &g_array_index(layout->entries, LayoutEntry, i);
        e->rank = rs_mesh_get_rank(mesh, i);
        e->first_box = layout->boxes->len;
        e->local_n_elems = rs_box_get_n_elems(&box);
        e->n_boxes = 0;
        if (e->local_n_elems > 0 || n_dims == 0) {
            RsLocalBox lb;
            local_box_init_row_major(&lb, &box);
            g_array_append_val(layout->boxes, lb);
            e->n_boxes = 1;
        }
    }
    g_array_sort(layout->entries, entry_compare);
    return layout;
}

RsLayout *
rs_layout_new_replicated(guint n_dims, const gint64 *shape, const guint32 *ranks,
                         guint n_ranks)
{
    guint size = n_ranks;
    g_autoptr(GError) error = NULL;
    g_autoptr(RsMesh) mesh = rs_mesh_new(1, &size, (const char *const[]){"r"}, ranks, n_ranks,
                                         &error);
    g_return_val_if_fail(mesh != NULL, NULL);
    RsPlacement r = {RS_PLACEMENT_REPLICATE, 0};
    return rs_layout_new_dtensor(n_dims, shape, mesh, &r, 1, NULL);
}

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

guint64
rs_layout_get_local_n_elems(const RsLayout *layout, guint index)
{
    g_return_val_if_fail(index < layout->entries->len, 0);
    return g_array_index(layout->entries, LayoutEntry, index).local_n_elems;
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
    /* Boxes of one rank are disjoint, so the counts add up. */
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
    /* Nested torch.chunk partitions: two mesh positions either agree on every sharded
     * mesh coordinate (identical boxes) or differ in one, where their chunks are disjoint. */
    return layout->mesh != NULL;
}

char *
rs_layout_format(const RsLayout *layout)
{
    if (layout->mesh == NULL)
        return g_strdup_printf("explicit boxes on %u ranks", layout->entries->len);
    g_autofree char *mesh = rs_mesh_format(layout->mesh);
    g_autofree char *pl = rs_placements_format(layout->placements, layout->n_placements);
    return g_strdup_printf("mesh %s, %s", mesh, pl);
}
