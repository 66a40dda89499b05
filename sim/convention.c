/* convention.c — megatron and vllm layouts (see convention.h for the rules and sources).
 *
 * Each convention maps a tensor's role (and, for Megatron, its pipeline stage) to a device
 * mesh over a slice of the GPU list and one placement per mesh dim, and builds the layout
 * with rs_layout_new_dtensor. Layouts are cached by (GPU slice, mesh, placements, shape)
 * so a 61-layer model builds a few dozen distinct layouts, not thousands. */
#include "sim/convention.h"

#include <string.h>

G_DEFINE_QUARK(rs-convention-error-quark, rs_convention_error)

#define MAX_PARAMS 8

typedef struct _ConventionClass ConventionClass;

typedef gboolean (*ResolveFunc)(RsConvention *conv, const RsModel *model, const guint32 *gpus,
                                guint n_gpus, GPtrArray *layouts, GString *summary,
                                GError **error);

struct _ConventionClass {
    const char *name;
    const char *params[MAX_PARAMS + 1]; /* NULL-terminated */
    ResolveFunc resolve;
};

struct _RsConvention {
    const ConventionClass *klass;
    gint64 values[MAX_PARAMS]; /* 0 = unset */
};

static const ConventionClass *lookup_class(const char *name);

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
    g_free(conv);
}

static gint
param_index(const ConventionClass *klass, const char *key)
{
    for (gint i = 0; klass->params[i] != NULL; i++)
        if (strcmp(klass->params[i], key) == 0)
            return i;
    return -1;
}

gboolean
rs_convention_set(RsConvention *conv, const char *key, gint64 value, GError **error)
{
    gint i = param_index(conv->klass, key);
    if (i < 0) {
        g_autofree char *known = g_strjoinv(", ", (char **)conv->klass->params);
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                    "%s has no parameter \"%s\" (known: %s)", conv->klass->name, key, known);
        return FALSE;
    }
    if (value < 1 || value > (1 << 24)) {
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                    "%s %s=%" G_GINT64_FORMAT ": must be a positive integer", conv->klass->name,
                    key, value);
        return FALSE;
    }
    conv->values[i] = value;
    return TRUE;
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
    g_auto(GStrv) items = g_strsplit(colon + 1, ",", -1);
    for (guint i = 0; items[i] != NULL; i++) {
        char *eq = strchr(items[i], '=');
        gint64 value;
        if (eq == NULL) {
            g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                        "\"%s\": expected key=value, got \"%s\"", spec, items[i]);
            return NULL;
        }
        *eq = '\0';
        char *key = g_strstrip(items[i]);
        char *text = g_strstrip(eq + 1);
        if (!g_ascii_string_to_signed(text, 10, 1, 1 << 24, &value, NULL)) {
            g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                        "\"%s\": %s=%s is not a positive integer", spec, key, text);
            return NULL;
        }
        if (!rs_convention_set(conv, key, value, error))
            return NULL;
    }
    return g_steal_pointer(&conv);
}

void
rs_convention_merge(RsConvention **conv, const RsConvention *overrides)
{
    if (*conv == NULL || (*conv)->klass != overrides->klass) {
        g_free(*conv);
        *conv = g_memdup2(overrides, sizeof **conv);
        return;
    }
    for (guint i = 0; i < MAX_PARAMS; i++)
        if (overrides->values[i] != 0)
            (*conv)->values[i] = overrides->values[i];
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
    return i < 0 ? 0 : conv->values[i];
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
    conv->values[i] = value;
}

char *
rs_convention_format(const RsConvention *conv)
{
    GString *s = g_string_new(conv->klass->name);
    for (guint i = 0; conv->klass->params[i] != NULL; i++)
        if (conv->values[i] != 0)
            g_string_append_printf(s, " %s=%" G_GINT64_FORMAT, conv->klass->params[i],
                                   conv->values[i]);
    return g_string_free(s, FALSE);
}

gboolean
rs_convention_resolve(RsConvention *conv, const RsModel *model, const guint32 *gpus,
                      guint n_gpus, GPtrArray **layouts_out, char **summary_out, GError **error)
{
    g_autoptr(GPtrArray) layouts = g_ptr_array_new_with_free_func((GDestroyNotify)rs_layout_unref);
    g_autoptr(GString) summary = g_string_new(NULL);
    if (n_gpus == 0) {
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_WORLD_SIZE,
                    "%s: no GPUs given", conv->klass->name);
        return FALSE;
    }
    if (!conv->klass->resolve(conv, model, gpus, n_gpus, layouts, summary, error))
        return FALSE;
    *layouts_out = g_steal_pointer(&layouts);
    if (summary_out != NULL)
        *summary_out = g_string_free(g_steal_pointer(&summary), FALSE);
    return TRUE;
}

/* --- layout construction shared by the conventions --- */

typedef struct {
    GHashTable *cache; /* key text → RsLayout* (owned) */
} LayoutCache;

static void
layout_cache_init(LayoutCache *c)
{
    c->cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                     (GDestroyNotify)rs_layout_unref);
}

static void
layout_cache_clear(LayoutCache *c)
{
    g_hash_table_unref(c->cache);
}

/* Builds (or reuses) the layout of @t on a mesh of @n_mesh_dims dims over @gpus (row-major)
 * with the given placements (a string like "R,S(0)"), and appends it to @layouts. */
static gboolean
add_layout(LayoutCache *c, GPtrArray *layouts, const RsTensorSpec *t, const guint32 *gpus,
           guint n_mesh_dims, const guint *sizes, const char *const *names,
           const char *placements_text, GError **error)
{
    g_autoptr(GString) key = g_string_new(NULL);
    g_string_append_printf(key, "%u@%u|", gpus[0], n_mesh_dims);
    guint n = 1;
    for (guint m = 0; m < n_mesh_dims; m++) {
        g_string_append_printf(key, "%u,", sizes[m]);
        n *= sizes[m];
    }
    g_string_append_printf(key, "|%s|", placements_text);
    for (guint d = 0; d < t->n_dims; d++)
        g_string_append_printf(key, "%" G_GINT64_FORMAT ",", t->shape[d]);
    RsLayout *layout = g_hash_table_lookup(c->cache, key->str);
    if (layout == NULL) {
        RsPlacement placements[RS_MAX_MESH_DIMS];
        guint n_placements;
        if (!rs_placements_parse(placements_text, placements, &n_placements, error))
            return FALSE;
        g_autoptr(RsMesh) mesh = rs_mesh_new(n_mesh_dims, sizes, names, gpus, n, error);
        if (mesh == NULL)
            return FALSE;
        layout = rs_layout_new_dtensor(t->n_dims, t->shape, mesh, placements, n_placements,
                                       error);
        if (layout == NULL) {
            g_prefix_error(error, "%s: ", t->name);
            return FALSE;
        }
        g_hash_table_insert(c->cache, g_strdup(key->str), layout);
    }
    g_ptr_array_add(layouts, rs_layout_ref(layout));
    return TRUE;
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

/* --- megatron --- */

static guint
megatron_stage_of(gint layer, guint n_layers, guint pp)
{
    if (layer < 0)
        return 0;
    if ((guint)layer >= n_layers)
        return pp - 1;
    /* Stage s holds [floor(s·L/pp), floor((s+1)·L/pp)). */
    guint s = (guint)(((guint64)layer * pp) / n_layers);
    while (s + 1 < pp && (guint64)(s + 1) * n_layers / pp <= (guint64)layer)
        s++;
    while (s > 0 && (guint64)s * n_layers / pp > (guint64)layer)
        s--;
    return s;
}

static gboolean
megatron_resolve(RsConvention *conv, const RsModel *model, const guint32 *gpus, guint n_gpus,
                 GPtrArray *layouts, GString *summary, GError **error)
{
    gint64 tp = get_or(conv, "tp", 1), cp = get_or(conv, "cp", 1), pp = get_or(conv, "pp", 1);
    gint64 ep = get_or(conv, "ep", 1), etp = get_or(conv, "etp", tp);
    set_value(conv, "tp", tp);
    set_value(conv, "cp", cp);
    set_value(conv, "pp", pp);
    set_value(conv, "ep", ep);
    set_value(conv, "etp", etp);
    if (!derive_dp(conv, tp * cp * pp, "tp x cp x pp", n_gpus, error))
        return FALSE;
    gint64 dp = rs_convention_get(conv, "dp");
    if (!check_world(conv, "tp x cp x dp x pp", tp * cp * dp * pp, n_gpus, error))
        return FALSE;
    gint64 stage_size = tp * cp * dp;
    g_autofree char *desc = rs_convention_format(conv);
    if (stage_size % (ep * etp) != 0) {
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                    "%s: ep x etp = %" G_GINT64_FORMAT " must divide tp x cp x dp = %" G_GINT64_FORMAT,
                    desc, ep * etp, stage_size);
        return FALSE;
    }
    gint64 edp = stage_size / (ep * etp);
    guint n_layers = rs_model_get_n_layers(model);
    if (pp > n_layers) {
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_MODEL,
                    "%s: pp=%" G_GINT64_FORMAT " exceeds the %u layers of %s", desc, pp,
                    n_layers, rs_model_get_name(model));
        return FALSE;
    }

    LayoutCache cache;
    layout_cache_init(&cache);
    gboolean ok = TRUE;
    const guint dense_sizes[3] = {(guint)dp, (guint)cp, (guint)tp};
    const char *const dense_names[3] = {"dp", "cp", "tp"};
    const guint expert_sizes[3] = {(guint)edp, (guint)ep, (guint)etp};
    const char *const expert_names[3] = {"edp", "ep", "etp"};
    for (guint i = 0; ok && i < rs_model_get_n_tensors(model); i++) {
        const RsTensorSpec *t = rs_model_get_tensor(model, i);
        guint stage = megatron_stage_of(t->layer, n_layers, (guint)pp);
        const guint32 *slice = gpus + (gsize)stage * (gsize)stage_size;
        if (t->n_heads != 0 && t->n_heads % tp != 0) {
            g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_MODEL,
                        "%s: tp=%" G_GINT64_FORMAT " does not divide the %u %sheads of %s", desc,
                        tp, t->n_heads, t->kv_heads ? "key/value " : "attention ", t->name);
            ok = FALSE;
            break;
        }
        switch (t->role) {
        case RS_ROLE_COLUMN_PARALLEL:
        case RS_ROLE_VOCAB_PARALLEL:
            ok = add_layout(&cache, layouts, t, slice, 3, dense_sizes, dense_names, "R,R,S(0)",
                            error);
            break;
        case RS_ROLE_ROW_PARALLEL:
            ok = add_layout(&cache, layouts, t, slice, 3, dense_sizes, dense_names, "R,R,S(1)",
                            error);
            break;
        case RS_ROLE_REPLICATED:
        case RS_ROLE_NORM:
        case RS_ROLE_ROUTER:
        case RS_ROLE_COLUMN_SEGMENTED: /* whole until layouts split segments (issue 3) */
            ok = add_layout(&cache, layouts, t, slice, 3, dense_sizes, dense_names, "R,R,R",
                            error);
            break;
        case RS_ROLE_EXPERT_COLUMN:
        case RS_ROLE_EXPERT_ROW:
        case RS_ROLE_EXPERT_REPLICATED:
            if (t->shape[0] % ep != 0) {
                g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_MODEL,
                            "%s: ep=%" G_GINT64_FORMAT " does not divide the %" G_GINT64_FORMAT
                            " experts of %s",
                            desc, ep, t->shape[0], t->name);
                ok = FALSE;
                break;
            }
            ok = add_layout(&cache, layouts, t, slice, 3, expert_sizes, expert_names,
                            t->role == RS_ROLE_EXPERT_COLUMN ? "R,S(0),S(1)"
                            : t->role == RS_ROLE_EXPERT_ROW  ? "R,S(0),S(2)"
                                                             : "R,S(0),R",
                            error);
            break;
        case RS_ROLE_N:
            g_assert_not_reached();
        }
    }
    layout_cache_clear(&cache);
    if (!ok)
        return FALSE;

    for (guint s = 0; s < (guint)pp; s++) {
        guint first = (guint)((guint64)s * n_layers / pp);
        guint last = (guint)((guint64)(s + 1) * n_layers / pp);
        g_autofree char *ranks = rs_ranks_format(gpus + (gsize)s * stage_size, (guint)stage_size);
        g_string_append_printf(summary, "stage %u: GPUs %s, layers %u-%u (%u)%s%s\n", s, ranks,
                               first, last - 1, last - first, s == 0 ? " + embedding" : "",
                               s + 1 == (guint)pp ? " + final norm, head" : "");
    }
    g_string_append_printf(summary,
                           "dense weights: mesh [dp=%" G_GINT64_FORMAT ", cp=%" G_GINT64_FORMAT
                           ", tp=%" G_GINT64_FORMAT "] per stage; experts: mesh [edp=%" G_GINT64_FORMAT
                           ", ep=%" G_GINT64_FORMAT ", etp=%" G_GINT64_FORMAT "] per stage\n",
                           dp, cp, tp, edp, ep, etp);
    return TRUE;
}

/* --- vllm --- */

static gboolean
vllm_resolve(RsConvention *conv, const RsModel *model, const guint32 *gpus, guint n_gpus,
             GPtrArray *layouts, GString *summary, GError **error)
{
    gint64 tp = get_or(conv, "tp", 1);
    set_value(conv, "tp", tp);
    if (!derive_dp(conv, tp, "tp", n_gpus, error))
        return FALSE;
    gint64 dp = rs_convention_get(conv, "dp");
    if (!check_world(conv, "tp x dp", tp * dp, n_gpus, error))
        return FALSE;
    g_autofree char *desc = rs_convention_format(conv);

    LayoutCache cache;
    layout_cache_init(&cache);
    gboolean ok = TRUE;
    const guint sizes[2] = {(guint)dp, (guint)tp};
    const char *const names[2] = {"dp", "tp"};
    for (guint i = 0; ok && i < rs_model_get_n_tensors(model); i++) {
        const RsTensorSpec *t = rs_model_get_tensor(model, i);
        switch (t->role) {
        case RS_ROLE_COLUMN_PARALLEL:
            if (t->n_heads != 0 && t->n_heads % tp != 0) {
                if (t->kv_heads && tp % t->n_heads == 0) {
                    /* Each KV head on tp / n_kv consecutive ranks: split tp into
                     * [n_kv, tp / n_kv] and shard only over the first. */
                    const guint kv_sizes[3] = {(guint)dp, t->n_heads, (guint)(tp / t->n_heads)};
                    const char *const kv_names[3] = {"dp", "tp_kv", "tp_replica"};
                    ok = add_layout(&cache, layouts, t, gpus, 3, kv_sizes, kv_names, "R,S(0),R",
                                    error);
                    break;
                }
                g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_MODEL,
                            "%s: tp=%" G_GINT64_FORMAT " and the %u %sheads of %s: %s", desc, tp,
                            t->n_heads, t->kv_heads ? "key/value " : "attention ", t->name,
                            t->kv_heads ? "neither divides the other"
                                        : "tp must divide the head count");
                ok = FALSE;
                break;
            }
            ok = add_layout(&cache, layouts, t, gpus, 2, sizes, names, "R,S(0)", error);
            break;
        case RS_ROLE_VOCAB_PARALLEL:
            ok = add_layout(&cache, layouts, t, gpus, 2, sizes, names, "R,S(0)", error);
            break;
        case RS_ROLE_ROW_PARALLEL:
            ok = add_layout(&cache, layouts, t, gpus, 2, sizes, names, "R,S(1)", error);
            break;
        case RS_ROLE_REPLICATED:
        case RS_ROLE_NORM:
        case RS_ROLE_ROUTER:
        case RS_ROLE_EXPERT_REPLICATED: /* every rank holds all experts' biases */
        case RS_ROLE_COLUMN_SEGMENTED:  /* whole until layouts split segments (issue 3) */
            ok = add_layout(&cache, layouts, t, gpus, 2, sizes, names, "R,R", error);
            break;
        case RS_ROLE_EXPERT_COLUMN:
            ok = add_layout(&cache, layouts, t, gpus, 2, sizes, names, "R,S(1)", error);
            break;
        case RS_ROLE_EXPERT_ROW:
            ok = add_layout(&cache, layouts, t, gpus, 2, sizes, names, "R,S(2)", error);
            break;
        case RS_ROLE_N:
            g_assert_not_reached();
        }
    }
    layout_cache_clear(&cache);
    if (!ok)
        return FALSE;
    for (gint64 r = 0; r < dp; r++) {
        g_autofree char *ranks = rs_ranks_format(gpus + r * tp, (guint)tp);
        g_string_append_printf(summary, "replica %" G_GINT64_FORMAT ": GPUs %s, tp=%" G_GINT64_FORMAT "\n",
                               r, ranks, tp);
    }
    return TRUE;
}

static const ConventionClass convention_classes[] = {
    {"megatron", {"tp", "cp", "pp", "dp", "ep", "etp", NULL}, megatron_resolve},
    {"vllm", {"tp", "dp", NULL}, vllm_resolve},
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
