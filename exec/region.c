/* region.c — strided n-d memory images of boxes; pack and unpack of wire byte ranges.
 *
 * The wire image of a region is its elements in row-major order. A byte range of it is
 * split into a partial first element, whole elements, and a partial last element; whole
 * elements are walked row by row (the last dim), each row one memcpy when its elements are
 * adjacent in memory, else element by element. */
#include "exec/region.h"

#include <string.h>

G_STATIC_ASSERT(RS_INDEX_MAX_DIMS == RS_MAX_DIMS);

void
rs_region_init(RsRegion *region, guint8 *buffer, const RsLocalBox *local, const RsBox *piece,
               guint elem_bytes)
{
    memset(region, 0, sizeof *region);
    region->elem_bytes = elem_bytes;
    gint64 offset = (gint64)local->offset_elems;
    gint64 counts[RS_MAX_DIMS], strides[RS_MAX_DIMS];
    guint64 n_elems = 1;
    for (guint d = 0; d < piece->n_dims; d++) {
        /* Position of the piece's first index in the local box, and the distance (in local
         * positions) between the piece's consecutive indices. */
        gint64 k0 = (piece->lo[d] - local->box.lo[d]) / local->box.step[d];
        gint64 ratio = piece->step[d] / local->box.step[d];
        offset += k0 * local->strides_elems[d];
        counts[d] = rs_box_get_count(piece, d);
        strides[d] = ratio * local->strides_elems[d] * (gint64)elem_bytes;
        n_elems *= (guint64)counts[d];
    }
    region->base = buffer + offset * (gint64)elem_bytes;
    region->n_bytes = n_elems * elem_bytes;
    /* Drop dims of one index; merge a dim into the next when it steps over exactly one
     * row of it. */
    guint n = 0;
    for (guint d = 0; d < piece->n_dims; d++) {
        if (counts[d] == 1)
            continue;
        region->counts[n] = counts[d];
        region->strides_bytes[n] = strides[d];
        n++;
    }
    if (n == 0) {
        region->counts[0] = 1;
        region->strides_bytes[0] = elem_bytes;
        n = 1;
    }
    guint m = 0;
    for (guint d = 1; d < n; d++) {
        if (region->strides_bytes[m] == region->counts[d] * region->strides_bytes[d]) {
            region->counts[m] *= region->counts[d];
            region->strides_bytes[m] = region->strides_bytes[d];
        } else {
            m++;
            region->counts[m] = region->counts[d];
            region->strides_bytes[m] = region->strides_bytes[d];
        }
    }
    region->n_dims = m + 1;
}

/* Memory address of element @index (row-major position) of @region. */
static guint8 *
elem_address(const RsRegion *r, guint64 index, gint64 *pos)
{
    gint64 off = 0;
    for (gint d = (gint)r->n_dims - 1; d >= 0; d--) {
        gint64 c = r->counts[d];
        pos[d] = (gint64)(index % (guint64)c);
        index /= (guint64)c;
        off += pos[d] * r->strides_bytes[d];
    }
    return r->base + off;
}

gboolean
rs_region_get_contiguous(const RsRegion *region, guint64 from, guint64 to, guint8 **ptr_out)
{
    guint e = region->elem_bytes;
    guint last = region->n_dims - 1;
    if (region->strides_bytes[last] != (gint64)e)
        return FALSE;
    guint64 first_elem = from / e, last_elem = (to - 1) / e;
    gint64 row = region->counts[last];
    if (region->n_dims > 1 && first_elem / (guint64)row != last_elem / (guint64)row)
        return FALSE;
    gint64 pos[RS_MAX_DIMS];
    *ptr_out = elem_address(region, first_elem, pos) + from % e;
    return TRUE;
}

/* Copies @n whole elements starting at element @index between the region and @wire. The
 * position is unravelled once; rows then follow by pointer steps (no division per row),
 * which matters for layouts whose rows are a cache line or two (a last dim split over
 * tensor-parallel ranks). */
static void
copy_elems(const RsRegion *r, guint64 index, guint64 n, guint8 *wire, gboolean pack)
{
    guint e = r->elem_bytes;
    guint last = r->n_dims - 1;
    gint64 s = r->strides_bytes[last];
    gint64 row = r->counts[last];
    gint64 pos[RS_MAX_DIMS];
    guint8 *p = elem_address(r, index, pos);
    guint8 *row_start = p - pos[last] * s;
    gint64 k0 = pos[last];
    while (n > 0) {
        guint64 run = MIN((guint64)(row - k0), n);
        gsize run_bytes = (gsize)run * e;
        if (s == (gint64)e) {
            if (pack)
                memcpy(wire, p, run_bytes);
            else
                memcpy(p, wire, run_bytes);
        } else if (pack) {
            for (guint64 k = 0; k < run; k++)
                memcpy(wire + k * e, p + (gint64)k * s, e);
        } else {
            for (guint64 k = 0; k < run; k++)
                memcpy(p + (gint64)k * s, wire + k * e, e);
        }
        wire += run_bytes;
        n -= run;
        /* The next row: carry through the outer dims. */
        for (gint d = (gint)last - 1; d >= 0; d--) {
            row_start += r->strides_bytes[d];
            if (++pos[d] < r->counts[d])
                break;
            row_start -= r->counts[d] * r->strides_bytes[d];
            pos[d] = 0;
        }
        p = row_start;
        k0 = 0;
    }
}

static void
copy_range(const RsRegion *r, guint64 from, guint64 to, guint8 *wire, gboolean pack)
{
    guint e = r->elem_bytes;
    gint64 pos[RS_MAX_DIMS];
    if (from >= to)
        return;
    /* A partial first element. */
    if (from % e != 0) {
        guint64 end = MIN(to, (from / e + 1) * e);
        guint8 *p = elem_address(r, from / e, pos) + from % e;
        if (pack)
            memcpy(wire, p, end - from);
        else
            memcpy(p, wire, end - from);
        wire += end - from;
        from = end;
    }
    guint64 whole = (to - from) / e;
    if (whole > 0) {
        copy_elems(r, from / e, whole, wire, pack);
        wire += whole * e;
        from += whole * e;
    }
    /* A partial last element. */
    if (from < to) {
        guint8 *p = elem_address(r, from / e, pos);
        if (pack)
            memcpy(wire, p, to - from);
        else
            memcpy(p, wire, to - from);
    }
}

gboolean
rs_region_has_long_rows(const RsRegion *region, gsize min_row_bytes)
{
    guint last = region->n_dims - 1;
    if (region->strides_bytes[last] != (gint64)region->elem_bytes)
        return FALSE;
    guint64 row_bytes = (guint64)region->counts[last] * region->elem_bytes;
    return row_bytes >= min_row_bytes || row_bytes == region->n_bytes;
}

static void
append_run(GArray *runs, guint8 *base, gsize len)
{
    if (runs->len > 0) {
        RsIovec *prev = &g_array_index(runs, RsIovec, runs->len - 1);
        if ((guint8 *)prev->base + prev->len == base) {
            prev->len += len;
            return;
        }
    }
    RsIovec run = {base, len};
    g_array_append_val(runs, run);
}

void
rs_region_append_runs(const RsRegion *r, guint64 from, guint64 to, GArray *runs)
{
    guint e = r->elem_bytes;
    guint last = r->n_dims - 1;
    g_return_if_fail(r->strides_bytes[last] == (gint64)e && from < to);
    gsize row_bytes = (gsize)r->counts[last] * e;
    /* Walk rows: the first may start inside a row (even inside an element). */
    guint64 row = from / row_bytes;
    gsize in_row = (gsize)(from % row_bytes);
    gint64 pos[RS_MAX_DIMS];
    guint8 *row_start = elem_address(r, row * (guint64)r->counts[last], pos);
    guint64 left = to - from;
    while (left > 0) {
        gsize len = (gsize)MIN((guint64)(row_bytes - in_row), left);
        append_run(runs, row_start + in_row, len);
        left -= len;
        in_row = 0;
        for (gint d = (gint)last - 1; d >= 0; d--) {
            row_start += r->strides_bytes[d];
            if (++pos[d] < r->counts[d])
                break;
            row_start -= r->counts[d] * r->strides_bytes[d];
            pos[d] = 0;
        }
    }
}

void
rs_region_pack(const RsRegion *region, guint64 from, guint64 to, guint8 *out)
{
    copy_range(region, from, to, out, TRUE);
}

void
rs_region_unpack(const RsRegion *region, guint64 from, guint64 to, const guint8 *in)
{
    copy_range(region, from, to, (guint8 *)in, FALSE);
}

void
rs_region_copy(const RsRegion *dst, const RsRegion *src)
{
    g_return_if_fail(dst->n_bytes == src->n_bytes && dst->elem_bytes == src->elem_bytes);
    gboolean same_shape = dst->n_dims == src->n_dims;
    for (guint d = 0; same_shape && d < dst->n_dims; d++)
        same_shape = dst->counts[d] == src->counts[d];
    guint e = dst->elem_bytes;
    guint last = dst->n_dims - 1;
    if (same_shape && dst->strides_bytes[last] == (gint64)e &&
        src->strides_bytes[last] == (gint64)e) {
        /* Row by row, one memcpy each, both positions stepped without division. */
        guint64 n_rows = dst->n_bytes / e / (guint64)dst->counts[last];
        gsize row_bytes = (gsize)dst->counts[last] * e;
        gint64 pos[RS_MAX_DIMS] = {0};
        guint8 *d = dst->base;
        const guint8 *s = src->base;
        for (guint64 i = 0; i < n_rows; i++) {
            memcpy(d, s, row_bytes);
            for (gint k = (gint)last - 1; k >= 0; k--) {
                d += dst->strides_bytes[k];
                s += src->strides_bytes[k];
                if (++pos[k] < dst->counts[k])
                    break;
                d -= dst->counts[k] * dst->strides_bytes[k];
                s -= src->counts[k] * src->strides_bytes[k];
                pos[k] = 0;
            }
        }
        return;
    }
    /* One side is a single run of memory: pack into it or unpack from it directly. */
    if (dst->n_dims == 1 && dst->strides_bytes[0] == (gint64)e) {
        copy_range(src, 0, src->n_bytes, dst->base, TRUE);
        return;
    }
    if (src->n_dims == 1 && src->strides_bytes[0] == (gint64)e) {
        copy_range(dst, 0, dst->n_bytes, src->base, FALSE);
        return;
    }
    /* Different row structure: go through a bounce buffer of whole elements. */
    guint8 bounce[1 << 14];
    for (guint64 from = 0; from < dst->n_bytes; from += sizeof bounce) {
        guint64 to = MIN(dst->n_bytes, from + sizeof bounce);
        copy_range(src, from, to, bounce, TRUE);
        copy_range(dst, from, to, bounce, FALSE);
    }
}
