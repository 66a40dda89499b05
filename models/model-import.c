/* model-import.c — a model from a safetensors checkpoint: exact names, shapes and dtypes
 * from the headers, roles from name rules.
 *
 * Per-expert tensors (…experts.{e}.NAME for e = 0..E-1) are stacked into one grouped tensor
 * …experts.NAME [E, …], as the generators emit them, so that conventions split experts over
 * expert parallelism the same way for both; the set must be complete (every id once) with
 * one shape and dtype. Storage suffixes tell the format: NAME_blocks and NAME.weight_packed
 * hold MXFP4 (two parameters per byte), NAME_scales, NAME.weight_scale and
 * NAME.weight_scale_inv hold scales (no parameters), and so do F8_E8M0 tensors. A rule is
 * matched against the name with those suffixes mapped back to the weight's name
 * (q_a_proj.weight_scale_inv → q_a_proj.weight), so a scale always gets its weight's role.
 * Rules are tried in order; the first match wins; user rules (a model YAML's `roles:`) come
 * before the built-in ones. */
#include "models/model-import-private.h"

#include "models/safetensors.h"

#include <string.h>

typedef enum {
    HEADS_NONE,
    HEADS_Q,  /* num_attention_heads */
    HEADS_KV, /* num_key_value_heads, marked as key/value heads */
} HeadsKind;

typedef struct {
    const char *patterns; /* '|'-separated globs ('*' any run, '?' one character) */
    gint role;            /* an RsTensorRole, or ROLE_SKIP */
    HeadsKind heads;
    const char *why;
} RoleRule;

#define ROLE_SKIP (-1)

/* The built-in rules, in the order they are tried. */
static const RoleRule builtin_rules[] = {
    {"*.rotary_emb.inv_freq", ROLE_SKIP, HEADS_NONE, "rotary buffers are not parameters"},
    {"vision_tower.*|mm_projector.*|visual.*|*.visual.*|*.vision_tower.*|*.mm_projector.*|"
     "vision_model.*|multi_modal_projector.*|*.vision_model.*|*.multi_modal_projector.*",
     RS_ROLE_REPLICATED, HEADS_NONE, "a vision encoder and its projector are held whole on every "
                                     "rank"},
    {"*.self_attn.indexer.*", RS_ROLE_REPLICATED, HEADS_NONE,
     "the DeepSeek-V3.2 indexer is replicated (vLLM deepseek_v2.py Indexer: ReplicatedLinear)"},
    {"*.feed_forward.experts.gate_up_proj|model.language_model.layers.*.mlp.experts.gate_up_proj",
     RS_ROLE_EXPERT_GATE_UP_FUSED, HEADS_NONE,
     "fused routed gate/up as two halves (Llama-4 [E, H, 2I], Qwen3.5 [E, 2I, H]): experts over "
     "ep, each half over tp"},
    {"*.feed_forward.experts.down_proj", RS_ROLE_EXPERT_COLUMN, HEADS_NONE,
     "Llama-4 routed down [E, I, H]: experts over ep, I over tp"},
    {"*embed_tokens.weight|*lm_head.weight|*shared_head.head.weight", RS_ROLE_VOCAB_PARALLEL,
     HEADS_NONE, "embeddings and output heads split on the vocabulary"},
    {"*.experts.down_proj_bias", RS_ROLE_EXPERT_REPLICATED, HEADS_NONE,
     "a routed down-projection bias is added after the reduction"},
    {"*.experts.gate_up_proj_bias|*.experts.gate_up_proj|*.experts.gate_up_proj.weight|"
     "*.experts.gate_proj.weight|*.experts.up_proj.weight|*.experts.w1.weight|"
     "*.experts.w3.weight",
     RS_ROLE_EXPERT_COLUMN, HEADS_NONE, "routed gate/up: experts over ep, rows over tp"},
    {"*.experts.down_proj|*.experts.down_proj.weight|*.experts.w2.weight", RS_ROLE_EXPERT_ROW,
     HEADS_NONE, "routed down: experts over ep, columns over tp"},
    {"*.mlp.gate.weight|*.gate.e_score_correction_bias|*.block_sparse_moe.gate.weight|"
     "*.mlp.router.weight|*.mlp.router.bias|*.shared_expert_gate.weight|"
     "*.feed_forward.router.weight",
     RS_ROLE_ROUTER, HEADS_NONE, "routers and their biases are replicated"},
    {"*norm.weight|*norm|*.pre_fc_norm_embedding.weight|*.pre_fc_norm_hidden.weight|"
     "mtp.pre_fc_norm_*.weight",
     RS_ROLE_NORM, HEADS_NONE, "norm weights are replicated"},
    {"*.self_attn.q_proj.weight|*.self_attn.q_proj.bias|*.self_attn.q_b_proj.weight|"
     "*.self_attn.kv_b_proj.weight|*.self_attn.sinks",
     RS_ROLE_COLUMN_PARALLEL, HEADS_Q, "query-head projections split on whole heads"},
    {"*.self_attn.k_proj.weight|*.self_attn.k_proj.bias|*.self_attn.v_proj.weight|"
     "*.self_attn.v_proj.bias",
     RS_ROLE_COLUMN_PARALLEL, HEADS_KV, "key/value projections split on whole KV heads"},
    {"*.self_attn.A_log", RS_ROLE_NORM, HEADS_NONE,
     "Kimi delta-attention A_log is stored zero-padded; every rank takes its heads from it"},
    {"*.linear_attn.conv1d.weight|*.linear_attn.in_proj_qkv.weight", RS_ROLE_COLUMN_SEGMENTED,
     HEADS_NONE, "the Gated DeltaNet convolution and Qwen3.5's projection over [q; k; v] split "
                 "per segment"},
    {"*.self_attn.g_proj.weight|*.self_attn.f_b_proj.weight|*.self_attn.g_b_proj.weight|"
     "*.self_attn.b_proj.weight|*_conv1d.weight|*.self_attn.dt_bias|"
     "*.linear_attn.in_proj_qkvz.weight|*.linear_attn.in_proj_ba.weight|"
     "*.linear_attn.in_proj_z.weight|*.linear_attn.in_proj_b.weight|"
     "*.linear_attn.in_proj_a.weight|"
     "*.linear_attn.dt_bias|*.linear_attn.A_log|*.mlp.gate_proj.bias|*.mlp.up_proj.bias",
     RS_ROLE_COLUMN_PARALLEL, HEADS_NONE, "per-head projections and vectors split on rows"},
    {"*.q_a_proj.weight|*.kv_a_proj_with_mqa.weight|*.f_a_proj.weight|*.g_a_proj.weight|"
     "*.eh_proj.weight|mtp.fc.weight|*.routed_expert_down_proj.weight|"
     "*.routed_expert_up_proj.weight|*_res_proj.weight",
     RS_ROLE_REPLICATED, HEADS_NONE, "low-rank down-projections and small linears are replicated"},
    {"*.o_proj.bias|*.down_proj.bias", RS_ROLE_NORM, HEADS_NONE,
     "a row-parallel bias is added after the reduction"},
    {"*.o_proj.weight|*.out_proj.weight|*.down_proj.weight|*.w2.weight", RS_ROLE_ROW_PARALLEL,
     HEADS_NONE, "output and down projections split on columns"},
    {"*.gate_proj.weight|*.up_proj.weight|*.w1.weight|*.w3.weight|*.gate_up_proj.weight",
     RS_ROLE_COLUMN_PARALLEL, HEADS_NONE, "gate and up projections split on rows"},
};

const char *
rs_model_role_rules_describe(void)
{
    static char *text = NULL;
    if (g_once_init_enter(&text)) {
        GString *s = g_string_new(
            "Names are matched after mapping storage suffixes to the weight's name "
            "(_blocks, .weight_packed, _scales, .weight_scale, .weight_scale_inv), and after "
            "stacking experts.{e}.NAME into experts.NAME; the first matching rule wins.\n");
        for (guint i = 0; i < G_N_ELEMENTS(builtin_rules); i++) {
            const RoleRule *r = &builtin_rules[i];
            g_string_append_printf(s, "%u. %s -> %s%s (%s)\n", i + 1, r->patterns,
                                   r->role == ROLE_SKIP ? "skipped"
                                                        : rs_tensor_role_get_name(r->role),
                                   r->heads == HEADS_Q    ? ", query heads"
                                   : r->heads == HEADS_KV ? ", key/value heads"
                                                          : "",
                                   r->why);
        }
        g_once_init_leave(&text, g_string_free(s, FALSE));
    }
    return text;
}

/* A user rule from a model YAML: roles: {"GLOB": "ROLE [heads=N|kv_heads=N]"}. */
typedef struct {
    GPatternSpec *pattern;
    char *glob;
    gint role;
    guint n_heads;
    gboolean kv;
} UserRule;

static void
user_rule_free(gpointer p)
{
    UserRule *r = p;
    g_pattern_spec_free(r->pattern);
    g_free(r->glob);
    g_free(r);
}

typedef struct {
    GPtrArray *rules;
    GError *error;
} UserRuleParse;

static void
parse_user_rule(const char *glob, const char *value, const char *where, gpointer data)
{
    UserRuleParse *p = data;
    if (p->error != NULL)
        return;
    g_auto(GStrv) words = g_strsplit_set(value ? value : "", " \t", -1);
    UserRule *r = g_new0(UserRule, 1);
    r->pattern = g_pattern_spec_new(glob);
    r->glob = g_strdup(glob);
    RsTensorRole role;
    const char *first = words[0] ? words[0] : "";
    if (strcmp(first, "skip") == 0) {
        r->role = ROLE_SKIP;
    } else if (rs_tensor_role_parse(first, &role)) {
        r->role = role;
    } else {
        GString *names = g_string_new(NULL);
        for (guint i = 0; i < RS_ROLE_N; i++)
            g_string_append_printf(names, "%s, ", rs_tensor_role_get_name((RsTensorRole)i));
        g_set_error(&p->error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                    "%s: roles.%s: unknown role \"%s\" (known: %sskip)", where, glob, first,
                    names->str);
        g_string_free(names, TRUE);
        user_rule_free(r);
        return;
    }
    for (guint i = 1; words[i] != NULL; i++) {
        if (*words[i] == '\0')
            continue;
        guint64 n;
        gboolean kv = g_str_has_prefix(words[i], "kv_heads=");
        const char *num = strchr(words[i], '=');
        if ((!kv && !g_str_has_prefix(words[i], "heads=")) || num == NULL ||
            !g_ascii_string_to_unsigned(num + 1, 10, 1, 1 << 20, &n, NULL)) {
            g_set_error(&p->error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                        "%s: roles.%s: \"%s\": expected heads=N or kv_heads=N after the role",
                        where, glob, words[i]);
            user_rule_free(r);
            return;
        }
        r->n_heads = (guint)n;
        r->kv = kv;
    }
    g_ptr_array_add(p->rules, r);
}

/* Compiled built-in rules: one GPatternSpec per alternative, built once per import. */
typedef struct {
    GPtrArray *specs; /* GPatternSpec*, each tagged by rule index in rule_of */
    GArray *rule_of;  /* guint */
} CompiledRules;

static void
compiled_rules_init(CompiledRules *c)
{
    c->specs = g_ptr_array_new_with_free_func((GDestroyNotify)g_pattern_spec_free);
    c->rule_of = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint i = 0; i < G_N_ELEMENTS(builtin_rules); i++) {
        g_auto(GStrv) patterns = g_strsplit(builtin_rules[i].patterns, "|", -1);
        for (guint j = 0; patterns[j] != NULL; j++) {
            g_ptr_array_add(c->specs, g_pattern_spec_new(patterns[j]));
            g_array_append_val(c->rule_of, i);
        }
    }
}

static void
compiled_rules_clear(CompiledRules *c)
{
    g_ptr_array_unref(c->specs);
    g_array_unref(c->rule_of);
}

/* Index of the first built-in rule matching @name, or -1. Alternatives are stored in rule
 * order, so the first matching alternative belongs to the first matching rule. */
static gint
compiled_rules_match(const CompiledRules *c, const char *name)
{
    for (guint i = 0; i < c->specs->len; i++)
        if (g_pattern_spec_match_string(g_ptr_array_index(c->specs, i), name))
            return (gint)g_array_index(c->rule_of, guint, i);
    return -1;
}

/* Maps storage suffixes back to the weight's name and tells the format. */
static char *
rule_name(const char *name, RsTensorFormat *format)
{
    static const struct {
        const char *suffix;
        const char *replacement;
        RsTensorFormat format;
    } suffixes[] = {
        {".weight_scale_inv", ".weight", RS_TENSOR_FORMAT_SCALE},
        {".weight_scale", ".weight", RS_TENSOR_FORMAT_SCALE},
        {".weight_packed", ".weight", RS_TENSOR_FORMAT_MXFP4},
        /* compressed-tensors' logical [out, in] of a packed weight: no parameters. */
        {".weight_shape", ".weight", RS_TENSOR_FORMAT_SCALE},
        {".input_scale", ".weight", RS_TENSOR_FORMAT_SCALE},
        {"_blocks", "", RS_TENSOR_FORMAT_MXFP4},
        {"_scales", "", RS_TENSOR_FORMAT_SCALE},
    };
    for (guint i = 0; i < G_N_ELEMENTS(suffixes); i++) {
        if (g_str_has_suffix(name, suffixes[i].suffix)) {
            *format = suffixes[i].format;
            return g_strdup_printf("%.*s%s", (int)(strlen(name) - strlen(suffixes[i].suffix)), name,
                                   suffixes[i].replacement);
        }
    }
    *format = RS_TENSOR_FORMAT_PLAIN;
    return g_strdup(name);
}

/* Is @name a tensor of a vision tower or its projector (Kimi vision_tower. and
 * mm_projector., Qwen-VL visual., Llama-4 vision_model. and multi_modal_projector.)? */
static gboolean
is_vision_name(const char *name)
{
    static const char *const prefixes[] = {"vision_tower.", "mm_projector.", "visual.",
                                           "vision_model.", "multi_modal_projector."};
    for (guint i = 0; i < G_N_ELEMENTS(prefixes); i++) {
        g_autofree char *inner = g_strconcat(".", prefixes[i], NULL);
        if (g_str_has_prefix(name, prefixes[i]) || strstr(name, inner) != NULL)
            return TRUE;
    }
    return FALSE;
}

/* The layer of a checkpoint tensor: N of a "layers.N" component, offset past the decoder
 * for "mtp." names; -1 for embeddings and vision tensors; @n_layers for the rest. */
static gint
tensor_layer(const char *name, guint n_layers, gboolean *is_mtp)
{
    *is_mtp = g_str_has_prefix(name, "mtp.") || strstr(name, ".mtp.") != NULL;
    /* Vision towers first: the Llama-4 vision model has layers of its own. */
    if (is_vision_name(name))
        return -1;
    const char *p = name;
    while ((p = strstr(p, "layers.")) != NULL) {
        gboolean at_component = p == name || p[-1] == '.';
        const char *digits = p + strlen("layers.");
        const char *end = digits;
        while (g_ascii_isdigit(*end))
            end++;
        if (at_component && end > digits && (*end == '.' || *end == '\0')) {
            gint layer = (gint)g_ascii_strtoll(digits, NULL, 10);
            if (*is_mtp)
                return (gint)n_layers + layer;
            if (n_layers > 0 && layer >= (gint)n_layers)
                *is_mtp = TRUE;
            return layer;
        }
        p = digits;
    }
    if (g_str_has_suffix(name, "embed_tokens.weight") && !*is_mtp)
        return -1;
    return (gint)n_layers;
}

typedef struct {
    char *name; /* grouped name */
    RsDtype dtype;
    gboolean e8m0;
    guint n_dims;
    gint64 shape[RS_MAX_DIMS];
    GHashTable *ids; /* expert id → TRUE */
    gint64 max_id;
    gboolean emitted;
    char *first_member; /* for messages */
} ExpertGroup;

static void
expert_group_free(gpointer p)
{
    ExpertGroup *g = p;
    g_free(g->name);
    g_free(g->first_member);
    g_hash_table_unref(g->ids);
    g_free(g);
}

/* Reads an integer key from @config, else from @side (the config.json beside the
 * checkpoint); 0 when neither has it. */
static gint64
config_int(RsModelConfig *config, RsModelConfig *side, const char *key)
{
    gint64 v = 0;
    if (config != NULL && rs_model_config_has(config, key))
        rs_model_config_get_int(config, key, FALSE, 0, G_MAXINT32, &v, NULL);
    else if (side != NULL && rs_model_config_has(side, key))
        rs_model_config_get_int(side, key, FALSE, 0, G_MAXINT32, &v, NULL);
    return v;
}

static gint64
config_int_any(RsModelConfig *config, RsModelConfig *side, const char *const *keys)
{
    for (guint i = 0; keys[i] != NULL; i++) {
        gint64 v = config_int(config, side, keys[i]);
        if (v > 0)
            return v;
    }
    return 0;
}

typedef struct {
    guint n_heads, n_kv_heads;
    gint64 conv_segments[3]; /* Qwen3-Next conv1d [Kd, Kd, Vd], 0 when unknown */
} HeadCounts;

/* Adds tensor @t (or the group it heads) to @m with its role. */
static gboolean
add_imported(RsModel *m, const char *name, RsDtype dtype, gboolean e8m0, guint n_dims,
             const gint64 *shape, gint layer, GPtrArray *user_rules, const CompiledRules *rules,
             const HeadCounts *heads, const char *source, GError **error)
{
    RsTensorFormat format;
    g_autofree char *matched = rule_name(name, &format);
    if (e8m0)
        format = RS_TENSOR_FORMAT_SCALE;
    gint role = -2;
    guint n_heads = 0;
    gboolean kv = FALSE;
    for (guint i = 0; user_rules != NULL && i < user_rules->len; i++) {
        UserRule *r = g_ptr_array_index(user_rules, i);
        if (g_pattern_spec_match_string(r->pattern, name) ||
            g_pattern_spec_match_string(r->pattern, matched)) {
            role = r->role;
            n_heads = r->n_heads;
            kv = r->kv;
            break;
        }
    }
    if (role == -2) {
        gint rule = compiled_rules_match(rules, matched);
        if (rule < 0) {
            g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_ROLE,
                        "%s: tensor \"%s\": no rule gives it a role; add one to a model YAML "
                        "(safetensors: PATH, roles: {\"GLOB\": ROLE})",
                        source, name);
            return FALSE;
        }
        role = builtin_rules[rule].role;
        if (builtin_rules[rule].heads == HEADS_Q)
            n_heads = heads->n_heads;
        else if (builtin_rules[rule].heads == HEADS_KV) {
            n_heads = heads->n_kv_heads;
            kv = TRUE;
        }
    }
    if (role == ROLE_SKIP)
        return TRUE;
    /* compressed-tensors' weight_shape [2] (grouped [E, 2]) is every rank's whole. */
    if (g_str_has_suffix(name, ".weight_shape"))
        role = strstr(name, "experts.") != NULL ? RS_ROLE_EXPERT_REPLICATED : RS_ROLE_REPLICATED;
    /* A fused gate/up's halves lie along its output dim: the last of Llama-4's [E, in, out]
     * feed_forward.experts (transformers Llama4TextExperts), dim 1 of the [E, out, in]
     * others. Without an even extent there, it is held whole over tp (a superset). */
    guint halves_dim = strstr(name, "feed_forward.experts.") != NULL ? 2 : 1;
    if (role == RS_ROLE_EXPERT_GATE_UP_FUSED && (n_dims != 3 || shape[halves_dim] % 2 != 0))
        role = RS_ROLE_EXPERT_REPLICATED;
    rs_model_add_tensor_shape(m, name, (RsTensorRole)role, layer, dtype, n_heads, n_dims, shape);
    if (role == RS_ROLE_EXPERT_GATE_UP_FUSED)
        rs_model_set_last_gate_up_halves(m, halves_dim);
    if (kv)
        rs_model_mark_kv_heads(m);
    if (role == RS_ROLE_COLUMN_SEGMENTED && heads->conv_segments[0] > 0 &&
        2 * heads->conv_segments[0] + heads->conv_segments[2] == shape[0])
        rs_model_set_last_segments(m, 3, heads->conv_segments);
    guint64 elems = 1;
    for (guint d = 0; d < n_dims; d++)
        elems *= (guint64)shape[d];
    /* compressed-tensors packs eight int4 values into each I32 word (pack-quantized,
     * Kimi-K2.5), two FP4 values into each byte otherwise (MXFP4). */
    if (format == RS_TENSOR_FORMAT_MXFP4 && dtype == RS_DTYPE_I32)
        rs_model_set_last_format(m, RS_TENSOR_FORMAT_INT4, 8 * elems);
    else if (format == RS_TENSOR_FORMAT_MXFP4)
        rs_model_set_last_format(m, format, 2 * elems);
    else if (format == RS_TENSOR_FORMAT_SCALE)
        rs_model_set_last_format(m, format, 0);
    return TRUE;
}

/* --- the import, stage by stage --- */

/* Reads the counts the rules and the container need from @config, else from the
 * config.json beside the checkpoint: sets m->n_experts_per_token, *@heads and *@n_layers
 * (0 when neither says). */
static gboolean
read_counts(RsModel *m, const char *path, RsModelConfig *config, HeadCounts *heads,
            gint64 *n_layers, GError **error)
{
    g_autofree char *dir = g_path_get_dirname(path);
    g_autofree char *side_path = g_build_filename(dir, "config.json", NULL);
    g_autoptr(RsModelConfig) side = NULL;
    if (g_strcmp0(side_path, rs_model_config_get_source(config)) != 0 &&
        g_file_test(side_path, G_FILE_TEST_IS_REGULAR)) {
        side = rs_model_config_new(side_path);
        if (!rs_model_config_load_json(side, side_path, error))
            return FALSE;
    }
    static const char *const layers_keys[] = {"num_hidden_layers", NULL};
    static const char *const heads_keys[] = {"num_attention_heads", NULL};
    static const char *const kv_keys[] = {"num_key_value_heads", NULL};
    static const char *const topk_keys[] = {"num_experts_per_tok", "num_experts_per_token",
                                            "experts_per_token", NULL};
    *n_layers = config_int_any(config, side, layers_keys);
    *heads = (HeadCounts){0};
    heads->n_heads = (guint)config_int_any(config, side, heads_keys);
    heads->n_kv_heads = (guint)config_int_any(config, side, kv_keys);
    if (heads->n_kv_heads == 0)
        heads->n_kv_heads = heads->n_heads;
    gint64 lk = config_int(config, side, "linear_num_key_heads");
    gint64 lkd = config_int(config, side, "linear_key_head_dim");
    gint64 lv = config_int(config, side, "linear_num_value_heads");
    gint64 lvd = config_int(config, side, "linear_value_head_dim");
    if (lk > 0 && lkd > 0 && lv > 0 && lvd > 0) {
        heads->conv_segments[0] = heads->conv_segments[1] = lk * lkd;
        heads->conv_segments[2] = lv * lvd;
    }
    m->n_experts_per_token = (guint)config_int_any(config, side, topk_keys);
    return TRUE;
}

/* Sets m->n_layers to @n_layers or, when no config says (0), to one past the highest
 * decoder layer index seen; fails for a checkpoint without tensors and when the model's
 * layer range runs past it; warns (in @config) of decoder layers without tensors. */
static gboolean
set_layer_count(RsModel *m, GPtrArray *tensors, gint64 n_layers, const char *path,
                RsModelConfig *config, GError **error)
{
    if (n_layers == 0) {
        for (guint i = 0; i < tensors->len; i++) {
            RsSafetensorsTensor *t = g_ptr_array_index(tensors, i);
            gboolean mtp;
            gint layer = tensor_layer(t->name, 0, &mtp);
            if (!mtp)
                n_layers = MAX(n_layers, (gint64)layer + 1);
        }
    }
    if (tensors->len == 0) {
        g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                    "%s: the checkpoint holds no tensors", path);
        return FALSE;
    }
    /* Decoder layers without tensors: the checkpoint is refit as it is (a layer subset is
     * a checkpoint of what it holds), but the user is told, since a shard read alone
     * instead of its index looks the same (layers 0 and 5 only were read as 6 layers in
     * silence). */
    g_autofree gboolean *seen = g_new0(gboolean, MAX(n_layers, 1));
    for (guint i = 0; i < tensors->len; i++) {
        RsSafetensorsTensor *t = g_ptr_array_index(tensors, i);
        gboolean mtp;
        gint layer = tensor_layer(t->name, (guint)n_layers, &mtp);
        if (!mtp && layer >= 0 && layer < n_layers)
            seen[layer] = TRUE;
    }
    g_autoptr(GString) missing = g_string_new(NULL);
    gint64 n_missing = 0;
    for (gint64 l = 0; l < n_layers; l++) {
        if (seen[l])
            continue;
        gint64 last = l;
        while (last + 1 < n_layers && !seen[last + 1])
            last++;
        g_string_append_printf(missing, "%s%" G_GINT64_FORMAT, missing->len ? ", " : "", l);
        if (last > l)
            g_string_append_printf(missing, "-%" G_GINT64_FORMAT, last);
        n_missing += last - l + 1;
        l = last;
    }
    if (n_missing > 0)
        rs_model_config_warn(config, "num_hidden_layers",
                             "%" G_GINT64_FORMAT " of the %" G_GINT64_FORMAT " decoder layers "
                             "have no tensors in %s (layer%s %s): only what the checkpoint "
                             "holds is refit (a shard read alone? give its "
                             "model.safetensors.index.json)",
                             n_missing, n_layers, path, n_missing == 1 ? "" : "s",
                             missing->str);
    m->n_layers = (guint)n_layers;
    if (m->has_layer_range && m->last_layer >= (gint)m->n_layers) {
        g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_LAYER_RANGE,
                    "layers %d-%d: the model in %s has layers 0-%u", m->first_layer,
                    m->last_layer, path, m->n_layers - 1);
        return FALSE;
    }
    return TRUE;
}

/* Returns: (transfer full) (element-type UserRule): the `roles:` rules of @config, in order,
 * or NULL with RS_MODEL_ERROR_CONFIG for a rule that does not parse. */
static GPtrArray *
parse_user_rules(RsModelConfig *config, GError **error)
{
    g_autoptr(GPtrArray) user_rules = g_ptr_array_new_with_free_func(user_rule_free);
    UserRuleParse parse = {user_rules, NULL};
    rs_model_config_foreach_prefix(config, "roles.", parse_user_rule, &parse);
    if (parse.error != NULL) {
        g_propagate_error(error, parse.error);
        return NULL;
    }
    return g_steal_pointer(&user_rules);
}

/* Adds expert @id, tensor @t, to its group @group_name in @groups (created on its first
 * member); fails when @t's shape or dtype differs from the group's, when stacking would
 * exceed RS_MAX_DIMS, or when the id repeats. */
static gboolean
group_expert(GHashTable *groups, char *group_name, gint64 id, const RsSafetensorsTensor *t,
             const char *path, GError **error)
{
    ExpertGroup *g = g_hash_table_lookup(groups, group_name);
    if (g == NULL) {
        g = g_new0(ExpertGroup, 1);
        g->name = g_strdup(group_name);
        g->dtype = t->dtype;
        g->e8m0 = t->e8m0;
        g->n_dims = t->n_dims;
        memcpy(g->shape, t->shape, sizeof g->shape);
        g->ids = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
        g->max_id = -1;
        g->first_member = g_strdup(t->name);
        g_hash_table_insert(groups, g->name, g);
    }
    gboolean same = g->dtype == t->dtype && g->n_dims == t->n_dims &&
                    memcmp(g->shape, t->shape, sizeof(gint64) * t->n_dims) == 0;
    if (!same) {
        g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                    "%s: tensor \"%s\": its shape or dtype differs from \"%s\"; experts of "
                    "one projection must agree to be stacked",
                    path, t->name, g->first_member);
        return FALSE;
    }
    if (g->n_dims + 1 > RS_MAX_DIMS) {
        g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                    "%s: tensor \"%s\": %u dims, one too many to stack experts", path, t->name,
                    g->n_dims);
        return FALSE;
    }
    gint64 *key = g_new(gint64, 1);
    *key = id;
    if (!g_hash_table_add(g->ids, key)) {
        g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                    "%s: tensor \"%s\" appears twice", path, t->name);
        return FALSE;
    }
    g->max_id = MAX(g->max_id, id);
    return TRUE;
}

/* Fails naming the first missing id of a group whose ids do not run 0..max_id. */
static gboolean
check_groups_complete(GHashTable *groups, const char *path, GError **error)
{
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, groups);
    while (g_hash_table_iter_next(&iter, NULL, &value)) {
        ExpertGroup *g = value;
        guint n = g_hash_table_size(g->ids);
        if ((gint64)n != g->max_id + 1) {
            gint64 missing = 0;
            while (g_hash_table_contains(g->ids, &missing))
                missing++;
            g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                        "%s: experts of \"%s\": ids run to %" G_GINT64_FORMAT
                        " but expert %" G_GINT64_FORMAT " is missing",
                        path, g->name, g->max_id, missing);
            return FALSE;
        }
    }
    return TRUE;
}

/* Pass 1. Returns: (transfer full): grouped name → ExpertGroup for every set of
 * …experts.{e}.NAME tensors, each complete and uniform; NULL on error. */
static GHashTable *
collect_expert_groups(GPtrArray *tensors, const char *path, GError **error)
{
    g_autoptr(GHashTable) groups =
        g_hash_table_new_full(g_str_hash, g_str_equal, NULL, expert_group_free);
    for (guint i = 0; i < tensors->len; i++) {
        RsSafetensorsTensor *t = g_ptr_array_index(tensors, i);
        gint64 id;
        g_autofree char *group_name = rs_model_expert_group_name(t->name, &id);
        if (group_name != NULL && !group_expert(groups, group_name, id, t, path, error))
            return NULL;
    }
    if (!check_groups_complete(groups, path, error))
        return NULL;
    return g_steal_pointer(&groups);
}

/* What pass 2 adds each tensor with. */
typedef struct {
    GHashTable *groups;
    GPtrArray *user_rules;
    CompiledRules rules;
    const HeadCounts *heads;
    const char *path;
} ImportRules;

/* Pass 2: adds the tensors to @m in checkpoint order, each expert group (stacked) where its
 * first member is; MTP tensors only with @include_mtp. The model's dtype is the first
 * embedding's. */
static gboolean
add_tensors(RsModel *m, GPtrArray *tensors, const ImportRules *r, gboolean include_mtp,
            GError **error)
{
    gboolean have_embedding_dtype = FALSE;
    for (guint i = 0; i < tensors->len; i++) {
        RsSafetensorsTensor *t = g_ptr_array_index(tensors, i);
        gboolean mtp;
        gint layer = tensor_layer(t->name, m->n_layers, &mtp);
        if (mtp && !include_mtp)
            continue;
        if (!have_embedding_dtype && g_str_has_suffix(t->name, "embed_tokens.weight")) {
            m->dtype = t->dtype;
            have_embedding_dtype = TRUE;
        }
        gint64 id;
        g_autofree char *group_name = rs_model_expert_group_name(t->name, &id);
        gboolean ok;
        if (group_name != NULL) {
            ExpertGroup *g = g_hash_table_lookup(r->groups, group_name);
            if (g->emitted)
                continue;
            g->emitted = TRUE;
            gint64 shape[RS_MAX_DIMS];
            shape[0] = g->max_id + 1;
            memcpy(shape + 1, g->shape, sizeof(gint64) * g->n_dims);
            ok = add_imported(m, g->name, g->dtype, g->e8m0, g->n_dims + 1, shape, layer,
                              r->user_rules, &r->rules, r->heads, r->path, error);
        } else {
            ok = add_imported(m, t->name, t->dtype, t->e8m0, t->n_dims, t->shape, layer,
                              r->user_rules, &r->rules, r->heads, r->path, error);
        }
        if (!ok)
            return FALSE;
    }
    return TRUE;
}

gboolean
rs_model_import_safetensors(RsModel *m, const char *path, RsModelConfig *config,
                            const RsModelOptions *options, GError **error)
{
    g_autoptr(GPtrArray) tensors = rs_safetensors_read(path, error);
    if (tensors == NULL)
        return FALSE;
    HeadCounts heads;
    gint64 n_layers;
    if (!read_counts(m, path, config, &heads, &n_layers, error) ||
        !set_layer_count(m, tensors, n_layers, path, config, error))
        return FALSE;
    g_autoptr(GPtrArray) user_rules = parse_user_rules(config, error);
    if (user_rules == NULL)
        return FALSE;
    g_autoptr(GHashTable) groups = collect_expert_groups(tensors, path, error);
    if (groups == NULL)
        return FALSE;
    ImportRules rules = {groups, user_rules, {0}, &heads, path};
    compiled_rules_init(&rules.rules);
    gboolean ok = add_tensors(m, tensors, &rules, options->include_mtp, error);
    compiled_rules_clear(&rules.rules);
    if (!ok)
        return FALSE;
    /* A rule that no tensor name of the checkpoint matches (nor its experts' stacked
     * name) does nothing: most likely a typo, said rather than passed over. */
    for (guint i = 0; i < user_rules->len; i++) {
        UserRule *u = g_ptr_array_index(user_rules, i);
        gboolean any = FALSE;
        for (guint k = 0; !any && k < tensors->len; k++) {
            const RsSafetensorsTensor *t = g_ptr_array_index(tensors, k);
            gint64 id;
            RsTensorFormat format;
            g_autofree char *group = rs_model_expert_group_name(t->name, &id);
            const char *name = group != NULL ? group : t->name; /* as add_tensors() names it */
            g_autofree char *mapped = rule_name(name, &format);
            any = g_pattern_spec_match_string(u->pattern, name) ||
                  g_pattern_spec_match_string(u->pattern, mapped) ||
                  g_pattern_spec_match_string(u->pattern, t->name);
        }
        if (!any) {
            g_autofree char *key = g_strconcat("roles.", u->glob, NULL);
            rs_model_config_warn(config, key, "matches no tensor of the checkpoint (a typo?)");
        }
    }
    /* A checkpoint YAML may carry the whole config.json; only the keys above are read. */
    rs_model_config_consume_prefix(config, "");
    return TRUE;
}
