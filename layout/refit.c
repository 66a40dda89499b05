/* refit.c — a list of (tensor, source layout, destination layout), with dtype conversions
 * that add block-scale tensors, and the consistency check of fused buffers. */
#include "layout/refit.h"

#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(rs-refit-error-quark, rs_refit_error)
/* clang-format on */

struct _RsRefit {
    GArray *tensors; /* RsRefitTensor */
};

static void
refit_tensor_clear(gpointer p)
{
    RsRefitTensor *t = p;
    g_free(t->name);
    g_free(t->src_buffer);
    g_free(t->dst_buffer);
    rs_layout_unref(t->src);
    rs_layout_unref(t->dst);
}

RsRefit *
rs_refit_new(void)
{
    RsRefit *refit = g_new0(RsRefit, 1);
    refit->tensors = g_array_new(FALSE, TRUE, sizeof(RsRefitTensor));
    g_array_set_clear_func(refit->tensors, refit_tensor_clear);
    return refit;
}

void
rs_refit_free(RsRefit *refit)
{
    if (refit == NULL)
        return;
    g_array_unref(refit->tensors);
    g_free(refit);
}

static gboolean
same_shape(const char *name, RsLayout *src, RsLayout *dst, GError **error)
{
    guint n_dims = rs_layout_get_n_dims(src);
    if (n_dims != rs_layout_get_n_dims(dst) ||
        memcmp(rs_layout_get_shape(src), rs_layout_get_shape(dst), n_dims * sizeof(gint64))) {
        g_set_error(error, RS_REFIT_ERROR, RS_REFIT_ERROR_MISMATCH,
                    "%s: source and destination layouts have different global shapes", name);
        return FALSE;
    }
    return TRUE;
}

/* Whether neither side's shards split a byte of a packed dtype (rs_layout_check_packed()):
 * @src's pieces leave in @src_dtype (the destination dtype when converted at the source),
 * @dst receives @dst_dtype. */
static gboolean
packed_sides_ok(const char *name, const RsLayout *src, RsDtype src_dtype, const RsLayout *dst,
                RsDtype dst_dtype, GError **error)
{
    if (!rs_layout_check_packed(src, src_dtype, error)) {
        g_prefix_error(error, "%s: source: ", name);
        return FALSE;
    }
    if (!rs_layout_check_packed(dst, dst_dtype, error)) {
        g_prefix_error(error, "%s: destination: ", name);
        return FALSE;
    }
    return TRUE;
}

static void
append(RsRefit *refit, const char *name, RsDtype src_dtype, RsDtype dtype, RsLayout *src,
       RsLayout *dst, const char *src_buffer, const char *dst_buffer, gint scale_of)
{
    RsRefitTensor t;
    memset(&t, 0, sizeof t);
    t.name = g_strdup(name);
    t.n_dims = rs_layout_get_n_dims(src);
    memcpy(t.shape, rs_layout_get_shape(src), t.n_dims * sizeof(gint64));
    t.dtype = dtype;
    t.load_dtype = dtype;
    t.src_dtype = src_dtype;
    t.src = rs_layout_ref(src);
    t.dst = rs_layout_ref(dst);
    t.src_buffer = g_strdup(src_buffer);
    t.dst_buffer = g_strdup(dst_buffer);
    t.scale_of = scale_of;
    g_array_append_val(refit->tensors, t);
}

gboolean
rs_refit_add_tensor(RsRefit *refit, const char *name, RsDtype dtype, RsLayout *src, RsLayout *dst,
                    GError **error)
{
    if (!same_shape(name, src, dst, error) || !packed_sides_ok(name, src, dtype, dst, dtype, error))
        return FALSE;
    append(refit, name, dtype, dtype, src, dst, NULL, NULL, -1);
    return TRUE;
}

/* The name of the scales of @name: BASE.weight → BASE.weight@suffix_dotted, else
 * NAME@suffix_plain. */
static char *
scale_name(const char *name, const char *dotted, const char *plain)
{
    if (g_str_has_suffix(name, ".weight"))
        return g_strdup_printf("%.*s.%s", (int)(strlen(name) - strlen(".weight")), name, dotted);
    return g_strdup_printf("%s%s", name, plain);
}

/* Whether the boxes of @layout's ranks together cover its whole tensor. */
static gboolean
covers_tensor(const RsLayout *layout)
{
    RsBox full;
    rs_box_init_full(&full, rs_layout_get_n_dims(layout), rs_layout_get_shape(layout));
    g_autoptr(GArray) missing = g_array_new(FALSE, FALSE, sizeof(RsBox));
    g_array_append_val(missing, full);
    for (guint i = 0; i < rs_layout_get_n_ranks(layout) && missing->len > 0; i++) {
        guint n;
        const RsLocalBox *boxes = rs_layout_get_boxes(layout, i, &n);
        for (guint b = 0; b < n && missing->len > 0; b++)
            rs_box_list_subtract(missing, &boxes[b].box);
    }
    return missing->len == 0;
}

/* Whether converting @src_dtype to @dst_dtype adds block scales (FP8 e4m3, MXFP4). */
static gboolean
is_block_scaled(RsDtype src_dtype, RsDtype dst_dtype)
{
    return src_dtype != dst_dtype &&
           (dst_dtype == RS_DTYPE_FP8_E4M3 || dst_dtype == RS_DTYPE_MXFP4);
}

/* The block-scale layout of destination layout @dst of tensor @name served in @dtype (FP8
 * e4m3 or MXFP4), its block per dim written to @block [n_dims]. Returns: (transfer full)
 * the scales' layout, or NULL with RS_REFIT_ERROR_CONVERT (too few dims, a box off the
 * blocks: rs_refit_add_converted()). */
static RsLayout *
new_dst_scales(const char *name, RsDtype dtype, const RsLayout *dst, gint64 *block, GError **error)
{
    gboolean fp8 = dtype == RS_DTYPE_FP8_E4M3;
    guint n_dims = rs_layout_get_n_dims(dst);
    if (n_dims < (fp8 ? 2u : 1u)) {
        g_set_error(error, RS_REFIT_ERROR, RS_REFIT_ERROR_CONVERT,
                    "%s: %s block scales need a tensor of at least %u dims, not %u", name,
                    rs_dtype_get_name(dtype), fp8 ? 2u : 1u, n_dims);
        return NULL;
    }
    for (guint d = 0; d < n_dims; d++)
        block[d] = 1;
    if (fp8) {
        block[n_dims - 2] = 128; /* DeepSeek-V3 config.json weight_block_size [128, 128] */
        block[n_dims - 1] = 128;
    } else {
        block[n_dims - 1] = RS_MXFP4_BLOCK_ELEMS;
    }
    g_autoptr(GError) local = NULL;
    RsLayout *scales = rs_layout_new_blocked(dst, block, FALSE, TRUE, &local);
    if (scales == NULL)
        g_set_error(error, RS_REFIT_ERROR, RS_REFIT_ERROR_CONVERT, "%s to %s: destination %s", name,
                    rs_dtype_get_name(dtype), local->message);
    return scales;
}

gboolean
rs_refit_check_served_layout(const char *name, RsDtype stored_dtype, RsDtype served_dtype,
                             const RsLayout *dst, GError **error)
{
    if (!is_block_scaled(stored_dtype, served_dtype))
        return TRUE;
    gint64 block[RS_MAX_DIMS];
    g_autoptr(RsLayout) scales = new_dst_scales(name, served_dtype, dst, block, error);
    return scales != NULL;
}

gboolean
rs_refit_add_converted(RsRefit *refit, const RsRefitEntry *entry, RsLayout *src, RsLayout *dst,
                       GError **error)
{
    if (!same_shape(entry->name, src, dst, error))
        return FALSE;
    RsDtypeKind src_kind = rs_dtype_get_kind(entry->src_dtype);
    RsDtypeKind dst_kind = rs_dtype_get_kind(entry->dst_dtype);
    if (entry->src_dtype != entry->dst_dtype &&
        (src_kind != dst_kind || src_kind == RS_DTYPE_KIND_INTEGER)) {
        g_autofree char *why =
            src_kind == dst_kind ? g_strdup("an integer tensor keeps its dtype")
                                 : g_strdup_printf("it would lose its values (%s to %s)",
                                                   rs_dtype_get_kind_name(src_kind),
                                                   rs_dtype_get_kind_name(dst_kind));
        g_set_error(error, RS_REFIT_ERROR, RS_REFIT_ERROR_CONVERT,
                    "%s: %s to %s: %s; a tensor converts between floating-point formats (f64, "
                    "f32, bf16, f16, fp8, mxfp4) or between complex ones",
                    entry->name, rs_dtype_get_name(entry->src_dtype),
                    rs_dtype_get_name(entry->dst_dtype), why);
        return FALSE;
    }
    gboolean fp8 = entry->dst_dtype == RS_DTYPE_FP8_E4M3;
    if (!is_block_scaled(entry->src_dtype, entry->dst_dtype)) {
        if (!packed_sides_ok(entry->name, src, entry->src_dtype, dst, entry->dst_dtype, error))
            return FALSE;
        append(refit, entry->name, entry->src_dtype, entry->dst_dtype, src, dst, entry->src_buffer,
               entry->dst_buffer, -1);
        return TRUE;
    }
    gint64 block[RS_MAX_DIMS];
    g_autoptr(RsLayout) dst_scales =
        new_dst_scales(entry->name, entry->dst_dtype, dst, block, error);
    if (dst_scales == NULL)
        return FALSE;
    g_autoptr(RsLayout) src_whole = rs_layout_new_blocked(src, block, TRUE, FALSE, error);
    g_autoptr(RsLayout) src_scales =
        src_whole ? rs_layout_new_blocked(src, block, TRUE, TRUE, error) : NULL;
    if (src_scales == NULL) {
        g_prefix_error(error, "%s: source blocks: ", entry->name);
        return FALSE;
    }
    if (!covers_tensor(src_whole)) {
        /* A block split over source ranks (FSDP2 rows finer than the block) is quantised
         * by none of them: the weight goes unquantised and the destination quantises it on
         * load (no scales cross). */
        if (!packed_sides_ok(entry->name, src, entry->src_dtype, dst, entry->src_dtype, error))
            return FALSE;
        append(refit, entry->name, entry->src_dtype, entry->src_dtype, src, dst,
               entry->src_buffer, entry->dst_buffer, -1);
        g_array_index(refit->tensors, RsRefitTensor, refit->tensors->len - 1).load_dtype =
            entry->dst_dtype;
        return TRUE;
    }
    const char *dotted = fp8 ? "weight_scale_inv" : "weight_scale";
    const char *plain = fp8 ? "_scale_inv" : "_scales";
    g_autofree char *name = scale_name(entry->name, dotted, plain);
    g_autofree char *buffer =
        entry->dst_buffer ? scale_name(entry->dst_buffer, dotted, plain) : NULL;
    RsDtype scale_dtype = fp8 ? RS_DTYPE_F32 : RS_DTYPE_U8;
    /* Converted at the source, the source's pieces leave in the destination dtype: they
     * too must be whole bytes of it (5 rows of 63 values are 157.5 bytes of MXFP4). */
    if (!packed_sides_ok(entry->name, src_whole, entry->dst_dtype, dst, entry->dst_dtype, error))
        return FALSE;
    gint weight_index = (gint)refit->tensors->len;
    append(refit, entry->name, entry->src_dtype, entry->dst_dtype, src_whole, dst,
           entry->src_buffer, entry->dst_buffer, -1);
    append(refit, name, scale_dtype, scale_dtype, src_scales, dst_scales, NULL, buffer,
           weight_index);
    return TRUE;
}

RsRefit *
rs_refit_new_from_model(const RsModel *model, GPtrArray *src_layouts, GPtrArray *dst_layouts,
                        GError **error)
{
    return rs_refit_new_from_model_full(model, src_layouts, NULL, dst_layouts, NULL, NULL, error);
}

/* Whether @dtypes' destination dtype applies to @spec (see RsRefitDtypes). */
static gboolean
dtype_applies(const RsRefitDtypes *dtypes, const RsTensorSpec *spec)
{
    gboolean expert = rs_tensor_role_is_expert_weight(spec->role);
    gboolean linear = expert || spec->role == RS_ROLE_COLUMN_PARALLEL ||
                      spec->role == RS_ROLE_ROW_PARALLEL || spec->role == RS_ROLE_REPLICATED;
    /* Only a tensor of the same kind of values converts (integer buffers keep theirs). */
    RsDtypeKind kind = rs_dtype_get_kind(spec->dtype);
    if (kind != rs_dtype_get_kind(dtypes->dst_dtype) || kind == RS_DTYPE_KIND_INTEGER)
        return FALSE;
    switch (dtypes->dst_dtype) {
    case RS_DTYPE_FP8_E4M3:
        /* A weight matrix: 2 dims, or 3 for stacked experts [E, out, in] (their stacked
         * biases [E, out] are vectors and stay, as every bias does). */
        return linear && spec->n_dims >= (expert ? 3u : 2u);
    case RS_DTYPE_MXFP4:
        /* Stacked expert weights [E, out, in]; their biases [E, out] stay (gpt-oss's
         * checkpoint stores gate_up_proj_bias and down_proj_bias in BF16 beside the MXFP4
         * *_blocks, model-family-gpt-oss.c). */
        return expert && spec->n_dims >= 3;
    default:
        return TRUE;
    }
}

gboolean
rs_refit_check_dtypes(const RsModel *model, const RsRefitDtypes *dtypes, GError **error)
{
    if (dtypes == NULL || !dtypes->has_dst_dtype)
        return TRUE;
    guint n = rs_model_get_n_tensors(model), n_applied = 0, n_same_kind = 0;
    for (guint i = 0; i < n; i++) {
        const RsTensorSpec *spec = rs_model_get_tensor(model, i);
        n_same_kind += rs_dtype_get_kind(spec->dtype) == rs_dtype_get_kind(dtypes->dst_dtype);
        n_applied += dtype_applies(dtypes, spec);
    }
    if (n == 0 || n_applied > 0)
        return TRUE;
    RsDtypeKind dst_kind = rs_dtype_get_kind(dtypes->dst_dtype);
    if (dst_kind == RS_DTYPE_KIND_INTEGER || n_same_kind == 0) {
        /* Another kind of values (i8 or c64 for floating-point weights): the weights would
         * lose their values, as rs_refit_add_converted() says for one tensor. */
        RsDtypeKind model_kind = rs_dtype_get_kind(rs_model_get_dtype(model));
        if (model_kind == dst_kind)
            g_set_error(error, RS_REFIT_ERROR, RS_REFIT_ERROR_CONVERT,
                        "%s is %s: integer tensors keep their own dtype (another integer "
                        "dtype would change their values), so it converts none of %s's",
                        rs_dtype_get_name(dtypes->dst_dtype), rs_dtype_get_kind_name(dst_kind),
                        rs_model_get_name(model));
        else
            g_set_error(error, RS_REFIT_ERROR, RS_REFIT_ERROR_CONVERT,
                    "%s is %s: %s's %s weights would lose their values (%s to %s), and "
                    "the inference dtype converts only tensors of a floating-point dtype",
                    rs_dtype_get_name(dtypes->dst_dtype), rs_dtype_get_kind_name(dst_kind),
                    rs_model_get_name(model), rs_dtype_get_kind_name(model_kind),
                    rs_dtype_get_kind_name(model_kind), rs_dtype_get_kind_name(dst_kind));
        return FALSE;
    }
    /* A quantised format that applies to none of the tensors (MXFP4 on a dense model)
     * would serve the model as stored under the format's name. */
    g_set_error(error, RS_REFIT_ERROR, RS_REFIT_ERROR_CONVERT,
                "%s applies to %s, and %s has none: it would be served as stored (%s)",
                rs_dtype_get_name(dtypes->dst_dtype),
                dtypes->dst_dtype == RS_DTYPE_MXFP4
                    ? "routed expert weights only (as gpt-oss and Kimi-K3 store them)"
                    : "linear weights of 2 or more dims only",
                rs_model_get_name(model), rs_dtype_get_name(rs_model_get_dtype(model)));
    return FALSE;
}

RsDtype
rs_refit_get_served_dtype(const RsRefitDtypes *dtypes, const RsTensorSpec *spec)
{
    if (dtypes != NULL && dtypes->has_dst_dtype && dtype_applies(dtypes, spec))
        return dtypes->dst_dtype;
    return spec->dtype;
}

RsRefit *
rs_refit_new_from_model_full(const RsModel *model, GPtrArray *src_layouts, GPtrArray *src_buffers,
                             GPtrArray *dst_layouts, GPtrArray *dst_buffers,
                             const RsRefitDtypes *dtypes, GError **error)
{
    guint n = rs_model_get_n_tensors(model);
    g_return_val_if_fail(src_layouts->len == n && dst_layouts->len == n, NULL);
    g_return_val_if_fail(src_buffers == NULL || src_buffers->len == n, NULL);
    g_return_val_if_fail(dst_buffers == NULL || dst_buffers->len == n, NULL);
    if (!rs_refit_check_dtypes(model, dtypes, error))
        return NULL;
    g_autoptr(RsRefit) refit = rs_refit_new();
    for (guint i = 0; i < n; i++) {
        const RsTensorSpec *spec = rs_model_get_tensor(model, i);
        RsRefitEntry entry = {spec->name, spec->dtype, spec->dtype,
                              src_buffers ? g_ptr_array_index(src_buffers, i) : NULL,
                              dst_buffers ? g_ptr_array_index(dst_buffers, i) : NULL};
        entry.dst_dtype = rs_refit_get_served_dtype(dtypes, spec);
        if (!rs_refit_add_converted(refit, &entry, g_ptr_array_index(src_layouts, i),
                                    g_ptr_array_index(dst_layouts, i), error))
            return NULL;
    }
    return g_steal_pointer(&refit);
}

guint
rs_refit_get_n_tensors(const RsRefit *refit)
{
    return refit->tensors->len;
}

const RsRefitTensor *
rs_refit_get_tensor(const RsRefit *refit, guint index)
{
    g_return_val_if_fail(index < refit->tensors->len, NULL);
    return &g_array_index(refit->tensors, RsRefitTensor, index);
}

gint
rs_refit_find_tensor(const RsRefit *refit, const char *name)
{
    for (guint i = 0; i < refit->tensors->len; i++)
        if (strcmp(g_array_index(refit->tensors, RsRefitTensor, i).name, name) == 0)
            return (gint)i;
    return -1;
}

guint
rs_refit_tensor_get_elem_bytes(const RsRefitTensor *tensor)
{
    return rs_dtype_get_size_bytes(tensor->dtype);
}

guint64
rs_refit_tensor_get_n_bytes(const RsRefitTensor *tensor, guint64 n_elems)
{
    return rs_dtype_get_n_bytes(tensor->dtype, n_elems);
}

const char *
rs_refit_tensor_get_src_buffer(const RsRefitTensor *tensor)
{
    return tensor->src_buffer ? tensor->src_buffer : tensor->name;
}

const char *
rs_refit_tensor_get_dst_buffer(const RsRefitTensor *tensor)
{
    return tensor->dst_buffer ? tensor->dst_buffer : tensor->name;
}

guint64
rs_refit_get_size_bytes(const RsRefit *refit)
{
    guint64 total = 0;
    for (guint i = 0; i < refit->tensors->len; i++) {
        const RsRefitTensor *t = &g_array_index(refit->tensors, RsRefitTensor, i);
        total += rs_refit_tensor_get_n_bytes(t, rs_layout_get_n_elems(t->src));
    }
    return total;
}

static gint
compare_dtype_bytes(gconstpointer a, gconstpointer b, gpointer user_data)
{
    const guint64 *bytes = user_data;
    RsDtype x = *(const RsDtype *)a, y = *(const RsDtype *)b;
    if (bytes[x] != bytes[y])
        return bytes[x] > bytes[y] ? -1 : 1;
    return (gint)x - (gint)y;
}

char *
rs_refit_format_wire_dtypes(const RsRefit *refit)
{
    guint64 bytes[RS_DTYPE_N] = {0};
    gboolean present[RS_DTYPE_N] = {FALSE};
    for (guint i = 0; i < rs_refit_get_n_tensors(refit); i++) {
        const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
        bytes[t->dtype] += rs_refit_tensor_get_n_bytes(t, rs_layout_get_n_elems(t->src));
        present[t->dtype] = TRUE;
    }
    RsDtype order[RS_DTYPE_N];
    guint n = 0;
    for (guint d = 0; d < RS_DTYPE_N; d++)
        if (present[d])
            order[n++] = (RsDtype)d;
    if (n == 0)
        return g_strdup("no tensors");
    if (n == 1)
        return g_strdup(rs_dtype_get_name(order[0]));
    g_qsort_with_data(order, (gint)n, sizeof order[0], compare_dtype_bytes, bytes);
    GString *out = g_string_new(NULL);
    for (guint k = 0; k < n; k++) {
        /* A small part in the unit that shows it (DeepSeek-V3's f32 router biases read
         * "f32 0.00 GB"): GB from 0.01 GB, MB from 0.01 MB, else bytes. */
        double b = (double)bytes[order[k]];
        g_string_append_printf(out, "%s%s ", k ? " + " : "", rs_dtype_get_name(order[k]));
        if (b >= 1e7)
            g_string_append_printf(out, "%.2f GB", b / 1e9);
        else if (b >= 1e4)
            g_string_append_printf(out, "%.2f MB", b / 1e6);
        else
            g_string_append_printf(out, "%.0f B", b);
    }
    return g_string_free(out, FALSE);
}

/* --- fused buffer check --- */

typedef struct {
    guint tensor_idx;
    RsBox in_buffer; /* the box's extent in buffer coordinates */
} BufferPiece;

typedef struct {
    guint first_tensor;        /* the tensor that named the buffer first on this rank */
    gint64 shape[RS_MAX_DIMS]; /* its buffer shape */
    guint n_dims;
    GArray *pieces; /* BufferPiece */
} BufferUse;

static void
buffer_use_free(gpointer p)
{
    BufferUse *u = p;
    g_array_unref(u->pieces);
    g_free(u);
}

static gboolean
check_side(const RsRefit *refit, gboolean src_side, GError **error)
{
    const char *side = src_side ? "source" : "destination";
    /* Only buffers named by more than one tensor can collide. */
    g_autoptr(GHashTable) users = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < refit->tensors->len; i++) {
        const RsRefitTensor *t = &g_array_index(refit->tensors, RsRefitTensor, i);
        const char *buffer = src_side ? t->src_buffer : t->dst_buffer;
        if (buffer != NULL)
            g_hash_table_replace(
                users, (gpointer)buffer,
                GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(users, buffer)) + 1));
    }
    /* (buffer name, rank) → BufferUse */
    g_autoptr(GHashTable) uses =
        g_hash_table_new_full(g_str_hash, g_str_equal, g_free, buffer_use_free);
    for (guint i = 0; i < refit->tensors->len; i++) {
        const RsRefitTensor *t = &g_array_index(refit->tensors, RsRefitTensor, i);
        const char *buffer = src_side ? t->src_buffer : t->dst_buffer;
        if (buffer == NULL || GPOINTER_TO_UINT(g_hash_table_lookup(users, buffer)) < 2)
            continue;
        const RsLayout *layout = src_side ? t->src : t->dst;
        for (guint e = 0; e < rs_layout_get_n_ranks(layout); e++) {
            guint32 rank = rs_layout_get_rank(layout, e);
            g_autofree char *key = g_strdup_printf("%s@%u", buffer, rank);
            BufferUse *use = g_hash_table_lookup(uses, key);
            const gint64 *shape = rs_layout_get_buffer_shape(layout, e);
            if (use == NULL) {
                use = g_new0(BufferUse, 1);
                use->first_tensor = i;
                use->n_dims = t->n_dims;
                memcpy(use->shape, shape, t->n_dims * sizeof(gint64));
                use->pieces = g_array_new(FALSE, FALSE, sizeof(BufferPiece));
                g_hash_table_insert(uses, g_steal_pointer(&key), use);
            } else if (use->n_dims != t->n_dims ||
                       memcmp(use->shape, shape, t->n_dims * sizeof(gint64)) != 0) {
                g_set_error(
                    error, RS_REFIT_ERROR, RS_REFIT_ERROR_BUFFER,
                    "%s buffer %s on rank %u: %s and %s disagree on its shape", side, buffer, rank,
                    g_array_index(refit->tensors, RsRefitTensor, use->first_tensor).name, t->name);
                return FALSE;
            }
            guint n;
            const RsLocalBox *boxes = rs_layout_get_boxes(layout, e, &n);
            for (guint b = 0; b < n; b++) {
                gint64 position[RS_MAX_DIMS], hi[RS_MAX_DIMS];
                rs_local_box_get_position(layout, e, &boxes[b], position);
                for (guint d = 0; d < t->n_dims; d++)
                    hi[d] = position[d] + rs_box_get_count(&boxes[b].box, d);
                BufferPiece piece = {i, {0}};
                rs_box_init_range(&piece.in_buffer, t->n_dims, position, hi);
                for (guint k = 0; k < use->pieces->len; k++) {
                    const BufferPiece *other = &g_array_index(use->pieces, BufferPiece, k);
                    if (other->tensor_idx == i ||
                        !rs_box_intersect(&other->in_buffer, &piece.in_buffer, NULL))
                        continue;
                    g_autofree char *where = rs_box_format(&piece.in_buffer);
                    g_set_error(
                        error, RS_REFIT_ERROR, RS_REFIT_ERROR_BUFFER,
                        "%s buffer %s on rank %u: %s and %s overlap at buffer "
                        "positions %s",
                        side, buffer, rank,
                        g_array_index(refit->tensors, RsRefitTensor, other->tensor_idx).name,
                        t->name, where);
                    return FALSE;
                }
                g_array_append_val(use->pieces, piece);
            }
        }
    }
    return TRUE;
}

gboolean
rs_refit_check_buffers(const RsRefit *refit, GError **error)
{
    return check_side(refit, TRUE, error) && check_side(refit, FALSE, error);
}
