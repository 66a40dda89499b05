/* convention.c — the convention registry, parameters and the shared resolver.
 *
 * A convention is a framework's class (convention-megatron.c, convention-fsdp2.c,
 * convention-vllm.c, convention-sglang.c hold one framework each, with the sources of its
 * rules; convention.h states them) plus the values of its parameters. This file parses
 * "megatron:tp=1,pp=2" specs, sets, merges and formats parameters, and resolves.
 *
 * Each convention has one function that maps a model tensor to a device mesh (a slice of
 * the GPU list with named dims) and one split per mesh dim, in a switch over the tensor's
 * role; a tensor the framework fuses with its siblings (q/k/v, gate/up, MLA's q_a/kv_a)
 * asks for the whole group to be laid out as one fused buffer. The shared code here builds
 * the layouts with rs_layout_new_split / rs_layout_new_fused_set, caching them by (ranks,
 * mesh, splits, shapes), so a 61-layer model builds a few dozen distinct layouts, not
 * thousands; then derives the block-quantisation scales' layouts from their weights'. */
#include "layout/convention-private.h"

#include <stdarg.h>
#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(rs-convention-error-quark, rs_convention_error)
/* clang-format on */

typedef struct {
    gboolean set;
    gint64 value;
    GArray *list; /* gint64, RS_PARAM_LIST only */
    char *where;  /* (nullable) where the value was given (rs_convention_set_where()) */
} ParamValue;

struct _RsConvention {
    const RsConventionClass *klass;
    ParamValue values[RS_CONVENTION_MAX_PARAMS];
    gboolean has_weight_dtype;
    RsDtype weight_dtype;
    const char *error_key; /* (nullable) the parameter the last failed resolve blamed */
};

static const RsConventionClass *lookup_class(const char *name);

/* --- parameters --- */

static gint
param_index(const RsConventionClass *klass, const char *key)
{
    for (gint i = 0; klass->params[i].name != NULL; i++)
        if (strcmp(klass->params[i].name, key) == 0)
            return i;
    return -1;
}

RsConvention *
rs_convention_new(const char *name, GError **error)
{
    const RsConventionClass *klass = lookup_class(name);
    if (klass == NULL) {
        g_autofree char *list = rs_conventions_list();
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_UNKNOWN,
                    "unknown convention \"%s\" (known: %s)", name, list);
        return NULL;
    }
    RsConvention *conv = g_new0(RsConvention, 1);
    conv->klass = klass;
    return conv;
}

void
rs_convention_free(RsConvention *conv)
{
    if (conv == NULL)
        return;
    for (guint i = 0; i < RS_CONVENTION_MAX_PARAMS; i++) {
        if (conv->values[i].list != NULL)
            g_array_unref(conv->values[i].list);
        g_free(conv->values[i].where);
    }
    g_free(conv);
}

RsConvention *
rs_convention_dup(const RsConvention *conv)
{
    RsConvention *copy = g_memdup2(conv, sizeof *conv);
    for (guint i = 0; i < RS_CONVENTION_MAX_PARAMS; i++) {
        if (conv->values[i].list != NULL)
            copy->values[i].list = g_array_copy(conv->values[i].list);
        copy->values[i].where = g_strdup(conv->values[i].where);
    }
    return copy;
}

static gboolean
unknown_param(const RsConvention *conv, const char *key, GError **error)
{
    GString *known = g_string_new(NULL);
    for (guint i = 0; conv->klass->params[i].name != NULL; i++)
        g_string_append_printf(known, "%s%s", i ? ", " : "", conv->klass->params[i].name);
    g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                "%s has no parameter \"%s\" (known: %s)", conv->klass->name, key, known->str);
    g_string_free(known, TRUE);
    return FALSE;
}

gboolean
rs_convention_set(RsConvention *conv, const char *key, gint64 value, GError **error)
{
    gint i = param_index(conv->klass, key);
    if (i < 0)
        return unknown_param(conv, key, error);
    RsParamKind kind = conv->klass->params[i].kind;
    if (kind == RS_PARAM_LIST) {
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                    "%s %s: expects a list of layer counts", conv->klass->name, key);
        return FALSE;
    }
    gint64 min = kind == RS_PARAM_BOOL ? 0 : 1, max = kind == RS_PARAM_BOOL ? 1 : (1 << 24);
    if (value < min || value > max) {
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                    kind == RS_PARAM_BOOL ? "%s %s=%" G_GINT64_FORMAT ": a switch is on or off"
                                          : "%s %s=%" G_GINT64_FORMAT
                                            ": must be an integer from 1 to 16777216",
                    conv->klass->name, key, value);
        return FALSE;
    }
    conv->values[i].set = TRUE;
    conv->values[i].value = value;
    g_clear_pointer(&conv->values[i].where, g_free);
    return TRUE;
}

gboolean
rs_convention_set_list(RsConvention *conv, const char *key, const gint64 *values, guint n_values,
                       GError **error)
{
    gint i = param_index(conv->klass, key);
    if (i < 0)
        return unknown_param(conv, key, error);
    if (conv->klass->params[i].kind != RS_PARAM_LIST) {
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                    "%s %s: expects one value, not a list", conv->klass->name, key);
        return FALSE;
    }
    for (guint k = 0; k < n_values; k++) {
        if (values[k] < 0 || values[k] > (1 << 24)) {
            g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                        "%s %s: entry %u is %" G_GINT64_FORMAT ", not a layer count",
                        conv->klass->name, key, k + 1, values[k]);
            return FALSE;
        }
    }
    ParamValue *v = &conv->values[i];
    if (v->list == NULL)
        v->list = g_array_new(FALSE, FALSE, sizeof(gint64));
    g_array_set_size(v->list, 0);
    g_array_append_vals(v->list, values, n_values);
    v->set = TRUE;
    g_clear_pointer(&v->where, g_free);
    return TRUE;
}

void
rs_convention_set_where(RsConvention *conv, const char *key, const char *where)
{
    gint i = param_index(conv->klass, key);
    g_return_if_fail(i >= 0);
    g_free(conv->values[i].where);
    conv->values[i].where = g_strdup(where);
}

const char *
rs_convention_get_where(const RsConvention *conv, const char *key)
{
    gint i = key != NULL ? param_index(conv->klass, key) : -1;
    return i >= 0 && conv->values[i].set ? conv->values[i].where : NULL;
}

const char *
rs_convention_get_error_key(const RsConvention *conv)
{
    return conv->error_key;
}

/* Parses one value text for @key: an integer, a switch word, or a comma list. */
static gboolean
set_from_text(RsConvention *conv, const char *spec, const char *key, const char *text,
              GError **error)
{
    gint i = param_index(conv->klass, key);
    if (i < 0)
        return unknown_param(conv, key, error);
    switch (conv->klass->params[i].kind) {
    case RS_PARAM_BOOL: {
        static const char *const on[] = {"on", "true", "yes", NULL};
        static const char *const off[] = {"off", "false", "no", NULL};
        if (text == NULL || g_strv_contains(on, text))
            return rs_convention_set(conv, key, 1, error);
        if (g_strv_contains(off, text))
            return rs_convention_set(conv, key, 0, error);
        gint64 number;
        if (g_ascii_string_to_signed(text, 10, G_MININT64, G_MAXINT64, &number, NULL)) {
            /* ep=1 is a size of 1 (no expert parallelism) in megatron and sglang, and was
             * "on" here: a number is refused rather than read either way. */
            g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                        "\"%s\": %s=%s: %s is a switch, on or off, not a size (give %s or "
                        "%s=off)",
                        spec, key, text, key, key, key);
            return FALSE;
        }
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                    "\"%s\": %s=%s is not on or off", spec, key, text);
        return FALSE;
    }
    case RS_PARAM_INT: {
        gint64 value;
        if (text == NULL ||
            !g_ascii_string_to_signed(text, 10, G_MININT64, G_MAXINT64, &value, NULL)) {
            g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                        text ? "\"%s\": %s=%s is not an integer"
                             : "\"%s\": expected key=value, got \"%s\"",
                        spec, key, text);
            return FALSE;
        }
        if (value < 1 || value > (1 << 24)) {
            g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                        "\"%s\": %s=%s must be an integer from 1 to %d", spec, key, text, 1 << 24);
            return FALSE;
        }
        return rs_convention_set(conv, key, value, error);
    }
    case RS_PARAM_LIST: {
        g_autoptr(GArray) values = g_array_new(FALSE, FALSE, sizeof(gint64));
        g_auto(GStrv) items = g_strsplit(text ? text : "", ",", -1);
        for (guint k = 0; items[k] != NULL; k++) {
            gint64 value;
            if (!g_ascii_string_to_signed(g_strstrip(items[k]), 10, 0, 1 << 24, &value, NULL)) {
                g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                            "\"%s\": %s: \"%s\" is not a layer count", spec, key, items[k]);
                return FALSE;
            }
            g_array_append_val(values, value);
        }
        return rs_convention_set_list(conv, key, (const gint64 *)values->data, values->len, error);
    }
    }
    return FALSE;
}

RsConvention *
rs_convention_parse(const char *spec, GError **error)
{
    const char *colon = strchr(spec, ':');
    g_autofree char *name = colon ? g_strndup(spec, (gsize)(colon - spec)) : g_strdup(spec);
    g_strstrip(name);
    g_autoptr(RsConvention) conv = rs_convention_new(name, error);
    if (conv == NULL)
        return NULL;
    if (colon == NULL || colon[1] == '\0')
        return g_steal_pointer(&conv);
    /* Items are comma-separated; a list value swallows the items without '=' after it. */
    g_auto(GStrv) items = g_strsplit(colon + 1, ",", -1);
    /* A parameter given twice is refused rather than the last one winning. */
    guint64 seen = 0;
    for (guint i = 0; items[i] != NULL; i++) {
        char *eq = strchr(items[i], '=');
        char *key = items[i], *text = NULL;
        if (eq != NULL) {
            *eq = '\0';
            text = g_strstrip(eq + 1);
        }
        g_strstrip(key);
        gint p = param_index(conv->klass, key);
        if (p >= 0 && p < 64) {
            if (seen & (G_GUINT64_CONSTANT(1) << p)) {
                g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                            "\"%s\": %s given twice", spec, key);
                return NULL;
            }
            seen |= G_GUINT64_CONSTANT(1) << p;
        }
        if (p >= 0 && conv->klass->params[p].kind == RS_PARAM_LIST && text != NULL) {
            g_autoptr(GString) joined = g_string_new(text);
            while (items[i + 1] != NULL && strchr(items[i + 1], '=') == NULL &&
                   param_index(conv->klass, g_strstrip(items[i + 1])) < 0) {
                g_string_append_printf(joined, ",%s", items[i + 1]);
                i++;
            }
            if (!set_from_text(conv, spec, key, joined->str, error))
                return NULL;
            continue;
        }
        if (text == NULL && (p < 0 || conv->klass->params[p].kind != RS_PARAM_BOOL)) {
            if (p < 0 && *key != '\0') {
                unknown_param(conv, key, error);
                return NULL;
            }
            g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                        "\"%s\": expected key=value, got \"%s\"", spec, key);
            return NULL;
        }
        if (!set_from_text(conv, spec, key, text, error))
            return NULL;
    }
    return g_steal_pointer(&conv);
}

gboolean
rs_convention_set_text(RsConvention *conv, const char *key, const char *text, GError **error)
{
    g_autofree char *spec = g_strdup_printf("%s=%s", key, text ? text : "");
    return set_from_text(conv, spec, key, text, error);
}

gboolean
rs_convention_has_param(const RsConvention *conv, const char *key)
{
    return param_index(conv->klass, key) >= 0;
}

gboolean
rs_convention_param_is_list(const RsConvention *conv, const char *key)
{
    gint i = param_index(conv->klass, key);
    return i >= 0 && conv->klass->params[i].kind == RS_PARAM_LIST;
}

gboolean
rs_convention_param_is_switch(const RsConvention *conv, const char *key)
{
    gint i = param_index(conv->klass, key);
    return i >= 0 && conv->klass->params[i].kind == RS_PARAM_BOOL;
}

void
rs_convention_merge(RsConvention **conv, const RsConvention *overrides)
{
    if (*conv == NULL || (*conv)->klass != overrides->klass) {
        rs_convention_free(*conv);
        *conv = rs_convention_dup(overrides);
        return;
    }
    for (guint i = 0; i < RS_CONVENTION_MAX_PARAMS; i++) {
        const ParamValue *v = &overrides->values[i];
        if (!v->set)
            continue;
        if (v->list != NULL)
            rs_convention_set_list(*conv, overrides->klass->params[i].name,
                                   (const gint64 *)v->list->data, v->list->len, NULL);
        else
            rs_convention_set(*conv, overrides->klass->params[i].name, v->value, NULL);
    }
}

const char *
rs_convention_get_name(const RsConvention *conv)
{
    return conv->klass->name;
}

gint64
rs_convention_get(const RsConvention *conv, const char *key)
{
    gint i = param_index(conv->klass, key);
    return i < 0 || !conv->values[i].set ? 0 : conv->values[i].value;
}

const gint64 *
rs_convention_get_list(const RsConvention *conv, const char *key, guint *n_out)
{
    gint i = param_index(conv->klass, key);
    *n_out = 0;
    if (i < 0 || !conv->values[i].set || conv->values[i].list == NULL)
        return NULL;
    *n_out = conv->values[i].list->len;
    return (const gint64 *)conv->values[i].list->data;
}

gint64
rs_convention_get_or(const RsConvention *conv, const char *key, gint64 fallback)
{
    gint64 v = rs_convention_get(conv, key);
    return v ? v : fallback;
}

void
rs_convention_set_resolved(RsConvention *conv, const char *key, gint64 value)
{
    gint i = param_index(conv->klass, key);
    g_return_if_fail(i >= 0);
    conv->values[i].set = TRUE;
    conv->values[i].value = value;
}

char *
rs_convention_format(const RsConvention *conv)
{
    GString *s = g_string_new(conv->klass->name);
    for (guint i = 0; conv->klass->params[i].name != NULL; i++) {
        const ParamValue *v = &conv->values[i];
        if (!v->set)
            continue;
        const char *key = conv->klass->params[i].name;
        switch (conv->klass->params[i].kind) {
        case RS_PARAM_INT:
            g_string_append_printf(s, " %s=%" G_GINT64_FORMAT, key, v->value);
            break;
        case RS_PARAM_BOOL:
            if (v->value)
                g_string_append_printf(s, " %s", key);
            break;
        case RS_PARAM_LIST:
            g_string_append_printf(s, " %s=", key);
            for (guint k = 0; v->list != NULL && k < v->list->len; k++)
                g_string_append_printf(s, "%s%" G_GINT64_FORMAT, k ? "," : "",
                                       g_array_index(v->list, gint64, k));
            break;
        }
    }
    return g_string_free(s, FALSE);
}

void
rs_convention_set_weight_dtype(RsConvention *conv, const RsDtype *dtype)
{
    conv->has_weight_dtype = dtype != NULL;
    conv->weight_dtype = dtype != NULL ? *dtype : RS_DTYPE_BF16;
}

gboolean
rs_convention_get_weight_dtype(const RsConvention *conv, RsDtype *dtype_out)
{
    if (conv->has_weight_dtype)
        *dtype_out = conv->weight_dtype;
    return conv->has_weight_dtype;
}

const char *
rs_convention_get_derived_key(const RsConvention *conv)
{
    return conv->klass->derived_key;
}

guint64
rs_convention_get_world_size(const RsConvention *conv)
{
    return conv->klass->world_size(conv);
}

/* --- mesh choices --- */

void
rs_mesh_choice_init(RsMeshChoice *c, const guint32 *ranks, guint n_dims, const guint *sizes,
                    const char *const *names)
{
    memset(c, 0, sizeof *c);
    c->ranks = ranks;
    c->n_dims = n_dims;
    for (guint m = 0; m < n_dims; m++) {
        c->sizes[m] = sizes[m];
        c->names[m] = names[m];
        c->splits[m] = rs_split_placement((RsPlacement){RS_PLACEMENT_REPLICATE, 0, 0});
    }
}

void
rs_mesh_choice_shard(RsMeshChoice *c, guint mesh_dim, gint tensor_dim)
{
    c->splits[mesh_dim] = rs_split_placement((RsPlacement){RS_PLACEMENT_SHARD, tensor_dim, 0});
}

void
rs_mesh_choice_padded(RsMeshChoice *c, guint mesh_dim, gint tensor_dim, gint64 multiple)
{
    RsSplit s;
    memset(&s, 0, sizeof s);
    s.kind = RS_SPLIT_PADDED;
    s.dim = tensor_dim;
    s.multiple = multiple;
    c->splits[mesh_dim] = s;
}

void
rs_mesh_choice_balanced(RsMeshChoice *c, guint mesh_dim, gint tensor_dim)
{
    RsSplit s;
    memset(&s, 0, sizeof s);
    s.kind = RS_SPLIT_BALANCED;
    s.dim = tensor_dim;
    c->splits[mesh_dim] = s;
}

/* The number of segments of a fusion group. */
static guint
fuse_n_segments(RsFuseKind kind)
{
    switch (kind) {
    case RS_FUSE_QKV:
        return 3;
    case RS_FUSE_GATE_UP:
    case RS_FUSE_MLA_A:
        return 2;
    case RS_FUSE_GATE_UP_INTERLEAVED:
        return 1;
    case RS_FUSE_NONE:
        return 0;
    }
    return 0;
}

/* Whether every segment of @index's group is in the model (a layer range keeps whole
 * layers, so they normally are). */
gboolean
rs_fuse_group_is_complete(const RsModel *model, guint index)
{
    const RsTensorSpec *t = rs_model_get_tensor(model, index);
    guint n = fuse_n_segments(t->fuse);
    if (n == 0)
        return FALSE;
    for (guint s = 0; s < n; s++)
        if (rs_model_find_fuse_sibling(model, index, s) < 0)
            return FALSE;
    return TRUE;
}

/* Makes @c lay out @index's group fused along @fuse_dim, with a FUSED split of @kind on
 * @mesh_dim (or no split when @mesh_dim is G_MAXUINT: concatenated whole). The segment
 * lengths are the group's extents along @fuse_dim. */
void
rs_mesh_choice_fuse(RsMeshChoice *c, const RsModel *model, guint index, guint fuse_dim,
                    guint mesh_dim, RsFusionKind kind, gint64 unit, const char *suffix)
{
    const RsTensorSpec *t = rs_model_get_tensor(model, index);
    c->fused = TRUE;
    c->fuse_dim = fuse_dim;
    c->buffer_suffix = suffix;
    if (mesh_dim == G_MAXUINT)
        return;
    RsSplit s;
    memset(&s, 0, sizeof s);
    s.kind = RS_SPLIT_FUSED;
    s.dim = (gint)fuse_dim;
    s.fusion.kind = kind;
    s.fusion.unit = unit;
    s.fusion.n_segments = fuse_n_segments(t->fuse);
    for (guint seg = 0; seg < s.fusion.n_segments; seg++) {
        gint sib = rs_model_find_fuse_sibling(model, index, seg);
        s.fusion.segment_len[seg] = rs_model_get_tensor(model, (guint)sib)->shape[fuse_dim];
    }
    c->splits[mesh_dim] = s;
}

void
rs_mesh_choice_segments(RsMeshChoice *c, const RsTensorSpec *t, guint mesh_dim)
{
    g_return_if_fail(t->n_segments >= 1 && t->n_segments <= RS_MAX_SEGMENTS);
    RsSplit s;
    memset(&s, 0, sizeof s);
    s.kind = RS_SPLIT_FUSED;
    s.dim = (gint)t->segment_dim;
    s.fusion.kind = RS_FUSION_CONCAT;
    s.fusion.unit = 1;
    s.fusion.n_segments = t->n_segments;
    for (guint seg = 0; seg < t->n_segments; seg++)
        s.fusion.segment_len[seg] = t->segments[seg];
    c->splits[mesh_dim] = s;
}

static guint64
hash_ranks(const guint32 *ranks, guint n)
{
    guint64 h = 1469598103934665603ull;
    for (guint i = 0; i < n; i++)
        h = (h ^ ranks[i]) * 1099511628211ull;
    return h;
}

static guint
choice_n_ranks(const RsMeshChoice *c)
{
    guint n = 1;
    for (guint m = 0; m < c->n_dims; m++)
        n *= c->sizes[m];
    return n;
}

static RsMesh *
choice_make_mesh(const RsMeshChoice *c, const guint32 *ranks, GError **error)
{
    return rs_mesh_new(c->n_dims, c->sizes, c->names, ranks, choice_n_ranks(c), error);
}

/* The cache key of @c for @members: the ranks (and copy ranks), the mesh sizes and splits,
 * the fuse dim and the members' shapes. */
static char *
choice_cache_key(const RsResolver *r, const RsMeshChoice *c, const guint *members, guint n_members)
{
    guint n = choice_n_ranks(c);
    GString *key = g_string_new(NULL);
    g_string_append_printf(key, "%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT "|",
                           hash_ranks(c->ranks, n),
                           c->copy_ranks ? hash_ranks(c->copy_ranks, n) : 0);
    for (guint m = 0; m < c->n_dims; m++) {
        g_autofree char *split = rs_split_format(&c->splits[m]);
        g_string_append_printf(key, "%u:%s,", c->sizes[m], split);
    }
    g_string_append_printf(key, "|%u|", c->fused ? c->fuse_dim : G_MAXUINT);
    for (guint i = 0; i < n_members; i++) {
        const RsTensorSpec *t = rs_model_get_tensor(r->model, members[i]);
        for (guint d = 0; d < t->n_dims; d++)
            g_string_append_printf(key, "%" G_GINT64_FORMAT ",", t->shape[d]);
        g_string_append_c(key, ';');
    }
    return g_string_free(key, FALSE);
}

/* Builds @c's layouts of @members over one copy's @ranks and appends them to @out (one
 * per member: a fused set, or the single tensor's split). */
static gboolean
build_copy(const RsResolver *r, const RsMeshChoice *c, const guint32 *ranks, const guint *members,
           guint n_members, GPtrArray *out, GError **error)
{
    const RsTensorSpec *first = rs_model_get_tensor(r->model, members[0]);
    g_autoptr(RsMesh) mesh = choice_make_mesh(c, ranks, error);
    if (mesh == NULL)
        return FALSE;
    if (c->fused) {
        gint64 extents[RS_MAX_SEGMENTS];
        RsLayout *set[RS_MAX_SEGMENTS];
        for (guint i = 0; i < n_members; i++)
            extents[i] = rs_model_get_tensor(r->model, members[i])->shape[c->fuse_dim];
        if (!rs_layout_new_fused_set(first->n_dims, first->shape, n_members, c->fuse_dim, extents,
                                     mesh, c->splits, c->n_dims, set, error))
            return FALSE;
        for (guint i = 0; i < n_members; i++)
            g_ptr_array_add(out, set[i]);
        return TRUE;
    }
    RsLayout *l =
        rs_layout_new_split(first->n_dims, first->shape, mesh, c->splits, c->n_dims, error);
    if (l == NULL)
        return FALSE;
    g_ptr_array_add(out, l);
    return TRUE;
}

/* Builds the layouts of @c for @members, one per member: over c->ranks, or the union of
 * that and the same over c->copy_ranks. Returns: (transfer full), or NULL. */
static GPtrArray *
build_layouts(const RsResolver *r, const RsMeshChoice *c, const guint *members, guint n_members,
              GError **error)
{
    g_autoptr(GPtrArray) fresh = g_ptr_array_new_with_free_func((GDestroyNotify)rs_layout_unref);
    g_autoptr(GPtrArray) copy0 = g_ptr_array_new_with_free_func((GDestroyNotify)rs_layout_unref);
    g_autoptr(GPtrArray) copy1 = g_ptr_array_new_with_free_func((GDestroyNotify)rs_layout_unref);
    if (!build_copy(r, c, c->ranks, members, n_members, copy0, error))
        return NULL;
    if (c->copy_ranks == NULL) {
        for (guint i = 0; i < copy0->len; i++)
            g_ptr_array_add(fresh, rs_layout_ref(g_ptr_array_index(copy0, i)));
        return g_steal_pointer(&fresh);
    }
    if (!build_copy(r, c, c->copy_ranks, members, n_members, copy1, error))
        return NULL;
    for (guint i = 0; i < copy0->len; i++) {
        RsLayout *both[2] = {g_ptr_array_index(copy0, i), g_ptr_array_index(copy1, i)};
        RsLayout *u = rs_layout_new_union(both, 2, error);
        if (u == NULL)
            return NULL;
        g_ptr_array_add(fresh, u);
    }
    return g_steal_pointer(&fresh);
}

/* Gives each of @members its layout from @built and, when @c names a buffer, its fused
 * buffer name (group + suffix). */
static void
store_layouts(RsResolver *r, const RsMeshChoice *c, const guint *members, guint n_members,
              GPtrArray *built)
{
    for (guint i = 0; i < n_members; i++) {
        g_ptr_array_index(r->layouts, members[i]) = rs_layout_ref(g_ptr_array_index(built, i));
        if (c->buffer_suffix != NULL) {
            const RsTensorSpec *t = rs_model_get_tensor(r->model, members[i]);
            const char *group = t->fuse_group ? t->fuse_group : t->name;
            g_free(g_ptr_array_index(r->buffers, members[i]));
            g_ptr_array_index(r->buffers, members[i]) =
                g_strdup_printf("%s%s", group, c->buffer_suffix);
        }
    }
}

/* Builds the layout(s) of @c for the @n_members tensors @members (or takes them from the
 * cache) and stores them. */
static gboolean
build_choice(RsResolver *r, const RsMeshChoice *c, const guint *members, guint n_members,
             GError **error)
{
    g_autofree char *key = choice_cache_key(r, c, members, n_members);
    GPtrArray *built = g_hash_table_lookup(r->cache, key);
    if (built == NULL) {
        built = build_layouts(r, c, members, n_members, error);
        if (built == NULL)
            return FALSE;
        g_hash_table_insert(r->cache, g_steal_pointer(&key), built);
    }
    store_layouts(r, c, members, n_members, built);
    return TRUE;
}

/* Lays out tensor @index (and its fusion group) as @c says. */
static gboolean
resolve_tensor(RsResolver *r, guint index, const RsMeshChoice *c, GError **error)
{
    const RsTensorSpec *t = rs_model_get_tensor(r->model, index);
    guint members[RS_MAX_SEGMENTS] = {index};
    guint n_members = 1;
    if (c->fused && fuse_n_segments(t->fuse) > 1) {
        n_members = fuse_n_segments(t->fuse);
        for (guint s = 0; s < n_members; s++)
            members[s] = (guint)rs_model_find_fuse_sibling(r->model, index, s);
    }
    g_autoptr(GError) local = NULL;
    if (!build_choice(r, c, members, n_members, &local)) {
        /* The layout could not be built for this tensor under these sizes. */
        gboolean model_fault = local->domain == RS_LAYOUT_ERROR;
        g_autofree char *buffer =
            c->fused && c->buffer_suffix
                ? g_strdup_printf(" (fused as %s%s)", t->fuse_group ? t->fuse_group : t->name,
                                  c->buffer_suffix)
                : g_strdup("");
        g_set_error(error, RS_CONVENTION_ERROR,
                    model_fault ? RS_CONVENTION_ERROR_MODEL : RS_CONVENTION_ERROR_PARAM,
                    "%s: %s%s: %s", r->desc, t->name, buffer, local->message);
        return FALSE;
    }
    return TRUE;
}

gboolean
rs_resolver_lay_out_all(RsResolver *r, RsConventionChooseFunc choose, GError **error)
{
    for (guint i = 0; i < rs_model_get_n_tensors(r->model); i++) {
        if (g_ptr_array_index(r->layouts, i) != NULL)
            continue; /* laid out with its fusion group */
        RsMeshChoice c;
        if (!choose(r, i, &c, error) || !resolve_tensor(r, i, &c, error))
            return FALSE;
    }
    return TRUE;
}

gboolean
rs_resolver_fail_model(RsResolver *r, const char *key, GError **error, const char *format, ...)
{
    r->conv->error_key = key;
    va_list args;
    va_start(args, format);
    g_autofree char *text = g_strdup_vprintf(format, args);
    va_end(args);
    g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_MODEL, "%s: %s", r->desc, text);
    return FALSE;
}

gint64
rs_convention_product(guint n, const gint64 *sizes)
{
    gint64 product = 1;
    for (guint i = 0; i < n; i++)
        if (__builtin_mul_overflow(product, sizes[i], &product))
            return G_MAXINT64;
    return product;
}

/* "= 256" or "= more than 2^63" for a saturated rs_convention_product(). */
static char *
format_product(gint64 product)
{
    return product == G_MAXINT64 ? g_strdup("more than 2^63")
                                 : g_strdup_printf("%" G_GINT64_FORMAT, product);
}

gboolean
rs_convention_check_world(RsConvention *conv, const char *product_text, gint64 product,
                          guint n_gpus, GError **error)
{
    if (product != (gint64)n_gpus) {
        g_autofree char *desc = rs_convention_format(conv);
        g_autofree char *value = format_product(product);
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_WORLD_SIZE,
                    "%s: %s = %s ranks, but %u GPUs are given", desc, product_text, value, n_gpus);
        return FALSE;
    }
    return TRUE;
}

/* Derives a missing number of model copies from the GPU count. */
gboolean
rs_convention_derive_size(RsConvention *conv, gint64 model_parallel, const char *product_text,
                          guint n_gpus, GError **error)
{
    const char *key = conv->klass->derived_key;
    if (rs_convention_get(conv, key) == 0) {
        if (model_parallel > (gint64)n_gpus || n_gpus % model_parallel != 0) {
            g_autofree char *desc = rs_convention_format(conv);
            g_autofree char *value = format_product(model_parallel);
            g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_WORLD_SIZE,
                        "%s: %s = %s does not divide the %u GPUs given", desc, product_text, value,
                        n_gpus);
            return FALSE;
        }
        rs_convention_set_resolved(conv, key, n_gpus / model_parallel);
    }
    return TRUE;
}

/* Checks that tp divides the heads of a per-head projection that is not fused. */
gboolean
rs_resolver_check_heads(RsResolver *r, const RsTensorSpec *t, gint64 tp, GError **error)
{
    if (t->n_heads != 0 && t->n_heads % tp != 0)
        return rs_resolver_fail_model(
            r, "tp", error, "tp=%" G_GINT64_FORMAT " does not divide the %u %sheads of %s", tp,
            t->n_heads, t->kv_heads ? "key/value " : "attention ", t->name);
    return TRUE;
}

/* Checks every per-head projection against @tp before any layout is built, so that the
 * heads, the root of most incompatibilities, are what the user is told about. With
 * @kv_replicas a KV head count that tp is a multiple of is fine (inference engines
 * replicate KV heads); only tensors @only_attention selects when it is TRUE. */
gboolean
rs_resolver_check_all_heads(RsResolver *r, gint64 tp, gboolean kv_replicas, gboolean only_attention,
                            GError **error)
{
    for (guint i = 0; i < rs_model_get_n_tensors(r->model); i++) {
        const RsTensorSpec *t = rs_model_get_tensor(r->model, i);
        if (t->n_heads == 0 || t->n_heads % tp == 0)
            continue;
        if (only_attention && strstr(t->name, ".self_attn.") == NULL)
            continue;
        if (kv_replicas && t->kv_heads && tp % t->n_heads == 0)
            continue;
        if (kv_replicas)
            return rs_resolver_fail_model(
                r, "tp", error, "tp=%" G_GINT64_FORMAT " and the %u %sheads of %s: %s", tp,
                t->n_heads, t->kv_heads ? "key/value " : "attention ", t->name,
                t->kv_heads ? "neither divides the other" : "tp must divide the head count");
        return rs_resolver_fail_model(
            r, "tp", error, "tp=%" G_GINT64_FORMAT " does not divide the %u %sheads of %s", tp,
            t->n_heads, t->kv_heads ? "key/value " : "attention ", t->name);
    }
    return TRUE;
}

/* --- pipeline stages --- */

void
rs_pipeline_clear(RsPipeline *p)
{
    g_free(p->stage_of);
    if (p->layer_text != NULL) {
        for (guint s = 0; s < p->pp; s++)
            g_string_free(p->layer_text[s], TRUE);
        g_free(p->layer_text);
    }
}

guint
rs_pipeline_get_stage(const RsPipeline *p, gint layer)
{
    if (layer < 0)
        return 0;
    if ((guint)layer >= p->n_layers)
        return p->pp - 1;
    return p->stage_of[layer];
}

/* Assigns @counts[v] consecutive layers to virtual stage v, which runs on stage v mod pp. */
void
rs_pipeline_from_counts(RsPipeline *p, const gint64 *counts, guint n_virtual)
{
    p->stage_of = g_new0(guint, MAX(p->n_layers, 1));
    p->layer_text = g_new0(GString *, p->pp);
    for (guint s = 0; s < p->pp; s++)
        p->layer_text[s] = g_string_new(NULL);
    guint layer = 0;
    for (guint v = 0; v < n_virtual; v++) {
        guint stage = v % p->pp;
        GString *text = p->layer_text[stage];
        if (counts[v] > 0) {
            g_string_append_printf(text, "%s%u-%u", text->len ? ", " : "", layer,
                                   layer + (guint)counts[v] - 1);
        }
        for (gint64 k = 0; k < counts[v]; k++)
            p->stage_of[layer++] = stage;
    }
}

char *
rs_pipeline_format_stage(const RsPipeline *p, const RsModel *model, guint stage,
                         gboolean extras)
{
    g_autofree guint8 *present = g_new0(guint8, MAX(p->n_layers, 1));
    gboolean embedding = FALSE, head = FALSE;
    for (guint i = 0; i < rs_model_get_n_tensors(model); i++) {
        gint layer = rs_model_get_tensor(model, i)->layer;
        if (layer < 0)
            embedding = TRUE;
        else if ((guint)layer >= p->n_layers)
            head = TRUE;
        else
            present[layer] = 1;
    }
    GString *s = g_string_new("layers ");
    gsize start = s->len;
    for (guint l = 0; l < p->n_layers;) {
        if (!present[l] || p->stage_of[l] != stage) {
            l++;
            continue;
        }
        guint end = l;
        while (end + 1 < p->n_layers && present[end + 1] && p->stage_of[end + 1] == stage)
            end++;
        g_string_append_printf(s, "%s%u-%u", s->len > start ? ", " : "", l, end);
        l = end + 1;
    }
    if (s->len == start)
        g_string_append(s, "none");
    if (extras && stage == 0 && embedding)
        g_string_append(s, " + embedding");
    if (extras && stage + 1 == p->pp && head)
        g_string_append(s, rs_model_has_mtp(model) ? " + final norm, head, MTP"
                                                   : " + final norm, head");
    return g_string_free(s, FALSE);
}

gboolean
rs_resolver_check_pp(RsResolver *r, gint64 pp, GError **error)
{
    guint n_layers = rs_model_get_n_layers(r->model);
    if (pp > n_layers)
        return rs_resolver_fail_model(r, "pp", error,
                                      "pp=%" G_GINT64_FORMAT " exceeds the %u layers of %s", pp,
                                      n_layers, rs_model_get_name(r->model));
    return TRUE;
}

gboolean
rs_convention_is_embedding(const RsTensorSpec *t)
{
    return t->role == RS_ROLE_VOCAB_PARALLEL && t->layer < 0;
}

/* --- entry points --- */

void
rs_convention_result_clear(RsConventionResult *result)
{
    if (result->layouts != NULL)
        g_ptr_array_unref(result->layouts);
    if (result->buffers != NULL)
        g_ptr_array_unref(result->buffers);
    g_free(result->summary);
    memset(result, 0, sizeof *result);
}

/* Block-quantisation scales follow their weight: the weight's layout in block
 * coordinates. A weight split that cuts a block is refused, as vLLM refuses it (a scale
 * covers one whole block; two ranks holding parts of a block would each need it whole).
 * Layers sharing a weight layout share the derived one. */
static gboolean
derive_block_scales(RsResolver *r, GError **error)
{
    g_autoptr(GHashTable) cache =
        g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)rs_layout_unref);
    for (guint i = 0; i < rs_model_get_n_tensors(r->model); i++) {
        const RsTensorSpec *t = rs_model_get_tensor(r->model, i);
        if (t->scale_of < 0)
            continue;
        RsLayout *weight = g_ptr_array_index(r->layouts, t->scale_of);
        GString *key = g_string_new(NULL);
        g_string_append_printf(key, "%p", (void *)weight);
        for (guint d = 0; d < t->n_dims; d++)
            g_string_append_printf(key, ",%" G_GINT64_FORMAT, t->scale_block[d]);
        RsLayout *derived = g_hash_table_lookup(cache, key->str);
        if (derived == NULL) {
            derived = rs_layout_new_blocked(weight, t->scale_block, FALSE, TRUE, error);
            if (derived == NULL) {
                g_prefix_error(error,
                               "%s: %s: ", r->desc ? r->desc : rs_convention_get_name(r->conv),
                               rs_model_get_tensor(r->model, (guint)t->scale_of)->name);
                g_string_free(key, TRUE);
                return FALSE;
            }
            g_hash_table_insert(cache, g_string_free(key, FALSE), derived);
        } else {
            g_string_free(key, TRUE);
        }
        RsLayout *old = g_ptr_array_index(r->layouts, i);
        g_ptr_array_index(r->layouts, i) = rs_layout_ref(derived);
        rs_layout_unref(old);
    }
    return TRUE;
}

gboolean
rs_convention_resolve_full(RsConvention *conv, const RsModel *model, const guint32 *gpus,
                           guint n_gpus, RsConventionResult *out, GError **error)
{
    memset(out, 0, sizeof *out);
    conv->error_key = NULL;
    if (n_gpus == 0) {
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_WORLD_SIZE, "%s: no GPUs given",
                    conv->klass->name);
        return FALSE;
    }
    guint n_tensors = rs_model_get_n_tensors(model);
    RsResolver r = {0};
    r.conv = conv;
    r.model = model;
    r.gpus = gpus;
    r.n_gpus = n_gpus;
    r.cache =
        g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_ptr_array_unref);
    r.layouts = g_ptr_array_new_full(n_tensors, (GDestroyNotify)rs_layout_unref);
    r.buffers = g_ptr_array_new_full(n_tensors, g_free);
    g_ptr_array_set_size(r.layouts, n_tensors);
    g_ptr_array_set_size(r.buffers, n_tensors);
    r.summary = g_string_new(NULL);
    gboolean ok = conv->klass->resolve(conv, &r, error);
    if (ok)
        ok = derive_block_scales(&r, error);
    g_hash_table_unref(r.cache);
    g_free(r.desc);
    if (!ok) {
        g_ptr_array_unref(r.layouts);
        g_ptr_array_unref(r.buffers);
        g_string_free(r.summary, TRUE);
        return FALSE;
    }
    out->layouts = r.layouts;
    out->buffers = r.buffers;
    out->summary = g_string_free(r.summary, FALSE);
    return TRUE;
}

gboolean
rs_convention_resolve(RsConvention *conv, const RsModel *model, const guint32 *gpus, guint n_gpus,
                      GPtrArray **layouts_out, char **summary_out, GError **error)
{
    RsConventionResult result;
    if (!rs_convention_resolve_full(conv, model, gpus, n_gpus, &result, error))
        return FALSE;
    *layouts_out = g_steal_pointer(&result.layouts);
    if (summary_out != NULL)
        *summary_out = g_steal_pointer(&result.summary);
    rs_convention_result_clear(&result);
    return TRUE;
}

/* --- the registry --- */

/* In the order rs_conventions_list() gives them: training frameworks first. */
static const RsConventionClass *const convention_classes[] = {
    &rs_convention_class_megatron,
    &rs_convention_class_fsdp2,
    &rs_convention_class_vllm,
    &rs_convention_class_sglang,
};

static const RsConventionClass *
lookup_class(const char *name)
{
    for (guint i = 0; i < G_N_ELEMENTS(convention_classes); i++)
        if (strcmp(name, convention_classes[i]->name) == 0)
            return convention_classes[i];
    return NULL;
}

char *
rs_conventions_list(void)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < G_N_ELEMENTS(convention_classes); i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", convention_classes[i]->name);
    return g_string_free(s, FALSE);
}
