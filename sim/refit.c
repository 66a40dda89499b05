/* refit.c — a list of (tensor, source layout, destination layout). */
#include "sim/refit.h"

#include <string.h>

G_DEFINE_QUARK(rs-refit-error-quark, rs_refit_error)

struct _RsRefit {
    GArray *tensors; /* RsRefitTensor */
};

static void
refit_tensor_clear(gpointer p)
{
    RsRefitTensor *t = p;
    g_free(t->name);
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

gboolean
rs_refit_add_tensor(RsRefit *refit, const char *name, RsDtype dtype, RsLayout *src,
                    RsLayout *dst, GError **error)
{
    guint n_dims = rs_layout_get_n_dims(src);
    if (n_dims != rs_layout_get_n_dims(dst) ||
        memcmp(rs_layout_get_shape(src), rs_layout_get_shape(dst), n_dims * sizeof(gint64))) {
        g_set_error(error, RS_REFIT_ERROR, RS_REFIT_ERROR_MISMATCH,
                    "%s: source and destination layouts have different global shapes", name);
        return FALSE;
    }
    RsRefitTensor t = {0};
    t.name = g_strdup(name);
    t.n_dims = n_dims;
    memcpy(t.shape, rs_layout_get_shape(src), n_dims * sizeof(gint64));
    t.dtype = dtype;
    t.src = rs_layout_ref(src);
    t.dst = rs_layout_ref(dst);
    g_array_append_val(refit->tensors, t);
    return TRUE;
}

RsRefit *
rs_refit_new_from_model(const RsModel *model, GPtrArray *src_layouts, GPtrArray *dst_layouts,
                        GError **error)
{
    guint n = rs_model_get_n_tensors(model);
    g_return_val_if_fail(src_layouts->len == n && dst_layouts->len == n, NULL);
    g_autoptr(RsRefit) refit = rs_refit_new();
    for (guint i = 0; i < n; i++) {
        const RsTensorSpec *spec = rs_model_get_tensor(model, i);
        if (!rs_refit_add_tensor(refit, spec->name, spec->dtype, g_ptr_array_index(src_layouts, i),
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

guint
rs_refit_tensor_get_elem_bytes(const RsRefitTensor *tensor)
{
    return rs_dtype_get_size_bytes(tensor->dtype);
}

guint64
rs_refit_get_size_bytes(const RsRefit *refit)
{
    guint64 total = 0;
    for (guint i = 0; i < refit->tensors->len; i++) {
        const RsRefitTensor *t = &g_array_index(refit->tensors, RsRefitTensor, i);
        total += rs_layout_get_n_elems(t->src) * rs_refit_tensor_get_elem_bytes(t);
    }
    return total;
}
