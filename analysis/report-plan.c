/* report-plan.c — `reshard plan` (the transfers of a plan) and `reshard layout` (every
 * rank's boxes of a tensor), each one RsTable rendered as text, CSV or JSON.
 *
 * Not tables: the text form opens with the caller's header lines (what was planned or laid
 * out) and, for the plan, two summary lines; the JSON documents wrap the rows (plan: an
 * object with strategy, bytes_moved, local_bytes and transfers[]; layout: ranks[] each with
 * its boxes[]). */
#include "analysis/report.h"

#include <string.h>

/* "0;4" (CSV) of @n integers. */
static char *
ints_text(const gint64 *v, guint n, const char *sep)
{
    GString *s = g_string_new(NULL);
    for (guint d = 0; d < n; d++)
        g_string_append_printf(s, "%s%" G_GINT64_FORMAT, d ? sep : "", v[d]);
    return g_string_free(s, FALSE);
}

static JsonNode *
ints_node(const gint64 *v, guint n)
{
    JsonArray *a = json_array_sized_new(n);
    for (guint d = 0; d < n; d++)
        json_array_add_int_element(a, v[d]);
    JsonNode *node = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(node, a);
    return node;
}

/* The columns lo, hi, step: text in CSV ("0;4"), arrays in JSON, one box column in the
 * text table. */
enum { BOX_TEXT, LO_CSV, HI_CSV, STEP_CSV, LO_JSON, HI_JSON, STEP_JSON, BOX_N };

#define BOX_COLUMNS                                                                                \
    {"box", "box (global lo:hi[:step] per dim)", RS_COLUMN_TEXT, 0,                            \
     RS_COLUMN_TABLE_ONLY | RS_COLUMN_LEFT},                                                   \
        {"lo", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_NO_TABLE | RS_COLUMN_NO_JSON},               \
        {"hi", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_NO_TABLE | RS_COLUMN_NO_JSON},               \
        {"step", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_NO_TABLE | RS_COLUMN_NO_JSON},             \
        {"lo", NULL, RS_COLUMN_JSON, 0, 0}, {"hi", NULL, RS_COLUMN_JSON, 0, 0},                \
        {"step", NULL, RS_COLUMN_JSON, 0, 0}

static void
set_box(RsTable *t, guint first, const RsBox *box)
{
    rs_table_take_text(t, first + BOX_TEXT, rs_box_format(box));
    const gint64 *vals[3] = {box->lo, box->hi, box->step};
    for (guint j = 0; j < 3; j++) {
        rs_table_take_text(t, first + LO_CSV + j, ints_text(vals[j], box->n_dims, ";"));
        rs_table_take_json(t, first + LO_JSON + j, ints_node(vals[j], box->n_dims));
    }
}

/* --- plan --- */

enum { PL_PHASE, PL_SRC, PL_DST, PL_TENSOR, PL_BOX, PL_BYTES = PL_BOX + BOX_N, PL_KIND, PL_LOCAL };

static const RsColumn plan_columns[] = {
    [PL_PHASE] = {"phase", NULL, RS_COLUMN_INTEGER, 0, 0},
    [PL_SRC] = {"src", NULL, RS_COLUMN_INTEGER, 0, 0},
    [PL_DST] = {"dst", NULL, RS_COLUMN_INTEGER, 0, 0},
    [PL_TENSOR] = {"tensor", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_LEFT},
    BOX_COLUMNS,
    [PL_BYTES] = {"bytes", NULL, RS_COLUMN_BYTES, 0, 0},
    [PL_KIND] = {"kind", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_TABLE_ONLY | RS_COLUMN_LEFT},
    [PL_LOCAL] = {"local", NULL, RS_COLUMN_BOOL, 0,
                  RS_COLUMN_NO_TABLE | RS_COLUMN_NO_JSON | RS_COLUMN_CSV_01},
};

/* What a transfer crosses: a local copy; on a topology, NVLink within an NVLink domain and
 * the network between domains; without one, only that it goes between ranks. A transfer
 * into the receiver's staging buffer says so too. */
static const char *
transfer_kind(const RsTransfer *tr, const RsTopology *topo)
{
    if (tr->src == tr->dst)
        return "local copy";
    gboolean staging = (tr->flags & RS_TRANSFER_TO_STAGING) != 0;
    if (topo == NULL || tr->src >= rs_topology_get_n_gpus(topo) ||
        tr->dst >= rs_topology_get_n_gpus(topo))
        return staging ? "to staging" : "between ranks";
    gboolean nvlink = rs_topology_get_nvlink_domain(topo, tr->src) ==
                      rs_topology_get_nvlink_domain(topo, tr->dst);
    if (staging)
        return nvlink ? "nvlink, to staging" : "network, to staging";
    return nvlink ? "nvlink" : "network";
}

static RsTable *
plan_table(const RsPlanReport *r, guint64 *moved, guint64 *local)
{
    RsTable *t = rs_table_new("transfers", plan_columns, G_N_ELEMENTS(plan_columns));
    *moved = *local = 0;
    for (guint i = 0; i < rs_plan_get_n_transfers(r->plan); i++) {
        const RsTransfer *tr = rs_plan_get_transfer(r->plan, i);
        if (r->keep != NULL && !r->keep[tr->tensor_idx])
            continue;
        *(tr->src != tr->dst ? moved : local) += tr->size_bytes;
        rs_table_add_row(t);
        rs_table_set_uint(t, PL_PHASE, tr->phase);
        rs_table_set_uint(t, PL_SRC, tr->src);
        rs_table_set_uint(t, PL_DST, tr->dst);
        rs_table_set_text(t, PL_TENSOR, rs_refit_get_tensor(r->refit, tr->tensor_idx)->name);
        set_box(t, PL_BOX, tr->box);
        rs_table_set_uint(t, PL_BYTES, tr->size_bytes);
        rs_table_set_text(t, PL_KIND, transfer_kind(tr, r->topology));
        rs_table_set_bool(t, PL_LOCAL, tr->src == tr->dst);
    }
    return t;
}

void
rs_report_plan(const RsPlanReport *r, RsFormat format, GString *out)
{
    guint64 moved, local;
    g_autoptr(RsTable) t = plan_table(r, &moved, &local);
    const char *strategy = rs_strategy_get_name(rs_plan_get_strategy(r->plan));
    if (format == RS_FORMAT_CSV) {
        rs_table_append_csv(t, out);
    } else if (format == RS_FORMAT_JSON) {
        g_autoptr(JsonBuilder) b = json_builder_new();
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "strategy");
        json_builder_add_string_value(b, strategy);
        json_builder_set_member_name(b, "bytes_moved");
        json_builder_add_int_value(b, (gint64)moved);
        json_builder_set_member_name(b, "local_bytes");
        json_builder_add_int_value(b, (gint64)local);
        if (r->topology != NULL) {
            json_builder_set_member_name(b, "topology");
            json_builder_add_string_value(b, rs_topology_get_name(r->topology));
        }
        json_builder_set_member_name(b, "transfers");
        rs_table_add_json_array(t, b);
        json_builder_end_object(b);
        /* Large plans: one line. */
        rs_report_json_append_full(b, FALSE, out);
    } else {
        g_string_append(out, r->header ? r->header : "");
        guint n_rows = rs_table_get_n_rows(t), n_phases = rs_plan_get_n_phases(r->plan);
        g_string_append_printf(out, "strategy  %s: %u transfer%s listed, %u phase%s\n", strategy,
                               n_rows, n_rows == 1 ? "" : "s", n_phases, n_phases == 1 ? "" : "s");
        g_string_append_printf(out,
                               "moved     %" G_GUINT64_FORMAT " bytes between ranks, "
                               "%" G_GUINT64_FORMAT " bytes of local copies\n\n",
                               moved, local);
        rs_table_append_text(t, out);
    }
}

/* --- layout --- */

enum {
    LY_RANK,
    LY_TENSOR,
    LY_BOX,
    LY_OFFSET = LY_BOX + BOX_N,
    LY_ELEMS,
    LY_SHAPE_CSV,
    LY_SHAPE_TEXT,
    LY_EXPERT,
};

static const RsColumn layout_columns[] = {
    [LY_RANK] = {"rank", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_NO_JSON},
    [LY_TENSOR] = {"tensor", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_LEFT},
    BOX_COLUMNS,
    [LY_OFFSET] = {"offset_elems", "offset elems", RS_COLUMN_INTEGER, 0, 0},
    [LY_ELEMS] = {"elems", NULL, RS_COLUMN_INTEGER, 0, 0},
    [LY_SHAPE_CSV] = {"buffer_shape", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_CSV_ONLY},
    [LY_SHAPE_TEXT] = {"buffer_shape", "buffer shape (elems)", RS_COLUMN_TEXT, 0,
                       RS_COLUMN_TABLE_ONLY | RS_COLUMN_LEFT},
    /* The text form's header and JSON's top level say it once. */
    [LY_EXPERT] = {"expert", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_CSV_ONLY},
};

/* One box of a rank, and a rank's boxes by offset. */
typedef struct {
    const char *tensor;
    RsLocalBox lb;
} BoxRow;

typedef struct {
    guint32 rank;
    guint n_dims;
    gint64 buffer_shape[RS_MAX_DIMS];
    guint64 buffer_elems;
    GArray *rows; /* BoxRow, by offset */
} RankRows;

static void
rank_rows_clear(gpointer p)
{
    RankRows *r = p;
    g_array_unref(r->rows);
}

static gint
row_compare(gconstpointer a, gconstpointer b)
{
    guint64 x = ((const BoxRow *)a)->lb.offset_elems, y = ((const BoxRow *)b)->lb.offset_elems;
    return x < y ? -1 : x > y;
}

static gint
rank_compare(gconstpointer a, gconstpointer b)
{
    guint32 x = ((const RankRows *)a)->rank, y = ((const RankRows *)b)->rank;
    return x < y ? -1 : x > y;
}

/* The rank's entry of @ranks, added (with its buffer shape from entry @e of @layout) when
 * new; @index maps rank + 1 to its position + 1. */
static RankRows *
rank_entry(GArray *ranks, GHashTable *index, const RsLayout *layout, guint e)
{
    guint32 rank = rs_layout_get_rank(layout, e);
    gpointer found = g_hash_table_lookup(index, GUINT_TO_POINTER(rank + 1));
    if (found != NULL)
        return &g_array_index(ranks, RankRows, GPOINTER_TO_UINT(found) - 1);
    RankRows fresh = {rank, rs_layout_get_n_dims(layout), {0},
                      rs_layout_get_local_n_elems(layout, e),
                      g_array_new(FALSE, FALSE, sizeof(BoxRow))};
    memcpy(fresh.buffer_shape, rs_layout_get_buffer_shape(layout, e),
           fresh.n_dims * sizeof(gint64));
    g_array_append_val(ranks, fresh);
    g_hash_table_insert(index, GUINT_TO_POINTER(rank + 1), GUINT_TO_POINTER(ranks->len));
    return &g_array_index(ranks, RankRows, ranks->len - 1);
}

/* Gathers the boxes of @layouts (one per tensor name) per rank, ranks in order. */
static GArray *
collect(const RsLayout *const *layouts, const char *const *names, guint n, gint64 only_rank)
{
    GArray *ranks = g_array_new(FALSE, TRUE, sizeof(RankRows));
    g_array_set_clear_func(ranks, rank_rows_clear);
    g_autoptr(GHashTable) index = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint t = 0; t < n; t++) {
        for (guint e = 0; e < rs_layout_get_n_ranks(layouts[t]); e++) {
            if (only_rank >= 0 && rs_layout_get_rank(layouts[t], e) != (guint32)only_rank)
                continue;
            RankRows *rr = rank_entry(ranks, index, layouts[t], e);
            guint nb;
            const RsLocalBox *boxes = rs_layout_get_boxes(layouts[t], e, &nb);
            for (guint b = 0; b < nb; b++) {
                BoxRow row = {names[t], boxes[b]};
                g_array_append_val(rr->rows, row);
            }
        }
    }
    g_array_sort(ranks, rank_compare);
    for (guint i = 0; i < ranks->len; i++)
        g_array_sort(g_array_index(ranks, RankRows, i).rows, row_compare);
    return ranks;
}

/* "[4, 4] = 16", and the elements of the buffer outside the boxes listed. */
static char *
buffer_text(const RankRows *rr)
{
    g_autofree char *shape = ints_text(rr->buffer_shape, rr->n_dims, ", ");
    guint64 held = 0;
    for (guint k = 0; k < rr->rows->len; k++)
        held += rs_box_get_n_elems(&g_array_index(rr->rows, BoxRow, k).lb.box);
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "[%s] = %" G_GUINT64_FORMAT, shape, rr->buffer_elems);
    if (held < rr->buffer_elems)
        g_string_append_printf(s, " (%" G_GUINT64_FORMAT " not in these boxes)",
                               rr->buffer_elems - held);
    return g_string_free(s, FALSE);
}

/* The CSV's expert cell of the row just added: @expert, or empty (-1: not one expert). */
static void
set_expert(RsTable *t, gint64 expert)
{
    if (expert >= 0)
        rs_table_set_uint(t, LY_EXPERT, (guint64)expert);
    else
        rs_table_set_null(t, LY_EXPERT);
}

static void
add_rank_rows(RsTable *t, const RankRows *rr, gint64 expert)
{
    g_autofree char *shape_csv = ints_text(rr->buffer_shape, rr->n_dims, ";");
    if (rr->rows->len == 0) {
        rs_table_add_row(t);
        set_expert(t, expert);
        rs_table_set_uint(t, LY_RANK, rr->rank);
        rs_table_set_null(t, LY_TENSOR);
        rs_table_set_text(t, LY_BOX + BOX_TEXT, "(empty shard)");
        rs_table_set_null(t, LY_OFFSET);
        rs_table_set_uint(t, LY_ELEMS, 0);
        rs_table_set_text(t, LY_SHAPE_CSV, shape_csv);
        rs_table_take_text(t, LY_SHAPE_TEXT, buffer_text(rr));
        return;
    }
    for (guint k = 0; k < rr->rows->len; k++) {
        const BoxRow *row = &g_array_index(rr->rows, BoxRow, k);
        rs_table_add_row(t);
        set_expert(t, expert);
        rs_table_set_uint(t, LY_RANK, rr->rank);
        rs_table_set_text(t, LY_TENSOR, row->tensor);
        set_box(t, LY_BOX, &row->lb.box);
        rs_table_set_uint(t, LY_OFFSET, row->lb.offset_elems);
        rs_table_set_uint(t, LY_ELEMS, rs_box_get_n_elems(&row->lb.box));
        rs_table_set_text(t, LY_SHAPE_CSV, shape_csv);
        if (k == 0)
            rs_table_take_text(t, LY_SHAPE_TEXT, buffer_text(rr));
    }
}

static void
layout_json(GArray *ranks, const RsTable *t, gint64 expert, GString *out)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    if (expert >= 0) {
        json_builder_set_member_name(b, "expert");
        json_builder_add_int_value(b, expert);
    }
    json_builder_set_member_name(b, "ranks");
    json_builder_begin_array(b);
    guint row = 0;
    for (guint i = 0; i < ranks->len; i++) {
        const RankRows *rr = &g_array_index(ranks, RankRows, i);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "rank");
        json_builder_add_int_value(b, rr->rank);
        json_builder_set_member_name(b, "buffer_shape");
        json_builder_begin_array(b);
        for (guint d = 0; d < rr->n_dims; d++)
            json_builder_add_int_value(b, rr->buffer_shape[d]);
        json_builder_end_array(b);
        json_builder_set_member_name(b, "buffer_elems");
        json_builder_add_int_value(b, (gint64)rr->buffer_elems);
        json_builder_set_member_name(b, "boxes");
        json_builder_begin_array(b);
        for (guint k = 0; k < rr->rows->len; k++) {
            json_builder_begin_object(b);
            rs_table_add_json_members(t, row + k, b);
            json_builder_end_object(b);
        }
        row += MAX(rr->rows->len, 1);
        json_builder_end_array(b);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    rs_report_json_append_full(b, FALSE, out);
}

void
rs_report_layout(const RsLayout *const *layouts, const char *const *names, guint n_layouts,
                 gint64 only_rank, gint64 expert, const char *header, RsFormat format, GString *out)
{
    g_autoptr(GArray) ranks = collect(layouts, names, n_layouts, only_rank);
    g_autoptr(RsTable) t = rs_table_new("boxes", layout_columns, G_N_ELEMENTS(layout_columns));
    for (guint i = 0; i < ranks->len; i++)
        add_rank_rows(t, &g_array_index(ranks, RankRows, i), expert);
    switch (format) {
    case RS_FORMAT_JSON:
        layout_json(ranks, t, expert, out);
        break;
    case RS_FORMAT_CSV:
        rs_table_append_csv(t, out);
        break;
    case RS_FORMAT_TABLE:
        g_string_append(out, header ? header : "");
        g_string_append_c(out, '\n');
        rs_table_append_text(t, out);
        if (ranks->len == 0 && only_rank >= 0)
            g_string_append_printf(out, "(rank %" G_GINT64_FORMAT " holds nothing of %s)\n",
                                   only_rank,
                                   expert >= 0     ? "this expert"
                                   : n_layouts > 1 ? "this buffer's tensors"
                                                   : "this tensor");
        break;
    }
}
