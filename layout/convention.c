/* convention.c — megatron, fsdp2, vllm and sglang layouts (see convention.h for the rules
 * and their sources).
 *
 * Each convention has one function that maps a model tensor to a device mesh (a slice of
 * the GPU list with named dims) and one split per mesh dim, in a switch over the tensor's
 * role; a tensor the framework fuses with its siblings (q/k/v, gate/up, MLA's q_a/kv_a)
 * asks for the whole group to be laid out as one fused buffer. The shared code builds the
 * layouts with rs_layout_new_split / rs_layout_new_fused_set, caching them by (ranks,
 * mesh, splits, shapes), so a 61-layer model builds a few dozen distinct layouts, not
 * thousands. */
#include "layout/convention.h"

#include <stdarg.h>
#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(rs-convention-error-quark, rs_convention_error)
/* clang-format on */

#define MAX_PARAMS 10

typedef enum {
    PARAM_INT,  /* a size, >= 1 */
    PARAM_BOOL, /* a switch */
    PARAM_LIST, /* integers >= 0 */
} ParamKind;

typedef struct {
    const char *name;
    ParamKind kind;
} ParamSpec;

typedef struct _ConventionClass ConventionClass;

typedef struct {
    gboolean set;
    gint64 value;
    GArray *list; /* gint64, PARAM_LIST only */
} ParamValue;

struct _RsConvention {
    const ConventionClass *klass;
    ParamValue values[MAX_PARAMS];
};

/* The state one resolution shares between the common code and a convention. */
typedef struct _Resolver Resolver;

typedef gboolean (*ResolveFunc)(RsConvention *conv, Resolver *r, GError **error);

struct _ConventionClass {
    const char *name;
    ParamSpec params[MAX_PARAMS + 1]; /* terminated by a NULL name */
    ResolveFunc resolve;
};

static const ConventionClass *lookup_class(const char *name);

/* --- parameters --- */

static gint
param_index(const ConventionClass *klass, const char *key)
{
    for (gint i = 0; klass->params[i].name != NULL; i++)
        if (strcmp(klass->params[i].name, key) == 0)
            return i;
    return -1;
}

RsConvention *
rs_convention_new(const char *name, GError **error)
{
    const ConventionClass *klass = lookup_class(name);
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
    for (guint i = 0; i < MAX_PARAMS; i++)
        if (conv->values[i].list != NULL)
            g_array_unref(conv->values[i].list);
    g_free(conv);
}

RsConvention *
rs_convention_dup(const RsConvention *conv)
{
    RsConvention *copy = g_memdup2(conv, sizeof *conv);
    for (guint i = 0; i < MAX_PARAMS; i++)
        if (conv->values[i].list != NULL)
            copy->values[i].list = g_array_copy(conv->values[i].list);
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
    ParamKind kind = conv->klass->params[i].kind;
    if (kind == PARAM_LIST) {
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                    "%s %s: expects a list of layer counts", conv->klass->name, key);
        return FALSE;
    }
    gint64 min = kind == PARAM_BOOL ? 0 : 1, max = kind == PARAM_BOOL ? 1 : (1 << 24);
    if (value < min || value > max) {
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                    kind == PARAM_BOOL ? "%s %s=%" G_GINT64_FORMAT ": a switch is on or off"
                                       : "%s %s=%" G_GINT64_FORMAT
                                         ": must be an integer from 1 to 16777216",
                    conv->klass->name, key, value);
        return FALSE;
    }
    conv->values[i].set = TRUE;
    conv->values[i].value = value;
    return TRUE;
}

gboolean
rs_convention_set_list(RsConvention *conv, const char *key, const gint64 *values, guint n_values,
                       GError **error)
{
    gint i = param_index(conv->klass, key);
    if (i < 0)
        return unknown_param(conv, key, error);
    if (conv->klass->params[i].kind != PARAM_LIST) {
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
    return TRUE;
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
    case PARAM_BOOL: {
        static const char *const on[] = {"on", "true", "yes", "1", NULL};
        static const char *const off[] = {"off", "false", "no", "0", NULL};
        if (text == NULL || g_strv_contains(on, text))
            return rs_convention_set(conv, key, 1, error);
        if (g_strv_contains(off, text))
            return rs_convention_set(conv, key, 0, error);
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                    "\"%s\": %s=%s is not on or off", spec, key, text);
        return FALSE;
    }
    case PARAM_INT: {
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
                        "\"%s\": %s=%s must be an integer from 1 to %d", spec, key, text,
                        1 << 24);
            return FALSE;
        }
        return rs_convention_set(conv, key, value, error);
    }
    case PARAM_LIST: {
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
        if (p >= 0 && conv->klass->params[p].kind == PARAM_LIST && text != NULL) {
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
        if (text == NULL && (p < 0 || conv->klass->params[p].kind != PARAM_BOOL)) {
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
    return i >= 0 && conv->klass->params[i].kind == PARAM_LIST;
}

void
rs_convention_merge(RsConvention **conv, const RsConvention *overrides)
{
    if (*conv == NULL || (*conv)->klass != overrides->klass) {
        rs_convention_free(*conv);
        *conv = rs_convention_dup(overrides);
        return;
    }
    for (guint i = 0; i < MAX_PARAMS; i++) {
        const ParamValue *v = &overrides->values[i];
        if (!v->set)
            continue;
        if (v->list != NULL)
            rs_convention_set_list(*conv, overrides->klass->params[i].name,
                                   (const gint64 *)v->list->data, v->list->len, NULL);
        else
            (*conv)->values[i] = (ParamValue){TRUE, v->value, NULL};
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

static gint64
get_or(const RsConvention *conv, const char *key, gint64 fallback)
{
    gint64 v = rs_convention_get(conv, key);
    return v ? v : fallback;
}

static void
set_value(RsConvention *conv, const char *key, gint64 value)
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
        case PARAM_INT:
            g_string_append_printf(s, " %s=%" G_GINT64_FORMAT, key, v->value);
            break;
        case PARAM_BOOL:
            if (v->value)
                g_string_append_printf(s, " %s", key);
            break;
        case PARAM_LIST:
            g_string_append_printf(s, " %s=", key);
            for (guint k = 0; v->list != NULL && k < v->list->len; k++)
                g_string_append_printf(s, "%s%" G_GINT64_FORMAT, k ? "," : "",
                                       g_array_index(v->list, gint64, k));
            break;
        }
    }
    return g_string_free(s, FALSE);
}

guint64
rs_convention_get_world_size(const RsConvention *conv)
{
    const char *name = conv->klass->name;
    gint64 tp = get_or(conv, "tp", 1), dp = get_or(conv, "dp", 1);
    if (strcmp(name, "megatron") == 0)
        return (guint64)(tp * get_or(conv, "cp", 1) * get_or(conv, "pp", 1) * dp);
    if (strcmp(name, "fsdp2") == 0)
        return (guint64)(tp * dp * get_or(conv, "replicate", 1));
    if (strcmp(name, "vllm") == 0)
        return (guint64)(tp * dp * get_or(conv, "pp", 1));
    /* sglang */
    return (guint64)(rs_convention_get(conv, "dp-attention") ? tp : tp * dp);
}

/* --- the shared resolver --- */

struct _Resolver {
    RsConvention *conv;
    const RsModel *model;
    const guint32 *gpus;
    guint n_gpus;
    char *desc;         /* rs_convention_format() after sizes are derived */
    GHashTable *cache;  /* key → GPtrArray of RsLayout */
    GPtrArray *layouts; /* per model tensor, NULL until resolved */
    GPtrArray *buffers; /* per model tensor, char* or NULL */
    GString *summary;
    gpointer data; /* the convention's own state */
};

/* Where and how one tensor (or its fusion group) is laid out. */
typedef struct {
    const guint32 *ranks; /* the mesh's ranks, row-major */
    guint n_dims;
    guint sizes[RS_MAX_MESH_DIMS];
    const char *names[RS_MAX_MESH_DIMS];
    RsSplit splits[RS_MAX_MESH_DIMS];
    /* A second copy of the tensor on other ranks (a tied embedding on the last stage):
     * the same mesh shape and splits over these ranks; NULL when none. */
    const guint32 *copy_ranks;
    /* Lay out the tensor's fusion group as one buffer along fuse_dim, named
     * fuse_group + buffer_suffix; a tensor with no siblings may also get a buffer name. */
    gboolean fused;
    guint fuse_dim;
    const char *buffer_suffix;
} MeshChoice;

static void
choice_mesh(MeshChoice *c, const guint32 *ranks, guint n_dims, const guint *sizes,
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

static void
choice_shard(MeshChoice *c, guint mesh_dim, gint tensor_dim)
{
    c->splits[mesh_dim] = rs_split_placement((RsPlacement){RS_PLACEMENT_SHARD, tensor_dim, 0});
}

static void
choice_padded(MeshChoice *c, guint mesh_dim, gint tensor_dim, gint64 multiple)
{
    RsSplit s;
    memset(&s, 0, sizeof s);
    s.kind = RS_SPLIT_PADDED;
    s.dim = tensor_dim;
    s.multiple = multiple;
    c->splits[mesh_dim] = s;
}

static void
choice_balanced(MeshChoice *c, guint mesh_dim, gint tensor_dim)
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
static gboolean
group_complete(const RsModel *model, guint index)
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
static void
choice_fuse(MeshChoice *c, const RsModel *model, guint index, guint fuse_dim, guint mesh_dim,
            RsFusionKind kind, gint64 unit, const char *suffix)
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

static guint64
hash_ranks(const guint32 *ranks, guint n)
{
    guint64 h = 1469598103934665603ull;
    for (guint i = 0; i < n; i++)
        h = (h ^ ranks[i]) * 1099511628211ull;
    return h;
}

static guint
choice_n_ranks(const MeshChoice *c)
{
    guint n = 1;
    for (guint m = 0; m < c->n_dims; m++)
        n *= c->sizes[m];
    return n;
}

static RsMesh *
choice_make_mesh(const MeshChoice *c, const guint32 *ranks, GError **error)
{
    return rs_mesh_new(c->n_dims, c->sizes, c->names, ranks, choice_n_ranks(c), error);
}

/* Builds the layout(s) of @c for the @n_members tensors @members and stores them. */
static gboolean
build_choice(Resolver *r, const MeshChoice *c, const guint *members, guint n_members,
             GError **error)
{
    const RsTensorSpec *first = rs_model_get_tensor(r->model, members[0]);
    guint n = choice_n_ranks(c);
    g_autoptr(GString) key = g_string_new(NULL);
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
    GPtrArray *built = g_hash_table_lookup(r->cache, key->str);
    if (built == NULL) {
        g_autoptr(GPtrArray) fresh =
            g_ptr_array_new_with_free_func((GDestroyNotify)rs_layout_unref);
        const guint32 *copies[2] = {c->ranks, c->copy_ranks};
        guint n_copies = c->copy_ranks ? 2 : 1;
        g_autoptr(GPtrArray) copy0 =
            g_ptr_array_new_with_free_func((GDestroyNotify)rs_layout_unref);
        g_autoptr(GPtrArray) copy1 =
            g_ptr_array_new_with_free_func((GDestroyNotify)rs_layout_unref);
        GPtrArray *per_copy[2] = {copy0, copy1};
        for (guint k = 0; k < n_copies; k++) {
            g_autoptr(RsMesh) mesh = choice_make_mesh(c, copies[k], error);
            if (mesh == NULL)
                return FALSE;
            if (c->fused) {
                gint64 extents[RS_MAX_SEGMENTS];
                RsLayout *set[RS_MAX_SEGMENTS];
                for (guint i = 0; i < n_members; i++)
                    extents[i] = rs_model_get_tensor(r->model, members[i])->shape[c->fuse_dim];
                if (!rs_layout_new_fused_set(first->n_dims, first->shape, n_members, c->fuse_dim,
                                             extents, mesh, c->splits, c->n_dims, set, error))
                    return FALSE;
                for (guint i = 0; i < n_members; i++)
                    g_ptr_array_add(per_copy[k], set[i]);
            } else {
                RsLayout *l = rs_layout_new_split(first->n_dims, first->shape, mesh, c->splits,
                                                  c->n_dims, error);
                if (l == NULL)
                    return FALSE;
                g_ptr_array_add(per_copy[k], l);
            }
        }
        for (guint i = 0; i < per_copy[0]->len; i++) {
            if (n_copies == 1) {
                g_ptr_array_add(fresh, rs_layout_ref(g_ptr_array_index(per_copy[0], i)));
                continue;
            }
            RsLayout *both[2] = {g_ptr_array_index(per_copy[0], i),
                                 g_ptr_array_index(per_copy[1], i)};
            RsLayout *u = rs_layout_new_union(both, 2, error);
            if (u == NULL)
                return FALSE;
            g_ptr_array_add(fresh, u);
        }
        built = g_steal_pointer(&fresh);
        g_hash_table_insert(r->cache, g_strdup(key->str), built);
    }
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
    return TRUE;
}

/* Lays out tensor @index (and its fusion group) as @c says. */
static gboolean
resolve_tensor(Resolver *r, guint index, const MeshChoice *c, GError **error)
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

static gboolean fail_model(Resolver *r, GError **error, const char *format, ...)
    G_GNUC_PRINTF(3, 4);

static gboolean
fail_model(Resolver *r, GError **error, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *text = g_strdup_vprintf(format, args);
    va_end(args);
    g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_MODEL, "%s: %s", r->desc, text);
    return FALSE;
}

static gboolean
check_world(RsConvention *conv, const char *product_text, gint64 product, guint n_gpus,
            GError **error)
{
    if (product != (gint64)n_gpus) {
        g_autofree char *desc = rs_convention_format(conv);
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_WORLD_SIZE,
                    "%s: %s = %" G_GINT64_FORMAT " ranks, but %u GPUs are given", desc,
                    product_text, product, n_gpus);
        return FALSE;
    }
    return TRUE;
}

/* Derives a missing data-parallel size from the GPU count. */
static gboolean
derive_dp(RsConvention *conv, gint64 model_parallel, const char *product_text, guint n_gpus,
          GError **error)
{
    gint64 dp = rs_convention_get(conv, "dp");
    if (dp == 0) {
        if (n_gpus % model_parallel != 0) {
            g_autofree char *desc = rs_convention_format(conv);
            g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_WORLD_SIZE,
                        "%s: %s = %" G_GINT64_FORMAT " does not divide the %u GPUs given", desc,
                        product_text, model_parallel, n_gpus);
            return FALSE;
        }
        set_value(conv, "dp", n_gpus / model_parallel);
    }
    return TRUE;
}

/* Checks that tp divides the heads of a per-head projection that is not fused. */
static gboolean
check_heads(Resolver *r, const RsTensorSpec *t, gint64 tp, GError **error)
{
    if (t->n_heads != 0 && t->n_heads % tp != 0)
        return fail_model(r, error, "tp=%" G_GINT64_FORMAT " does not divide the %u %sheads of %s",
                          tp, t->n_heads, t->kv_heads ? "key/value " : "attention ", t->name);
    return TRUE;
}

/* Checks every per-head projection against @tp before any layout is built, so that the
 * heads, the root of most incompatibilities, are what the user is told about. With
 * @kv_replicas a KV head count that tp is a multiple of is fine (inference engines
 * replicate KV heads); only tensors @only_attention selects when it is TRUE. */
static gboolean
check_all_heads(Resolver *r, gint64 tp, gboolean kv_replicas, gboolean only_attention,
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
            return fail_model(r, error, "tp=%" G_GINT64_FORMAT " and the %u %sheads of %s: %s", tp,
                              t->n_heads, t->kv_heads ? "key/value " : "attention ", t->name,
                              t->kv_heads ? "neither divides the other"
                                          : "tp must divide the head count");
        return fail_model(r, error, "tp=%" G_GINT64_FORMAT " does not divide the %u %sheads of %s",
                          tp, t->n_heads, t->kv_heads ? "key/value " : "attention ", t->name);
    }
    return TRUE;
}

/* --- pipeline stages --- */

/* Stage of every decoder layer; embedding-side tensors (layer < 0) are on stage 0, the
 * final norm, head and MTP layers (layer >= n_layers) on the last. */
typedef struct {
    guint pp;
    guint n_layers;
    guint *stage_of;      /* n_layers entries */
    GString **layer_text; /* per stage "0-3, 16-19" */
} Pipeline;

static void
pipeline_clear(Pipeline *p)
{
    g_free(p->stage_of);
    if (p->layer_text != NULL) {
        for (guint s = 0; s < p->pp; s++)
            g_string_free(p->layer_text[s], TRUE);
        g_free(p->layer_text);
    }
}

static guint
pipeline_stage(const Pipeline *p, gint layer)
{
    if (layer < 0)
        return 0;
    if ((guint)layer >= p->n_layers)
        return p->pp - 1;
    return p->stage_of[layer];
}

/* Assigns @counts[v] consecutive layers to virtual stage v, which runs on stage v mod pp. */
static void
pipeline_from_counts(Pipeline *p, const gint64 *counts, guint n_virtual)
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

/* Megatron: explicit pp-layers (pp or pp·vpp entries), else floor(s·L/pp) with vpp 1, else
 * L / (pp·vpp) per virtual stage. */
static gboolean
megatron_pipeline(Resolver *r, guint pp, guint vpp, Pipeline *p, GError **error)
{
    guint n_layers = rs_model_get_n_layers(r->model);
    p->pp = pp;
    p->n_layers = n_layers;
    guint n_list;
    const gint64 *list = rs_convention_get_list(r->conv, "pp-layers", &n_list);
    guint n_virtual = pp * vpp;
    g_autofree gint64 *counts = g_new0(gint64, n_virtual);
    if (list != NULL) {
        if (n_list != pp && n_list != n_virtual) {
            return fail_model(r, error, "pp-layers has %u entries; give one per stage (%u)%s",
                              n_list, pp, vpp > 1 ? " or one per virtual stage (pp x vpp)" : "");
        }
        gint64 sum = 0;
        for (guint i = 0; i < n_list; i++)
            sum += list[i];
        if (sum != n_layers)
            return fail_model(r, error,
                              "pp-layers add up to %" G_GINT64_FORMAT " layers but %s has %u", sum,
                              rs_model_get_name(r->model), n_layers);
        if (n_list == n_virtual) {
            memcpy(counts, list, n_virtual * sizeof *counts);
        } else {
            /* Per-stage counts with virtual stages: each stage's layers split evenly over
             * its vpp chunks. */
            for (guint s = 0; s < pp; s++) {
                if (list[s] % vpp != 0)
                    return fail_model(r, error,
                                      "pp-layers: stage %u has %" G_GINT64_FORMAT
                                      " layers, not a multiple of vpp=%u",
                                      s, list[s], vpp);
                for (guint v = 0; v < vpp; v++)
                    counts[v * pp + s] = list[s] / vpp;
            }
        }
    } else if (vpp > 1) {
        if (n_layers % n_virtual != 0)
            return fail_model(r, error,
                              "%u layers do not split into pp x vpp = %u virtual stages; give "
                              "pp-layers",
                              n_layers, n_virtual);
        for (guint v = 0; v < n_virtual; v++)
            counts[v] = n_layers / n_virtual;
    } else {
        for (guint s = 0; s < pp; s++)
            counts[s] =
                (gint64)((guint64)(s + 1) * n_layers / pp) - (gint64)((guint64)s * n_layers / pp);
    }
    pipeline_from_counts(p, counts, n_virtual);
    return TRUE;
}

/* vLLM get_pp_indices: L // pp each, the remainder added one each to partitions[-2],
 * partitions[-3], … (vllm/distributed/utils.py); or pp-layers
 * (VLLM_PP_LAYER_PARTITION). */
static gboolean
vllm_pipeline(Resolver *r, guint pp, Pipeline *p, GError **error)
{
    guint n_layers = rs_model_get_n_layers(r->model);
    p->pp = pp;
    p->n_layers = n_layers;
    guint n_list;
    const gint64 *list = rs_convention_get_list(r->conv, "pp-layers", &n_list);
    g_autofree gint64 *counts = g_new0(gint64, pp);
    if (list != NULL) {
        gint64 sum = 0;
        for (guint i = 0; i < n_list; i++)
            sum += list[i];
        if (n_list != pp || sum != n_layers)
            return fail_model(r, error,
                              "pp-layers must give %u stages adding up to the %u layers of %s", pp,
                              n_layers, rs_model_get_name(r->model));
        memcpy(counts, list, pp * sizeof *counts);
    } else {
        for (guint s = 0; s < pp; s++)
            counts[s] = n_layers / pp;
        guint rem = n_layers % pp;
        for (guint i = 2; i < rem + 2; i++)
            counts[pp - i]++;
    }
    pipeline_from_counts(p, counts, pp);
    return TRUE;
}

static gboolean
check_pp(Resolver *r, gint64 pp, GError **error)
{
    guint n_layers = rs_model_get_n_layers(r->model);
    if (pp > n_layers)
        return fail_model(r, error, "pp=%" G_GINT64_FORMAT " exceeds the %u layers of %s", pp,
                          n_layers, rs_model_get_name(r->model));
    return TRUE;
}

static gboolean
is_embedding(const RsTensorSpec *t)
{
    return t->role == RS_ROLE_VOCAB_PARALLEL && t->layer < 0;
}

/* --- megatron --- */

typedef struct {
    gint64 tp, cp, pp, dp, ep, etp, edp, stage_size;
    Pipeline pipe;
} Megatron;

static gboolean
megatron_choose(Resolver *r, guint index, MeshChoice *c, GError **error)
{
    const Megatron *mg = r->data;
    const RsTensorSpec *t = rs_model_get_tensor(r->model, index);
    guint stage = pipeline_stage(&mg->pipe, t->layer);
    const guint32 *slice = r->gpus + (gsize)stage * (gsize)mg->stage_size;
    const guint dense_sizes[3] = {(guint)mg->dp, (guint)mg->cp, (guint)mg->tp};
    const char *const dense_names[3] = {"dp", "cp", "tp"};
    const guint expert_sizes[3] = {(guint)mg->edp, (guint)mg->ep, (guint)mg->etp};
    const char *const expert_names[3] = {"edp", "ep", "etp"};
    gboolean complete = group_complete(r->model, index);
    choice_mesh(c, slice, 3, dense_sizes, dense_names);
    switch (t->role) {
    case RS_ROLE_COLUMN_PARALLEL:
        if (t->fuse == RS_FUSE_QKV && complete) {
            const RsTensorSpec *q = rs_model_get_tensor(
                r->model, (guint)rs_model_find_fuse_sibling(r->model, index, 0));
            choice_fuse(c, r->model, index, 0, 2, RS_FUSION_QKV_GROUPED,
                        q->n_heads ? q->shape[0] / q->n_heads : 1, ".linear_qkv.weight");
        } else if (t->fuse == RS_FUSE_GATE_UP && complete) {
            choice_fuse(c, r->model, index, 0, 2, RS_FUSION_CONCAT, 1, ".linear_fc1.weight");
        } else if (t->fuse == RS_FUSE_GATE_UP_INTERLEAVED) {
            choice_fuse(c, r->model, index, 0, 2, RS_FUSION_INTERLEAVED, 2, ".linear_fc1.weight");
        } else {
            if (!check_heads(r, t, mg->tp, error))
                return FALSE;
            choice_shard(c, 2, 0);
        }
        break;
    case RS_ROLE_VOCAB_PARALLEL:
        choice_padded(c, 2, 0, 128 * mg->tp);
        if (is_embedding(t) && rs_model_get_tie_embeddings(r->model) && mg->pp > 1)
            c->copy_ranks = r->gpus + (gsize)(mg->pp - 1) * (gsize)mg->stage_size;
        break;
    case RS_ROLE_ROW_PARALLEL:
        choice_shard(c, 2, 1);
        break;
    case RS_ROLE_REPLICATED:
    case RS_ROLE_NORM:
    case RS_ROLE_ROUTER:
    case RS_ROLE_COLUMN_SEGMENTED: /* held whole: segments are not split separately yet */
        break;
    case RS_ROLE_EXPERT_COLUMN:
    case RS_ROLE_EXPERT_ROW:
    case RS_ROLE_EXPERT_REPLICATED:
        if (t->shape[0] % mg->ep != 0)
            return fail_model(r, error,
                              "ep=%" G_GINT64_FORMAT " does not divide the %" G_GINT64_FORMAT
                              " experts of %s",
                              mg->ep, t->shape[0], t->name);
        choice_mesh(c, slice, 3, expert_sizes, expert_names);
        choice_shard(c, 1, 0);
        if (t->role == RS_ROLE_EXPERT_REPLICATED)
            break; /* [E, out] biases: whole on each etp rank */
        if (t->role == RS_ROLE_EXPERT_ROW)
            choice_shard(c, 2, 2);
        else if (t->fuse == RS_FUSE_GATE_UP && complete)
            choice_fuse(c, r->model, index, 1, 2, RS_FUSION_CONCAT, 1, ".linear_fc1.weight");
        else if (t->fuse == RS_FUSE_GATE_UP_INTERLEAVED)
            choice_fuse(c, r->model, index, 1, 2, RS_FUSION_INTERLEAVED, 2, ".linear_fc1.weight");
        else
            choice_shard(c, 2, 1);
        break;
    case RS_ROLE_N:
        g_assert_not_reached();
    }
    return TRUE;
}

static gboolean
megatron_resolve(RsConvention *conv, Resolver *r, GError **error)
{
    Megatron mg = {0};
    mg.tp = get_or(conv, "tp", 1);
    mg.cp = get_or(conv, "cp", 1);
    mg.pp = get_or(conv, "pp", 1);
    gint64 vpp = get_or(conv, "vpp", 1);
    mg.ep = get_or(conv, "ep", 1);
    mg.etp = get_or(conv, "etp", mg.tp);
    set_value(conv, "tp", mg.tp);
    set_value(conv, "cp", mg.cp);
    set_value(conv, "pp", mg.pp);
    set_value(conv, "ep", mg.ep);
    set_value(conv, "etp", mg.etp);
    if (!derive_dp(conv, mg.tp * mg.cp * mg.pp, "tp x cp x pp", r->n_gpus, error))
        return FALSE;
    mg.dp = rs_convention_get(conv, "dp");
    if (!check_world(conv, "tp x cp x dp x pp", mg.tp * mg.cp * mg.dp * mg.pp, r->n_gpus, error))
        return FALSE;
    mg.stage_size = mg.tp * mg.cp * mg.dp;
    r->desc = rs_convention_format(conv);
    if (mg.stage_size % (mg.ep * mg.etp) != 0) {
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                    "%s: ep x etp = %" G_GINT64_FORMAT
                    " must divide tp x cp x dp = %" G_GINT64_FORMAT,
                    r->desc, mg.ep * mg.etp, mg.stage_size);
        return FALSE;
    }
    mg.edp = mg.stage_size / (mg.ep * mg.etp);
    if (!check_all_heads(r, mg.tp, FALSE, FALSE, error))
        return FALSE;
    if (!check_pp(r, mg.pp, error) ||
        !megatron_pipeline(r, (guint)mg.pp, (guint)vpp, &mg.pipe, error)) {
        pipeline_clear(&mg.pipe);
        return FALSE;
    }
    r->data = &mg;
    gboolean ok = TRUE;
    for (guint i = 0; ok && i < rs_model_get_n_tensors(r->model); i++) {
        if (g_ptr_array_index(r->layouts, i) != NULL)
            continue;
        MeshChoice c;
        ok = megatron_choose(r, i, &c, error) && resolve_tensor(r, i, &c, error);
    }
    for (guint s = 0; ok && s < (guint)mg.pp; s++) {
        g_autofree char *ranks =
            rs_ranks_format(r->gpus + (gsize)s * mg.stage_size, (guint)mg.stage_size);
        g_string_append_printf(r->summary, "stage %u: GPUs %s, layers %s%s%s\n", s, ranks,
                               mg.pipe.layer_text[s]->len ? mg.pipe.layer_text[s]->str : "none",
                               s == 0 ? " + embedding" : "",
                               s + 1 == (guint)mg.pp ? " + final norm, head, MTP" : "");
    }
    if (ok)
        g_string_append_printf(r->summary,
                               "dense weights: mesh [dp=%" G_GINT64_FORMAT ", cp=%" G_GINT64_FORMAT
                               ", tp=%" G_GINT64_FORMAT
                               "] per stage; experts: mesh [edp=%" G_GINT64_FORMAT
                               ", ep=%" G_GINT64_FORMAT ", etp=%" G_GINT64_FORMAT "] per stage\n",
                               mg.dp, mg.cp, mg.tp, mg.edp, mg.ep, mg.etp);
    pipeline_clear(&mg.pipe);
    r->data = NULL;
    return ok;
}

/* --- fsdp2 --- */

typedef struct {
    gint64 dp, replicate, tp;
} Fsdp2;

static gboolean
fsdp2_choose(Resolver *r, guint index, MeshChoice *c, GError **error)
{
    const Fsdp2 *f = r->data;
    const RsTensorSpec *t = rs_model_get_tensor(r->model, index);
    const guint sizes[3] = {(guint)f->replicate, (guint)f->dp, (guint)f->tp};
    const char *const names[3] = {"dp_replicate", "dp_shard", "tp"};
    choice_mesh(c, r->gpus, 3, sizes, names);
    gint tp_dim = -1; /* the tensor dim tp shards, -1: replicated over tp */
    switch (t->role) {
    case RS_ROLE_COLUMN_PARALLEL:
        if (!check_heads(r, t, f->tp, error))
            return FALSE;
        tp_dim = 0;
        break;
    case RS_ROLE_VOCAB_PARALLEL:
        tp_dim = 0;
        break;
    case RS_ROLE_ROW_PARALLEL:
        tp_dim = 1;
        break;
    case RS_ROLE_REPLICATED:
    case RS_ROLE_NORM:
    case RS_ROLE_ROUTER:
    case RS_ROLE_COLUMN_SEGMENTED:
    case RS_ROLE_EXPERT_REPLICATED:
        break;
    case RS_ROLE_EXPERT_COLUMN:
        tp_dim = 1;
        break;
    case RS_ROLE_EXPERT_ROW:
        tp_dim = 2;
        break;
    case RS_ROLE_N:
        g_assert_not_reached();
    }
    if (t->n_dims == 0)
        return TRUE;
    if (tp_dim >= (gint)t->n_dims)
        tp_dim = -1;
    if (tp_dim >= 0 && f->tp > 1)
        choice_shard(c, 2, tp_dim);
    /* FSDP's Shard(0), strided when tp already split dim 0. */
    if (tp_dim == 0 && f->tp > 1)
        c->splits[1] =
            rs_split_placement((RsPlacement){RS_PLACEMENT_STRIDED_SHARD, 0, (gint)f->tp});
    else
        choice_shard(c, 1, 0);
    return TRUE;
}

static gboolean
fsdp2_resolve(RsConvention *conv, Resolver *r, GError **error)
{
    Fsdp2 f = {0};
    f.tp = get_or(conv, "tp", 1);
    f.replicate = get_or(conv, "replicate", 1);
    set_value(conv, "tp", f.tp);
    if (f.replicate > 1)
        set_value(conv, "replicate", f.replicate);
    if (!derive_dp(conv, f.tp * f.replicate, "replicate x tp", r->n_gpus, error))
        return FALSE;
    f.dp = rs_convention_get(conv, "dp");
    if (!check_world(conv, "replicate x dp x tp", f.replicate * f.dp * f.tp, r->n_gpus, error))
        return FALSE;
    r->desc = rs_convention_format(conv);
    if (!check_all_heads(r, f.tp, FALSE, FALSE, error))
        return FALSE;
    r->data = &f;
    gboolean ok = TRUE;
    for (guint i = 0; ok && i < rs_model_get_n_tensors(r->model); i++) {
        MeshChoice c;
        ok = fsdp2_choose(r, i, &c, error) && resolve_tensor(r, i, &c, error);
    }
    for (gint64 k = 0; ok && k < f.replicate; k++) {
        g_autofree char *ranks = rs_ranks_format(r->gpus + k * f.dp * f.tp, (guint)(f.dp * f.tp));
        g_string_append_printf(r->summary,
                               "replica %" G_GINT64_FORMAT
                               ": GPUs %s, mesh [dp_shard=%" G_GINT64_FORMAT
                               ", tp=%" G_GINT64_FORMAT "]\n",
                               k, ranks, f.dp, f.tp);
    }
    r->data = NULL;
    return ok;
}

/* --- vllm --- */

typedef struct {
    gint64 tp, dp, pp;
    gboolean ep;
    Pipeline pipe;
    guint32 **stage_ranks; /* per stage: dp·tp ranks, ordered (dp_rank, tp_rank) */
} Vllm;

/* Per-head projections that vLLM keeps unfused: q_b_proj, kv_b_proj (MLA) or a q/k/v
 * whose siblings are missing. */
static gboolean
vllm_unfused_heads(Resolver *r, const RsTensorSpec *t, MeshChoice *c, guint tp_dim, gint64 tp,
                   const guint32 *ranks, gint64 outer, GError **error)
{
    if (t->n_heads == 0 || t->n_heads % tp == 0) {
        choice_shard(c, tp_dim, 0);
        return TRUE;
    }
    if (t->kv_heads && tp % t->n_heads == 0) {
        /* Each KV head on tp / n_kv consecutive ranks: split tp into [n_kv, tp / n_kv]
         * and shard only over the first. */
        const guint sizes[3] = {(guint)outer, t->n_heads, (guint)(tp / t->n_heads)};
        const char *const names[3] = {"dp", "tp_kv", "tp_replica"};
        choice_mesh(c, ranks, 3, sizes, names);
        choice_shard(c, 1, 0);
        return TRUE;
    }
    return fail_model(r, error, "tp=%" G_GINT64_FORMAT " and the %u %sheads of %s: %s", tp,
                      t->n_heads, t->kv_heads ? "key/value " : "attention ", t->name,
                      t->kv_heads ? "neither divides the other" : "tp must divide the head count");
}

static gboolean
vllm_choose(Resolver *r, guint index, MeshChoice *c, GError **error)
{
    const Vllm *v = r->data;
    const RsTensorSpec *t = rs_model_get_tensor(r->model, index);
    guint stage = pipeline_stage(&v->pipe, t->layer);
    const guint32 *ranks = v->stage_ranks[stage];
    const guint sizes[2] = {(guint)v->dp, (guint)v->tp};
    const char *const names[2] = {"dp", "tp"};
    gboolean complete = group_complete(r->model, index);
    choice_mesh(c, ranks, 2, sizes, names);
    switch (t->role) {
    case RS_ROLE_COLUMN_PARALLEL:
        if (t->fuse == RS_FUSE_QKV && complete) {
            const RsTensorSpec *q = rs_model_get_tensor(
                r->model, (guint)rs_model_find_fuse_sibling(r->model, index, 0));
            choice_fuse(c, r->model, index, 0, 1, RS_FUSION_QKV,
                        q->n_heads ? q->shape[0] / q->n_heads : 1, ".qkv_proj.weight");
        } else if (t->fuse == RS_FUSE_GATE_UP && complete) {
            choice_fuse(c, r->model, index, 0, 1, RS_FUSION_CONCAT, 1, ".gate_up_proj.weight");
        } else {
            return vllm_unfused_heads(r, t, c, 1, v->tp, ranks, v->dp, error);
        }
        break;
    case RS_ROLE_VOCAB_PARALLEL:
        choice_padded(c, 1, 0, 64);
        if (is_embedding(t) && rs_model_get_tie_embeddings(r->model) && v->pp > 1)
            c->copy_ranks = v->stage_ranks[v->pp - 1];
        break;
    case RS_ROLE_ROW_PARALLEL:
        choice_shard(c, 1, 1);
        break;
    case RS_ROLE_REPLICATED:
        if (t->fuse == RS_FUSE_MLA_A && complete)
            choice_fuse(c, r->model, index, 0, G_MAXUINT, RS_FUSION_CONCAT, 1,
                        ".fused_qkv_a_proj.weight");
        break;
    case RS_ROLE_NORM:
    case RS_ROLE_ROUTER:
    case RS_ROLE_COLUMN_SEGMENTED:
        break;
    case RS_ROLE_EXPERT_REPLICATED:
        if (v->ep) {
            /* [E, out] biases follow their experts. */
            const guint ep_size[1] = {(guint)(v->dp * v->tp)};
            const char *const ep_name[1] = {"ep"};
            choice_mesh(c, ranks, 1, ep_size, ep_name);
            choice_balanced(c, 0, 0);
        }
        break;
    case RS_ROLE_EXPERT_COLUMN:
    case RS_ROLE_EXPERT_ROW:
        if (v->ep) {
            /* Whole experts over the dp·tp ranks of the stage. */
            const guint ep_size[1] = {(guint)(v->dp * v->tp)};
            const char *const ep_name[1] = {"ep"};
            choice_mesh(c, ranks, 1, ep_size, ep_name);
            choice_balanced(c, 0, 0);
            if (t->role == RS_ROLE_EXPERT_COLUMN && t->fuse == RS_FUSE_GATE_UP && complete)
                choice_fuse(c, r->model, index, 1, G_MAXUINT, RS_FUSION_CONCAT, 1, ".w13_weight");
        } else if (t->role == RS_ROLE_EXPERT_ROW) {
            choice_shard(c, 1, 2);
        } else if (t->fuse == RS_FUSE_GATE_UP && complete) {
            choice_fuse(c, r->model, index, 1, 1, RS_FUSION_CONCAT, 1, ".w13_weight");
        } else {
            /* Including gpt-oss's interleaved gate_up_proj: vLLM slices it whole
             * (models/gpt_oss.py: narrow 2·tp_rank_start … 2·tp_rank_end). */
            choice_shard(c, 1, 1);
        }
        break;
    case RS_ROLE_N:
        g_assert_not_reached();
    }
    return TRUE;
}

static gboolean
vllm_resolve(RsConvention *conv, Resolver *r, GError **error)
{
    Vllm v = {0};
    v.tp = get_or(conv, "tp", 1);
    v.pp = get_or(conv, "pp", 1);
    v.ep = rs_convention_get(conv, "ep") != 0;
    set_value(conv, "tp", v.tp);
    if (v.pp > 1)
        set_value(conv, "pp", v.pp);
    if (!derive_dp(conv, v.tp * v.pp, v.pp > 1 ? "tp x pp" : "tp", r->n_gpus, error))
        return FALSE;
    v.dp = rs_convention_get(conv, "dp");
    if (!check_world(conv, v.pp > 1 ? "tp x dp x pp" : "tp x dp", v.tp * v.dp * v.pp, r->n_gpus,
                     error))
        return FALSE;
    r->desc = rs_convention_format(conv);
    if (!check_all_heads(r, v.tp, TRUE, FALSE, error))
        return FALSE;
    if (!check_pp(r, v.pp, error) || !vllm_pipeline(r, (guint)v.pp, &v.pipe, error)) {
        pipeline_clear(&v.pipe);
        return FALSE;
    }
    /* Stage p of replica d is ranks (d·pp + p)·tp … + tp − 1. */
    v.stage_ranks = g_new0(guint32 *, v.pp);
    for (gint64 p = 0; p < v.pp; p++) {
        v.stage_ranks[p] = g_new(guint32, v.dp * v.tp);
        for (gint64 d = 0; d < v.dp; d++)
            for (gint64 k = 0; k < v.tp; k++)
                v.stage_ranks[p][d * v.tp + k] = r->gpus[(d * v.pp + p) * v.tp + k];
    }
    r->data = &v;
    gboolean ok = TRUE;
    for (guint i = 0; ok && i < rs_model_get_n_tensors(r->model); i++) {
        if (g_ptr_array_index(r->layouts, i) != NULL)
            continue;
        MeshChoice c;
        ok = vllm_choose(r, i, &c, error) && resolve_tensor(r, i, &c, error);
    }
    for (gint64 d = 0; ok && d < v.dp; d++) {
        for (gint64 p = 0; p < v.pp; p++) {
            g_autofree char *ranks = rs_ranks_format(r->gpus + (d * v.pp + p) * v.tp, (guint)v.tp);
            g_string_append_printf(r->summary,
                                   "replica %" G_GINT64_FORMAT ", stage %" G_GINT64_FORMAT
                                   ": GPUs %s, tp=%" G_GINT64_FORMAT ", layers %s%s\n",
                                   d, p, ranks, v.tp,
                                   v.pipe.layer_text[p]->len ? v.pipe.layer_text[p]->str : "none",
                                   v.ep ? ", experts over ep = dp x tp" : "");
        }
    }
    for (gint64 p = 0; p < v.pp; p++)
        g_free(v.stage_ranks[p]);
    g_free(v.stage_ranks);
    pipeline_clear(&v.pipe);
    r->data = NULL;
    return ok;
}

/* --- sglang --- */

typedef struct {
    gint64 tp, dp, ep, replicas, attn_dp, attn_tp;
    gboolean dp_attention;
} Sglang;

static gboolean
is_attention(const RsTensorSpec *t)
{
    return strstr(t->name, ".self_attn.") != NULL;
}

static gboolean
sglang_choose(Resolver *r, guint index, MeshChoice *c, GError **error)
{
    const Sglang *s = r->data;
    const RsTensorSpec *t = rs_model_get_tensor(r->model, index);
    const guint sizes[2] = {(guint)s->replicas, (guint)s->tp};
    const char *const names[2] = {"dp", "tp"};
    const guint attn_sizes[3] = {(guint)s->replicas, (guint)s->attn_dp, (guint)s->attn_tp};
    const char *const attn_names[3] = {"dp", "attn_dp", "attn_tp"};
    gboolean attention = is_attention(t);
    gboolean complete = group_complete(r->model, index);
    /* The tp mesh dim of this tensor: attention weights split over attn_tp. */
    guint tp_dim = attention ? 2 : 1;
    gint64 tp = attention ? s->attn_tp : s->tp;
    if (attention)
        choice_mesh(c, r->gpus, 3, attn_sizes, attn_names);
    else
        choice_mesh(c, r->gpus, 2, sizes, names);
    switch (t->role) {
    case RS_ROLE_COLUMN_PARALLEL:
        if (t->fuse == RS_FUSE_QKV && complete) {
            const RsTensorSpec *q = rs_model_get_tensor(
                r->model, (guint)rs_model_find_fuse_sibling(r->model, index, 0));
            choice_fuse(c, r->model, index, 0, tp_dim, RS_FUSION_QKV,
                        q->n_heads ? q->shape[0] / q->n_heads : 1, ".qkv_proj.weight");
        } else if (t->fuse == RS_FUSE_GATE_UP && complete) {
            choice_fuse(c, r->model, index, 0, tp_dim, RS_FUSION_CONCAT, 1, ".gate_up_proj.weight");
        } else if (t->n_heads == 0 || t->n_heads % tp == 0) {
            choice_shard(c, tp_dim, 0);
        } else {
            return fail_model(r, error,
                              "tp=%" G_GINT64_FORMAT " does not divide the %u heads of %s", tp,
                              t->n_heads, t->name);
        }
        break;
    case RS_ROLE_VOCAB_PARALLEL:
        if (is_embedding(t) && s->dp_attention) {
            /* Replicated, still padded to 64 rows (one partition). */
            const guint rep_sizes[3] = {(guint)s->replicas, (guint)s->tp, 1};
            const char *const rep_names[3] = {"dp", "tp", "vocab"};
            choice_mesh(c, r->gpus, 3, rep_sizes, rep_names);
            choice_padded(c, 2, 0, 64);
        } else {
            choice_padded(c, 1, 0, 64);
        }
        break;
    case RS_ROLE_ROW_PARALLEL:
        choice_shard(c, tp_dim, 1);
        break;
    case RS_ROLE_REPLICATED:
        if (t->fuse == RS_FUSE_MLA_A && complete)
            choice_fuse(c, r->model, index, 0, G_MAXUINT, RS_FUSION_CONCAT, 1,
                        ".fused_qkv_a_proj_with_mqa.weight");
        break;
    case RS_ROLE_NORM:
    case RS_ROLE_ROUTER:
    case RS_ROLE_COLUMN_SEGMENTED:
        break;
    case RS_ROLE_EXPERT_COLUMN:
    case RS_ROLE_EXPERT_ROW:
    case RS_ROLE_EXPERT_REPLICATED: {
        if (t->shape[0] % s->ep != 0)
            return fail_model(r, error,
                              "ep=%" G_GINT64_FORMAT " does not divide the %" G_GINT64_FORMAT
                              " experts of %s",
                              s->ep, t->shape[0], t->name);
        const guint moe_sizes[3] = {(guint)s->replicas, (guint)s->ep, (guint)(s->tp / s->ep)};
        const char *const moe_names[3] = {"dp", "ep", "moe_tp"};
        choice_mesh(c, r->gpus, 3, moe_sizes, moe_names);
        choice_shard(c, 1, 0);
        if (t->role == RS_ROLE_EXPERT_REPLICATED)
            break;
        if (t->role == RS_ROLE_EXPERT_ROW)
            choice_shard(c, 2, 2);
        else if (t->fuse == RS_FUSE_GATE_UP && complete)
            choice_fuse(c, r->model, index, 1, 2, RS_FUSION_CONCAT, 1, ".w13_weight");
        else
            choice_shard(c, 2, 1);
        break;
    }
    case RS_ROLE_N:
        g_assert_not_reached();
    }
    return TRUE;
}

static gboolean
sglang_resolve(RsConvention *conv, Resolver *r, GError **error)
{
    Sglang s = {0};
    s.tp = get_or(conv, "tp", 1);
    s.ep = get_or(conv, "ep", 1);
    gboolean dp_attention = rs_convention_get(conv, "dp-attention") != 0;
    set_value(conv, "tp", s.tp);
    if (dp_attention) {
        s.dp = get_or(conv, "dp", 1);
        set_value(conv, "dp", s.dp);
        if (!check_world(conv, "tp (dp-attention shares its ranks)", s.tp, r->n_gpus, error))
            return FALSE;
    } else {
        if (!derive_dp(conv, s.tp, "tp", r->n_gpus, error))
            return FALSE;
        s.dp = rs_convention_get(conv, "dp");
        if (!check_world(conv, "tp x dp", s.tp * s.dp, r->n_gpus, error))
            return FALSE;
    }
    r->desc = rs_convention_format(conv);
    if (s.tp % s.ep != 0) {
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                    "%s: ep=%" G_GINT64_FORMAT " must divide tp=%" G_GINT64_FORMAT, r->desc, s.ep,
                    s.tp);
        return FALSE;
    }
    if (dp_attention && s.tp % s.dp != 0) {
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                    "%s: dp-attention needs dp=%" G_GINT64_FORMAT " to divide tp=%" G_GINT64_FORMAT,
                    r->desc, s.dp, s.tp);
        return FALSE;
    }
    s.dp_attention = dp_attention;
    s.replicas = dp_attention ? 1 : s.dp;
    s.attn_dp = dp_attention ? s.dp : 1;
    s.attn_tp = s.tp / s.attn_dp;
    if (!check_all_heads(r, s.attn_tp, TRUE, FALSE, error))
        return FALSE;
    r->data = &s;
    gboolean ok = TRUE;
    for (guint i = 0; ok && i < rs_model_get_n_tensors(r->model); i++) {
        if (g_ptr_array_index(r->layouts, i) != NULL)
            continue;
        MeshChoice c;
        ok = sglang_choose(r, i, &c, error) && resolve_tensor(r, i, &c, error);
    }
    for (gint64 d = 0; ok && d < s.replicas; d++) {
        g_autofree char *ranks = rs_ranks_format(r->gpus + d * s.tp, (guint)s.tp);
        g_string_append_printf(r->summary,
                               "replica %" G_GINT64_FORMAT ": GPUs %s, tp=%" G_GINT64_FORMAT
                               ", attention tp=%" G_GINT64_FORMAT " x dp=%" G_GINT64_FORMAT
                               ", experts ep=%" G_GINT64_FORMAT " x tp=%" G_GINT64_FORMAT "\n",
                               d, ranks, s.tp, s.attn_tp, s.attn_dp, s.ep, s.tp / s.ep);
    }
    r->data = NULL;
    return ok;
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
derive_block_scales(Resolver *r, GError **error)
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
                g_prefix_error(error, "%s: %s: ", r->desc ? r->desc : rs_convention_get_name(r->conv),
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
    if (n_gpus == 0) {
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_WORLD_SIZE, "%s: no GPUs given",
                    conv->klass->name);
        return FALSE;
    }
    guint n_tensors = rs_model_get_n_tensors(model);
    Resolver r = {0};
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

static const ConventionClass convention_classes[] = {
    {"megatron",
     {{"tp", PARAM_INT},
      {"cp", PARAM_INT},
      {"pp", PARAM_INT},
      {"dp", PARAM_INT},
      {"ep", PARAM_INT},
      {"etp", PARAM_INT},
      {"vpp", PARAM_INT},
      {"pp-layers", PARAM_LIST},
      {NULL, 0}},
     megatron_resolve},
    {"fsdp2",
     {{"dp", PARAM_INT}, {"replicate", PARAM_INT}, {"tp", PARAM_INT}, {NULL, 0}},
     fsdp2_resolve},
    {"vllm",
     {{"tp", PARAM_INT},
      {"dp", PARAM_INT},
      {"pp", PARAM_INT},
      {"ep", PARAM_BOOL},
      {"pp-layers", PARAM_LIST},
      {NULL, 0}},
     vllm_resolve},
    {"sglang",
     {{"tp", PARAM_INT},
      {"dp", PARAM_INT},
      {"ep", PARAM_INT},
      {"dp-attention", PARAM_BOOL},
      {NULL, 0}},
     sglang_resolve},
};

static const ConventionClass *
lookup_class(const char *name)
{
    for (guint i = 0; i < G_N_ELEMENTS(convention_classes); i++)
        if (strcmp(name, convention_classes[i].name) == 0)
            return &convention_classes[i];
    return NULL;
}

char *
rs_conventions_list(void)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < G_N_ELEMENTS(convention_classes); i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", convention_classes[i].name);
    return g_string_free(s, FALSE);
}
