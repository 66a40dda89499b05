/* sweep.c — the grid (sweep.h): points made in nesting order, each run on a thread of a
 * GLib thread pool into its own result slot (so the thread count changes nothing but the
 * wall time), then the queries over the results and the one table that lists them. */
#include "analysis/sweep.h"

#include "analysis/report.h"
#include "base/data.h"
#include "base/dtype.h"
#include "base/mesh.h"
#include "base/units.h"
#include "base/yaml-reader.h"
#include "plan/policy.h"
#include "topologies/topology.h"
#include "sim/evaluate.h"
#include "sim/lower-bound.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(rs-sweep-error-quark, rs_sweep_error)
/* clang-format on */

void
rs_sweep_grid_init(RsSweepGrid *g)
{
    g->tp = g_array_new(FALSE, FALSE, sizeof(gint64));
    g->pp = g_array_new(FALSE, FALSE, sizeof(gint64));
    g->dp = g_array_new(FALSE, FALSE, sizeof(gint64));
    g->gpus = g_array_new(FALSE, FALSE, sizeof(gint64));
    g->ep = g_array_new(FALSE, FALSE, sizeof(gboolean));
    g->topologies = g_ptr_array_new_with_free_func(g_free);
    g->nic_bw = g_array_new(FALSE, FALSE, sizeof(double));
    g->infer_dtypes = g_ptr_array_new_with_free_func(g_free);
    g->strategies = g_ptr_array_new_with_free_func(g_free);
}

void
rs_sweep_grid_clear(RsSweepGrid *g)
{
    g_clear_pointer(&g->tp, g_array_unref);
    g_clear_pointer(&g->pp, g_array_unref);
    g_clear_pointer(&g->dp, g_array_unref);
    g_clear_pointer(&g->gpus, g_array_unref);
    g_clear_pointer(&g->ep, g_array_unref);
    g_clear_pointer(&g->topologies, g_ptr_array_unref);
    g_clear_pointer(&g->nic_bw, g_array_unref);
    g_clear_pointer(&g->infer_dtypes, g_ptr_array_unref);
    g_clear_pointer(&g->strategies, g_ptr_array_unref);
}

/* --- the sweep file --- */

/* The values of @key: a sequence, or one scalar taken as a list of one. Returns the nodes
 * in *@items (borrowed from @y). */
static GPtrArray *
yaml_list(RsYaml *y, yaml_node_t *root, const char *key)
{
    yaml_node_t *n = rs_yaml_lookup(y, root, key);
    if (n == NULL)
        return NULL;
    GPtrArray *items = g_ptr_array_new();
    g_ptr_array_add(items, n); /* [0]: the key's node, for messages; the items follow */
    if (n->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++)
            g_ptr_array_add(items, rs_yaml_node_at(y, *it));
    } else {
        g_ptr_array_add(items, n);
    }
    return items;
}

/* An axis given as an empty list ("tp: []") would fall back to the scenario's value. */
static gboolean
yaml_nonempty(RsYaml *y, const GPtrArray *items, const char *key, GError **error)
{
    if (items->len > 1)
        return TRUE;
    rs_yaml_set_error(y, items->pdata[0], NULL, key, error, RS_YAML_ERROR_VALUE,
                      "an empty list; give its values or leave the key out");
    return FALSE;
}

static gboolean
yaml_scalar(RsYaml *y, yaml_node_t *n, const char *key, const char **text, GError **error)
{
    *text = n ? rs_yaml_scalar_value(n) : NULL;
    if (*text == NULL) {
        rs_yaml_set_error(y, n, NULL, key, error, RS_YAML_ERROR_TYPE,
                          "expected a value or a list of values");
        return FALSE;
    }
    return TRUE;
}

gboolean
rs_sweep_check_axis_value(const char *key, const char *value, GError **error)
{
    if (strcmp(key, "topology") == 0) {
        g_autofree char *path = rs_data_find("topologies", value, error);
        return path != NULL && rs_topology_check_file(path, error);
    }
    if (strcmp(key, "infer_dtype") == 0) {
        RsDtype d;
        return rs_dtype_parse(value, &d, error);
    }
    if (strcmp(key, "strategy") == 0) {
        RsStrategy st;
        g_autoptr(GError) local = NULL;
        if (strcmp(value, "auto") == 0 || rs_strategy_parse(value, &st, &local))
            return TRUE;
        g_set_error(error, RS_SWEEP_ERROR, RS_SWEEP_ERROR_INVALID, "%s or auto", local->message);
        return FALSE;
    }
    return TRUE;
}

/* A value given twice in one axis would sweep the same points twice. Fails naming item @i
 * of @items, the value and where it came first. */
static gboolean
yaml_unique(RsYaml *y, const GPtrArray *items, guint i, const char *key, GError **error)
{
    const char *text = rs_yaml_scalar_value(items->pdata[i]);
    for (guint j = 1; j < i; j++) {
        const yaml_node_t *first = items->pdata[j];
        if (strcmp(rs_yaml_scalar_value(first), text) == 0) {
            rs_yaml_set_error(y, items->pdata[i], NULL, key, error, RS_YAML_ERROR_VALUE,
                              "\"%s\" given twice (first at line %zu, column %zu)", text,
                              first->start_mark.line + 1, first->start_mark.column + 1);
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
yaml_ints(RsYaml *y, yaml_node_t *root, const char *key, GArray *out, GError **error)
{
    g_autoptr(GPtrArray) items = yaml_list(y, root, key);
    if (items == NULL)
        return TRUE;
    if (!yaml_nonempty(y, items, key, error))
        return FALSE;
    g_array_set_size(out, 0);
    for (guint i = 1; i < items->len; i++) {
        const char *text;
        if (!yaml_scalar(y, items->pdata[i], key, &text, error) ||
            !rs_yaml_check_plain(y, items->pdata[i], NULL, key, "a positive integer", error))
            return FALSE;
        gint64 v;
        if (!g_ascii_string_to_signed(text, 10, 1, G_MAXINT32, &v, NULL)) {
            rs_yaml_set_error(y, items->pdata[i], NULL, key, error, RS_YAML_ERROR_VALUE,
                              "\"%s\": expected a positive integer", text);
            return FALSE;
        }
        for (guint j = 0; j < out->len; j++)
            if (g_array_index(out, gint64, j) == v) {
                const yaml_node_t *first = items->pdata[j + 1];
                rs_yaml_set_error(y, items->pdata[i], NULL, key, error, RS_YAML_ERROR_VALUE,
                                  "%" G_GINT64_FORMAT " given twice (first at line %zu, "
                                  "column %zu)",
                                  v, first->start_mark.line + 1, first->start_mark.column + 1);
                return FALSE;
            }
        g_array_append_val(out, v);
    }
    return TRUE;
}

static gboolean
yaml_strings(RsYaml *y, yaml_node_t *root, const char *key, GPtrArray *out, GError **error)
{
    g_autoptr(GPtrArray) items = yaml_list(y, root, key);
    if (items == NULL)
        return TRUE;
    if (!yaml_nonempty(y, items, key, error))
        return FALSE;
    g_ptr_array_set_size(out, 0);
    for (guint i = 1; i < items->len; i++) {
        const char *text;
        if (!yaml_scalar(y, items->pdata[i], key, &text, error) ||
            !yaml_unique(y, items, i, key, error))
            return FALSE;
        g_autoptr(GError) local = NULL;
        if (!rs_sweep_check_axis_value(key, text, &local)) {
            rs_yaml_set_error(y, items->pdata[i], NULL, key, error, RS_YAML_ERROR_VALUE, "%s",
                              local->message);
            return FALSE;
        }
        g_ptr_array_add(out, g_strdup(text));
    }
    return TRUE;
}

gboolean
rs_sweep_grid_load_file(const char *path, RsSweepGrid *grid, GError **error)
{
    g_autoptr(RsYaml) y = rs_yaml_load_file(path, error);
    if (y == NULL)
        return FALSE;
    yaml_node_t *root = rs_yaml_get_root_mapping(y, error);
    if (root == NULL)
        return FALSE;
    static const char *const keys[] = {"tp",       "pp",     "dp",          "gpus",     "ep",
                                       "topology", "nic_bw", "infer_dtype", "strategy", NULL};
    if (!rs_yaml_check_keys(y, root, NULL, keys, error))
        return FALSE;
    if (!yaml_ints(y, root, "tp", grid->tp, error) || !yaml_ints(y, root, "pp", grid->pp, error) ||
        !yaml_ints(y, root, "dp", grid->dp, error) ||
        !yaml_ints(y, root, "gpus", grid->gpus, error) ||
        !yaml_strings(y, root, "topology", grid->topologies, error) ||
        !yaml_strings(y, root, "infer_dtype", grid->infer_dtypes, error) ||
        !yaml_strings(y, root, "strategy", grid->strategies, error))
        return FALSE;
    /* dp = GPUs / (tp x pp): rs_sweep_make_points() refuses both, without a place. */
    yaml_node_t *dp_node = rs_yaml_lookup(y, root, "dp"),
                *gpus_node = rs_yaml_lookup(y, root, "gpus");
    if (dp_node != NULL && gpus_node != NULL) {
        yaml_node_t *later =
            dp_node->start_mark.index > gpus_node->start_mark.index ? dp_node : gpus_node;
        rs_yaml_set_error(y, later, NULL, later == dp_node ? "dp" : "gpus", error,
                          RS_YAML_ERROR_VALUE,
                          "dp and gpus are one axis given twice (dp = GPUs / (tp x pp)): give "
                          "either");
        return FALSE;
    }
    g_autoptr(GPtrArray) ep = yaml_list(y, root, "ep");
    if (ep != NULL && !yaml_nonempty(y, ep, "ep", error))
        return FALSE;
    if (ep != NULL) {
        g_array_set_size(grid->ep, 0);
        for (guint i = 1; i < ep->len; i++) {
            const char *text;
            if (!yaml_scalar(y, ep->pdata[i], "ep", &text, error) ||
                !rs_yaml_check_plain(y, ep->pdata[i], NULL, "ep", "off or on", error) ||
                !yaml_unique(y, ep, i, "ep", error))
                return FALSE;
            gboolean on = strcmp(text, "true") == 0 || strcmp(text, "on") == 0;
            if (!on && strcmp(text, "false") != 0 && strcmp(text, "off") != 0) {
                rs_yaml_set_error(y, ep->pdata[i], NULL, "ep", error, RS_YAML_ERROR_VALUE,
                                  "\"%s\": expected off or on (or false or true)", text);
                return FALSE;
            }
            g_array_append_val(grid->ep, on);
        }
    }
    g_autoptr(GPtrArray) bw = yaml_list(y, root, "nic_bw");
    if (bw != NULL && !yaml_nonempty(y, bw, "nic_bw", error))
        return FALSE;
    if (bw != NULL) {
        g_array_set_size(grid->nic_bw, 0);
        for (guint i = 1; i < bw->len; i++) {
            const char *text;
            if (!yaml_scalar(y, bw->pdata[i], "nic_bw", &text, error))
                return FALSE;
            double v;
            g_autoptr(GError) local = NULL;
            if (!rs_units_parse_bandwidth(text, &v, &local)) {
                rs_yaml_set_error(y, bw->pdata[i], NULL, "nic_bw", error, RS_YAML_ERROR_VALUE, "%s",
                                  local->message);
                return FALSE;
            }
            /* By value: 400 Gbit/s and 50 GB/s are one bandwidth. */
            for (guint j = 0; j < grid->nic_bw->len; j++)
                if (g_array_index(grid->nic_bw, double, j) == v) {
                    const yaml_node_t *first = bw->pdata[j + 1];
                    rs_yaml_set_error(y, bw->pdata[i], NULL, "nic_bw", error, RS_YAML_ERROR_VALUE,
                                      "\"%s\" is %g GB/s, given before (line %zu, column %zu: "
                                      "\"%s\")",
                                      text, v / 1e9, first->start_mark.line + 1,
                                      first->start_mark.column + 1, rs_yaml_scalar_value(first));
                    return FALSE;
                }
            g_array_append_val(grid->nic_bw, v);
        }
    }
    return TRUE;
}

/* --- points --- */

static void
point_clear(gpointer p)
{
    RsSweepPoint *pt = p;
    g_free(pt->topology);
    g_free(pt->infer_dtype);
    g_free(pt->strategy);
}

/* Axis values, or one "keep" value for an empty axis. */
static guint
n_or_one(guint n)
{
    return n ? n : 1;
}

GArray *
rs_sweep_make_points(const RsSweepGrid *g, GError **error)
{
    /* dp = GPUs / (tp x pp): both given, one would be dropped silently. */
    if (g->gpus->len > 0 && g->dp->len > 0) {
        g_set_error(error, RS_SWEEP_ERROR, RS_SWEEP_ERROR_INVALID,
                    "dp and gpus are one axis given twice (dp = GPUs / (tp x pp)): give "
                    "either");
        return NULL;
    }
    GArray *points = g_array_new(FALSE, TRUE, sizeof(RsSweepPoint));
    g_array_set_clear_func(points, point_clear);
    gboolean by_gpus = g->gpus->len > 0;
    GArray *counts = by_gpus ? g->gpus : g->dp;
    for (guint it = 0; it < n_or_one(g->topologies->len); it++)
        for (guint ib = 0; ib < n_or_one(g->nic_bw->len); ib++)
            for (guint id = 0; id < n_or_one(g->infer_dtypes->len); id++)
                for (guint is = 0; is < n_or_one(g->strategies->len); is++)
                    for (guint ip = 0; ip < n_or_one(g->pp->len); ip++)
                        for (guint itp = 0; itp < n_or_one(g->tp->len); itp++)
                            for (guint ic = 0; ic < n_or_one(counts->len); ic++)
                                for (guint ie = 0; ie < n_or_one(g->ep->len); ie++) {
                                    RsSweepPoint pt = {0};
                                    pt.tp = g->tp->len ? g_array_index(g->tp, gint64, itp) : 0;
                                    pt.pp = g->pp->len ? g_array_index(g->pp, gint64, ip) : 0;
                                    if (by_gpus) {
                                        gint64 gpus = g_array_index(counts, gint64, ic);
                                        gint64 per = MAX(pt.tp, 1) * MAX(pt.pp, 1);
                                        if (gpus % per != 0)
                                            continue;
                                        pt.dp = gpus / per;
                                        /* Unset tp or pp: the scenario's; dp from the
                                         * count needs both, so they default to 1. */
                                        pt.tp = MAX(pt.tp, 1);
                                        pt.pp = MAX(pt.pp, 1);
                                    } else {
                                        pt.dp = counts->len ? g_array_index(counts, gint64, ic) : 0;
                                    }
                                    pt.ep = g->ep->len ? g_array_index(g->ep, gboolean, ie) : -1;
                                    pt.topology = g->topologies->len
                                                      ? g_strdup(g->topologies->pdata[it])
                                                      : NULL;
                                    pt.nic_bw_bytes_per_s =
                                        g->nic_bw->len ? g_array_index(g->nic_bw, double, ib) : 0;
                                    pt.infer_dtype = g->infer_dtypes->len
                                                         ? g_strdup(g->infer_dtypes->pdata[id])
                                                         : NULL;
                                    pt.strategy = g_strdup(
                                        g->strategies->len ? g->strategies->pdata[is] : "auto");
                                    pt.index = points->len;
                                    g_array_append_val(points, pt);
                                }
    if (points->len == 0) {
        g_set_error(error, RS_SWEEP_ERROR, RS_SWEEP_ERROR_INVALID,
                    "the grid has no point: no GPU count is a multiple of tp x pp");
        g_array_unref(points);
        return NULL;
    }
    return points;
}

/* --- one point --- */

void
rs_sweep_result_clear(RsSweepResult *r)
{
    g_free(r->error);
    g_free(r->infer_layout);
    g_free(r->topology_name);
    g_free(r->dtype);
    g_free(r->chosen);
    memset(r, 0, sizeof *r);
}

/* Applies the point's layout sizes to @conv. */
static gboolean
apply_layout(const RsSweepPoint *pt, RsConvention *conv, GError **error)
{
    const struct {
        const char *key;
        gint64 value;
    } sizes[] = {{"tp", pt->tp}, {"pp", pt->pp}, {"dp", pt->dp}};
    for (guint i = 0; i < G_N_ELEMENTS(sizes); i++)
        if (sizes[i].value > 0 && !rs_convention_set(conv, sizes[i].key, sizes[i].value, error))
            return FALSE;
    /* A point's dp is the layout's own (vLLM's --data-parallel-size of one engine, experts
     * over dp x tp); where the copies of the model are another key (vllm's replicas), the
     * point is one copy: the scenario's count does not multiply it. */
    const char *copies = rs_convention_get_derived_key(conv);
    if (pt->dp > 0 && strcmp(copies, "dp") != 0 && !rs_convention_set(conv, copies, 1, error))
        return FALSE;
    if (pt->ep >= 0 && !rs_convention_set(conv, "ep", pt->ep, error))
        return FALSE;
    return TRUE;
}

/* Size @key of @conv as resolved: 1 when unset, 0 when the convention has no such size. */
static gint64
resolved_size(const RsConvention *conv, const char *key)
{
    return rs_convention_has_param(conv, key) ? MAX(rs_convention_get(conv, key), 1) : 0;
}

/* Places the inference GPUs and derives the node count (sweep.h). */
static gboolean
place_gpus(RsScenario *s, guint n_infer, GError **error)
{
    g_autofree char *tpath = rs_data_find("topologies", s->topology, error);
    if (tpath == NULL)
        return FALSE;
    g_autoptr(RsTopology) topo = rs_topology_load_file(tpath, NULL, error);
    if (topo == NULL)
        return FALSE;
    guint gpn = rs_topology_get_gpus_per_node(topo);
    guint unit = MAX(rs_topology_get_gpus_per_nvlink_domain(topo), gpn);
    /* With gpus_per_domain N the scenario numbers the job's GPUs, N of each NVLink domain
     * (rs_scenario_build()): a unit of the job's numbering is N of them, standing for a
     * whole domain's nodes (every point of a kimi-k3-gb300 sweep was placed on GPUs past
     * the job's). */
    guint job_unit =
        s->gpus_per_domain > 0 && s->gpus_per_domain < unit ? s->gpus_per_domain : unit;
    guint32 n_train = 0, first_infer = G_MAXUINT32;
    for (guint i = 0; i < s->train_gpus->len; i++)
        n_train = MAX(n_train, g_array_index(s->train_gpus, guint32, i) + 1);
    for (guint i = 0; i < s->infer_gpus->len; i++)
        first_infer = MIN(first_infer, g_array_index(s->infer_gpus, guint32, i));
    gboolean colocated = first_infer < n_train;
    guint32 start = colocated ? 0 : (n_train + job_unit - 1) / job_unit * job_unit;
    g_array_set_size(s->infer_gpus, 0);
    for (guint32 g = 0; g < n_infer; g++) {
        guint32 gpu = start + g;
        g_array_append_val(s->infer_gpus, gpu);
    }
    guint64 end = MAX((guint64)start + n_infer, n_train);
    guint64 needed = (end + job_unit - 1) / job_unit * unit; /* physical GPUs */
    if (needed > RS_MAX_RANKS) {
        /* Said here, as the point's: the topology would blame --nodes, which no one gave. */
        g_set_error(error, RS_SWEEP_ERROR, RS_SWEEP_ERROR_INVALID,
                    "the point's %u inference GPUs, from GPU %u (%s), need %" G_GUINT64_FORMAT
                    " GPUs of %s, above the limit of %u GPUs (RS_MAX_RANKS)",
                    n_infer, start,
                    colocated ? "on the training side's" : "after the training side's", needed,
                    s->topology, RS_MAX_RANKS);
        return FALSE;
    }
    s->n_nodes = (guint)(needed / gpn);
    return TRUE;
}

/* The scenario of @pt: the base with the point's parts replaced. */
static RsScenario *
point_scenario(const RsSweepPoint *pt, const RsSweepOptions *o, GError **error)
{
    g_autoptr(RsScenario) s = o->new_scenario(o->scenario_data, error);
    if (s == NULL)
        return NULL;
    if (pt->topology != NULL) {
        g_free(s->topology);
        s->topology = g_strdup(pt->topology);
    }
    if (pt->nic_bw_bytes_per_s > 0)
        s->topology_overrides.nic_bw_bytes_per_s = pt->nic_bw_bytes_per_s;
    if (pt->infer_dtype != NULL) {
        if (!rs_dtype_parse(pt->infer_dtype, &s->infer_dtype, error))
            return NULL;
        s->has_infer_dtype = TRUE;
        /* An error of the point's dtype is the sweep's, not the scenario file's line. */
        rs_scenario_set_where(&s->infer_dtype_where, "the sweep's infer_dtype");
    }
    return g_steal_pointer(&s);
}

static gboolean
parse_request(const char *strategy, RsPolicyRequest *req, GError **error)
{
    rs_policy_request_init_all(req);
    memset(req->row, 0, sizeof req->row);
    if (strcmp(strategy, "auto") == 0)
        return TRUE;
    req->auto_row = FALSE;
    RsStrategy st;
    if (!rs_strategy_parse(strategy, &st, error))
        return FALSE;
    req->row[st] = TRUE;
    return TRUE;
}

/* Plans and evaluates @build's refit; fills the figures of @r. */
static gboolean
evaluate_point(const RsSweepPoint *pt, const RsSweepOptions *o, const RsScenarioBuild *build,
               RsSweepResult *r, GError **error)
{
    RsPlanOptions po;
    rs_plan_options_init(&po, build->topology);
    po.staging_bytes = o->staging_bytes;
    RsMemoryOptions mo = {rs_plan_options_get_staging_bytes(&po),
                          {o->reserve_bytes[0], o->reserve_bytes[1]}};
    rs_memory_compute(build->refit, build->topology, &mo, &r->memory);
    RsPolicyRequest req;
    if (!parse_request(pt->strategy, &req, error))
        return FALSE;
    RsEvaluatorOptions eo = {build->refit, build->topology, o->flow_options, FALSE, NULL, NULL};
    g_autoptr(RsEvaluator) ev = rs_evaluator_new(&eo);
    RsPolicyResult policy;
    g_autoptr(RsPlan) best =
        rs_policy_run(build->refit, &po, &req, rs_evaluator_evaluate, ev, &policy, error);
    gboolean ok = best != NULL;
    if (ok) {
        const RsPolicyRow *row = &policy.rows[policy.n_rows - 1];
        const RsEvaluation *e = rs_evaluator_get_evaluation(ev, row->candidate);
        r->chosen = g_strdup(e->candidate.label);
        r->time_s = e->predicted_s;
        r->bytes_moved = e->cost.bytes_moved;
        r->network_bytes = e->cost.bytes_network;
        r->n_messages = e->n_network_messages;
        RsLowerBound bound;
        ok = rs_lower_bound_compute(build->refit, build->topology, &bound, error);
        r->bound_s = ok ? bound.time_s : 0;
    }
    rs_policy_result_clear(&policy);
    return ok;
}

gboolean
rs_sweep_run_point(const RsSweepPoint *pt, const RsSweepOptions *o, RsSweepResult *r,
                   GError **error)
{
    memset(r, 0, sizeof *r);
    g_autoptr(RsScenario) s = point_scenario(pt, o, error);
    if (s == NULL)
        return FALSE;
    g_autoptr(GError) local = NULL;
    RsConvention *conv = s->infer;
    /* A layout the point sets is the sweep's, not the scenario file's: errors about it say
     * so instead of naming the file's infer line (the message spells the layout out). */
    if (pt->tp > 0 || pt->pp > 0 || pt->dp > 0 || pt->ep >= 0)
        rs_scenario_set_where(&s->infer_where, "sweep point");
    gboolean ok = apply_layout(pt, conv, &local);
    guint64 n_infer = ok ? rs_convention_get_world_size(conv) : 0;
    /* A number of model copies (the convention's derived key: dp, vllm's replicas) that
     * neither the point nor the scenario sets: the point keeps the scenario's inference
     * GPUs where the layout's other sizes divide them, and the convention derives it from
     * them as for the scenario itself (rs_scenario_build(); a point that changes nothing
     * took 1, half the GPUs of a tp=4 scenario on 8). A layout they do not divide keeps 1. */
    guint n_scenario_infer = s->infer_gpus->len;
    if (ok && rs_convention_get(conv, rs_convention_get_derived_key(conv)) == 0 && n_infer > 0 &&
        n_scenario_infer % n_infer == 0)
        n_infer = n_scenario_infer;
    ok = ok && place_gpus(s, (guint)n_infer, &local);
    r->n_infer_gpus = (guint)n_infer;
    r->n_train_gpus = s->train_gpus->len;
    r->n_nodes = ok ? s->n_nodes : 0; /* (a point placed nowhere has no node count) */
    r->nic_bw_bytes_per_s = pt->nic_bw_bytes_per_s;
    RsScenarioBuild build;
    ok = ok && rs_scenario_build(s, &build, &local);
    r->infer_ep = -1;
    if (ok) {
        r->infer_layout = rs_convention_format(s->infer);
        /* An unset size the convention has is 1; ep is on when the switch is, or the
         * size above 1. */
        const RsConvention *c = s->infer;
        r->infer_tp = resolved_size(c, "tp");
        r->infer_pp = resolved_size(c, "pp");
        r->infer_dp = resolved_size(c, "dp");
        r->infer_replicas = resolved_size(c, "replicas");
        gint64 ep = rs_convention_get(c, "ep");
        r->infer_ep = rs_convention_param_is_switch(c, "ep") ? ep != 0 : ep > 1;
        r->topology_name = g_strdup(rs_topology_get_name(build.topology));
        r->dtype = g_strdup(rs_dtype_get_name(
            s->has_infer_dtype ? s->infer_dtype : rs_model_get_dtype(build.model)));
        if (r->nic_bw_bytes_per_s == 0) {
            /* The NIC egress link of GPU 0 carries the topology's NIC bandwidth. */
            for (guint l = 0; l < rs_topology_get_n_links(build.topology); l++) {
                const RsLink *link = rs_topology_get_link(build.topology, l);
                if (link->kind == RS_LINK_NIC_EGRESS) {
                    r->nic_bw_bytes_per_s = link->bw_bytes_per_s;
                    break;
                }
            }
        }
        ok = evaluate_point(pt, o, &build, r, &local);
        rs_scenario_build_clear(&build);
    }
    if (!ok) {
        r->error = g_strdup(local->message);
        if (r->infer_layout == NULL)
            r->infer_layout = rs_convention_format(s->infer);
        if (r->topology_name == NULL)
            r->topology_name = g_strdup(s->topology);
    }
    r->ok = ok;
    return TRUE;
}

/* --- the pool --- */

typedef struct {
    const RsSweepOptions *options;
    GArray *points;
    RsSweepResult *results;
    GMutex lock;
    guint n_points_here, n_done; /* points of this MPI rank (all of them without MPI), done */
    gint64 start_us;
    GError *error; /* the first failure */
} SweepRun;

static void
print_progress(SweepRun *run)
{
    double elapsed_s = (g_get_monotonic_time() - run->start_us) / 1e6;
    double rate = elapsed_s > 0 ? run->n_done / elapsed_s : 0;
    double eta_s = rate > 0 ? (run->n_points_here - run->n_done) / rate : 0;
    enum { WIDTH = 30 };
    guint filled = run->n_points_here ? run->n_done * WIDTH / run->n_points_here : WIDTH;
    char bar[WIDTH + 1];
    for (guint i = 0; i < WIDTH; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[WIDTH] = '\0';
    fprintf(stderr, "\rsweep [%s] %u/%u points, %.2f points/s, ETA %.0f s ", bar, run->n_done,
            run->n_points_here, rate, eta_s);
    if (run->n_done == run->n_points_here)
        fputc('\n', stderr);
    fflush(stderr);
}

static void
run_one(gpointer data, gpointer user_data)
{
    SweepRun *run = user_data;
    guint index = GPOINTER_TO_UINT(data) - 1;
    const RsSweepPoint *pt = &g_array_index(run->points, RsSweepPoint, index);
    g_autoptr(GError) error = NULL;
    gboolean ok = rs_sweep_run_point(pt, run->options, &run->results[index], &error);
    g_mutex_lock(&run->lock);
    if (!ok && run->error == NULL)
        run->error = g_steal_pointer(&error);
    run->n_done++;
    if (run->options->progress)
        print_progress(run);
    g_mutex_unlock(&run->lock);
}

gboolean
rs_sweep_run(GArray *points, const RsSweepOptions *o, RsSweepResult *results, GError **error)
{
    SweepRun run;
    memset(&run, 0, sizeof run);
    run.options = o;
    run.points = points;
    run.results = results;
    g_mutex_init(&run.lock);
    memset(results, 0, points->len * sizeof *results);
    guint n_ranks = MAX(o->n_ranks, 1);
    for (guint i = 0; i < points->len; i++)
        run.n_points_here += i % n_ranks == o->rank;
    run.start_us = g_get_monotonic_time();
    guint n_threads = o->n_threads ? o->n_threads : g_get_num_processors();
    GThreadPool *pool = g_thread_pool_new(run_one, &run, (gint)n_threads, TRUE, NULL);
    for (guint i = 0; i < points->len; i++)
        if (i % n_ranks == o->rank)
            g_thread_pool_push(pool, GUINT_TO_POINTER(i + 1), NULL);
    g_thread_pool_free(pool, FALSE, TRUE);
    g_mutex_clear(&run.lock);
    if (run.error != NULL) {
        g_propagate_error(error, run.error);
        return FALSE;
    }
    return TRUE;
}

/* --- gathering --- */

/* GVariant type letters (GVariant Format Strings, GLib reference). */
#define VT_BOOL "b"
#define VT_U32 "u"
#define VT_U64 "t"
#define VT_I32 "i"
#define VT_I64 "x"
#define VT_DOUBLE "d"

/* The GVariant type of an RsSweepResult sent between MPI ranks, in the order
 * rs_sweep_result_to_variant() packs it, a field a letter; @S is the letter of its
 * strings: "s" to build, "&s" to read them as pointers into the variant (borrowed, then
 * copied). */
#define RESULT_VARIANT_TYPE(S)                                                                \
    "("                                                                                       \
    VT_BOOL S S                   /* ok, error, infer_layout */                               \
    VT_U32 VT_U32 VT_U32          /* n_train_gpus, n_infer_gpus, n_nodes */                   \
    S VT_DOUBLE                   /* topology_name, nic_bw_bytes_per_s */                     \
    S S                           /* dtype, chosen */                                         \
    VT_DOUBLE VT_DOUBLE           /* time_s, bound_s */                                       \
    VT_U64 VT_U64 VT_U64          /* bytes_moved, network_bytes, n_messages */                \
    VT_U32 VT_U32 VT_BOOL VT_BOOL /* train and infer max_gpu, train and infer feasible */     \
    VT_U64 VT_U64 VT_U64 VT_U64   /* train weights and total, infer weights and total */      \
    VT_U64 VT_U64                 /* infer capacity_bytes, train n_gpus << 32 | infer n_gpus */ \
    VT_I64 VT_I64 VT_I64 VT_I64   /* infer_tp, infer_pp, infer_dp, infer_replicas */          \
    VT_I32                        /* infer_ep */                                              \
    ")"
#define RESULT_VARIANT RESULT_VARIANT_TYPE("s")
#define RESULT_VARIANT_BORROWED RESULT_VARIANT_TYPE("&s")

static const char *
nz(const char *s)
{
    return s ? s : "";
}

GVariant *
rs_sweep_result_to_variant(const RsSweepResult *r)
{
    const RsMemorySideResult *t = &r->memory.side[RS_MEMORY_TRAIN];
    const RsMemorySideResult *i = &r->memory.side[RS_MEMORY_INFER];
    return g_variant_new(
        RESULT_VARIANT, r->ok, nz(r->error), nz(r->infer_layout), r->n_train_gpus, r->n_infer_gpus,
        r->n_nodes, nz(r->topology_name), r->nic_bw_bytes_per_s, nz(r->dtype), nz(r->chosen),
        r->time_s, r->bound_s, r->bytes_moved, r->network_bytes, (guint64)r->n_messages, t->max_gpu,
        i->max_gpu, t->feasible, i->feasible, t->weights_bytes, t->total_bytes, i->weights_bytes,
        i->total_bytes, i->capacity_bytes, ((guint64)t->n_gpus << 32) | i->n_gpus, r->infer_tp,
        r->infer_pp, r->infer_dp, r->infer_replicas, r->infer_ep);
}

static char *
empty_null(const char *s)
{
    return *s ? g_strdup(s) : NULL;
}

void
rs_sweep_result_from_variant(GVariant *v, RsSweepResult *r)
{
    memset(r, 0, sizeof *r);
    const char *error, *layout, *topo, *dtype, *chosen;
    guint32 train_max, infer_max;
    gboolean tf, inf;
    guint64 n_messages, tw, tt, iw, it, cap, n_gpus;
    g_variant_get(v, RESULT_VARIANT_BORROWED, &r->ok, &error, &layout, &r->n_train_gpus,
                  &r->n_infer_gpus, &r->n_nodes, &topo, &r->nic_bw_bytes_per_s, &dtype, &chosen,
                  &r->time_s, &r->bound_s, &r->bytes_moved, &r->network_bytes, &n_messages,
                  &train_max, &infer_max, &tf, &inf, &tw, &tt, &iw, &it, &cap, &n_gpus,
                  &r->infer_tp, &r->infer_pp, &r->infer_dp, &r->infer_replicas, &r->infer_ep);
    r->error = empty_null(error);
    r->infer_layout = empty_null(layout);
    r->topology_name = empty_null(topo);
    r->dtype = empty_null(dtype);
    r->chosen = empty_null(chosen);
    r->n_messages = (guint)n_messages;
    RsMemorySideResult *t = &r->memory.side[RS_MEMORY_TRAIN];
    RsMemorySideResult *i = &r->memory.side[RS_MEMORY_INFER];
    t->max_gpu = train_max;
    i->max_gpu = infer_max;
    t->feasible = tf;
    i->feasible = inf;
    t->weights_bytes = tw;
    t->total_bytes = tt;
    i->weights_bytes = iw;
    i->total_bytes = it;
    t->capacity_bytes = i->capacity_bytes = cap;
    t->n_gpus = (guint)(n_gpus >> 32);
    i->n_gpus = (guint)(n_gpus & 0xffffffffu);
    r->memory.feasible = tf && inf;
}

/* --- queries --- */

static gboolean
usable(const RsSweepResult *r)
{
    return r->ok && r->memory.feasible;
}

/* Orders point indices by GPUs, then time, then index. */
static gint
by_gpus_time(gconstpointer a, gconstpointer b, gpointer data)
{
    const RsSweepResult *res = data;
    guint i = *(const guint *)a, j = *(const guint *)b;
    if (res[i].n_infer_gpus != res[j].n_infer_gpus)
        return res[i].n_infer_gpus < res[j].n_infer_gpus ? -1 : 1;
    if (res[i].time_s != res[j].time_s)
        return res[i].time_s < res[j].time_s ? -1 : 1;
    return i < j ? -1 : i > j;
}

GArray *
rs_sweep_select(const RsSweepResult *res, guint n, RsSweepSelect select, double target_s)
{
    GArray *rows = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint i = 0; i < n; i++)
        if (select == RS_SWEEP_SELECT_ALL ||
            (usable(&res[i]) &&
             (select != RS_SWEEP_SELECT_UNDER_TARGET || res[i].time_s <= target_s)))
            g_array_append_val(rows, i);
    if (select == RS_SWEEP_SELECT_ALL)
        return rows;
    g_array_sort_with_data(rows, by_gpus_time, (gpointer)res);
    if (select == RS_SWEEP_SELECT_UNDER_TARGET)
        return rows;
    /* Sorted by GPUs then time: the first of each GPU count is its fastest; the Pareto
     * front keeps those faster than every smaller count. */
    GArray *out = g_array_new(FALSE, FALSE, sizeof(guint));
    double best_s = INFINITY;
    for (guint k = 0; k < rows->len; k++) {
        guint i = g_array_index(rows, guint, k);
        gboolean first =
            k == 0 || res[g_array_index(rows, guint, k - 1)].n_infer_gpus != res[i].n_infer_gpus;
        if (!first)
            continue;
        if (select == RS_SWEEP_SELECT_PARETO) {
            if (!(res[i].time_s < best_s))
                continue;
            best_s = res[i].time_s;
        }
        g_array_append_val(out, i);
    }
    g_array_unref(rows);
    return out;
}

/* --- the table --- */

enum {
    SW_POINT,
    SW_LAYOUT,
    SW_TP,
    SW_PP,
    SW_DP,
    SW_REPLICAS,
    SW_EP,
    SW_GPUS,
    SW_NODES,
    SW_TOPOLOGY,
    SW_NIC_BW,
    SW_DTYPE,
    SW_STRATEGY,
    SW_CHOSEN,
    SW_MOVED,
    SW_NETWORK,
    SW_MESSAGES,
    SW_TIME,
    SW_BOUND,
    SW_EFFICIENCY,
    SW_INFER_MEM,
    SW_TRAIN_MEM,
    SW_GPU_MEM,
    SW_FEASIBLE,
    SW_ERROR,
    SW_N
};

static const RsColumn sweep_columns[SW_N] = {
    [SW_POINT] = {"point", NULL, RS_COLUMN_INTEGER, 0, 0},
    [SW_LAYOUT] = {"infer_layout", "inference layout", RS_COLUMN_TEXT, 0, RS_COLUMN_LEFT},
    [SW_TP] = {"tp", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_NO_TABLE},
    [SW_PP] = {"pp", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_NO_TABLE},
    [SW_DP] = {"dp", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_NO_TABLE},
    [SW_REPLICAS] = {"replicas", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_NO_TABLE},
    [SW_EP] = {"ep", NULL, RS_COLUMN_BOOL, 0, RS_COLUMN_NO_TABLE},
    [SW_GPUS] = {"infer_gpus", "GPUs", RS_COLUMN_INTEGER, 0, 0},
    [SW_NODES] = {"nodes", NULL, RS_COLUMN_INTEGER, 0, 0},
    [SW_TOPOLOGY] = {"topology", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_LEFT},
    [SW_NIC_BW] = {"nic_bw_bytes_per_s", "NIC", RS_COLUMN_RATE, 1, 0},
    [SW_DTYPE] = {"infer_dtype", "dtype", RS_COLUMN_TEXT, 0, RS_COLUMN_LEFT},
    [SW_STRATEGY] = {"strategy", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_LEFT},
    [SW_CHOSEN] = {"chosen", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_LEFT},
    [SW_MOVED] = {"bytes_moved", "moved", RS_COLUMN_GB, 1, 0},
    [SW_NETWORK] = {"network_bytes", "network", RS_COLUMN_GB, 1, 0},
    [SW_MESSAGES] = {"messages", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_NO_TABLE},
    [SW_TIME] = {"time_s", "time", RS_COLUMN_SECONDS, 3, RS_COLUMN_SIGNIFICANT},
    [SW_BOUND] = {"bound_s", "bound", RS_COLUMN_SECONDS, 3, RS_COLUMN_SIGNIFICANT},
    [SW_EFFICIENCY] = {"efficiency", NULL, RS_COLUMN_RATIO, 0, 0},
    [SW_INFER_MEM] = {"infer_gpu_bytes", "infer GPU", RS_COLUMN_GB, 1, 0},
    [SW_TRAIN_MEM] = {"train_gpu_bytes", "train GPU", RS_COLUMN_GB, 1, 0},
    [SW_GPU_MEM] = {"gpu_memory_bytes", "of", RS_COLUMN_GB, 1, 0},
    [SW_FEASIBLE] = {"feasible", "fits", RS_COLUMN_BOOL, 0, 0},
    [SW_ERROR] = {"error", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_LEFT},
};

RsTable *
rs_sweep_table_new(const RsSweepPoint *points, const RsSweepResult *results, GArray *rows)
{
    RsTable *t = rs_table_new("points", sweep_columns, SW_N);
    guint n = rows ? rows->len : 0;
    gboolean any_error = FALSE;
    for (guint k = 0; rows != NULL && k < n; k++)
        any_error |= results[g_array_index(rows, guint, k)].error != NULL;
    for (guint k = 0; k < n; k++) {
        guint i = g_array_index(rows, guint, k);
        const RsSweepPoint *p = &points[i];
        const RsSweepResult *r = &results[i];
        rs_table_add_row(t);
        rs_table_set_uint(t, SW_POINT, p->index);
        rs_table_set_text(t, SW_LAYOUT, r->infer_layout);
        /* The point's sizes as resolved: the scenario's own and the derived dp or replicas (they
         * were empty unless the sweep set them, "every parameter a column"). */
        gint64 tp = p->tp ? p->tp : r->infer_tp, pp = p->pp ? p->pp : r->infer_pp;
        gint64 dp = r->infer_dp ? r->infer_dp : p->dp;
        gint ep = p->ep >= 0 ? p->ep : r->infer_ep;
        if (tp)
            rs_table_set_int(t, SW_TP, tp);
        if (pp)
            rs_table_set_int(t, SW_PP, pp);
        if (dp)
            rs_table_set_int(t, SW_DP, dp);
        if (r->infer_replicas)
            rs_table_set_int(t, SW_REPLICAS, r->infer_replicas);
        if (ep >= 0)
            rs_table_set_bool(t, SW_EP, ep);
        rs_table_set_uint(t, SW_GPUS, r->n_infer_gpus);
        if (r->n_nodes > 0)
            rs_table_set_uint(t, SW_NODES, r->n_nodes);
        rs_table_set_text(t, SW_TOPOLOGY, r->topology_name);
        if (r->nic_bw_bytes_per_s > 0) /* (unknown for a point that failed before) */
            rs_table_set_double(t, SW_NIC_BW, r->nic_bw_bytes_per_s);
        rs_table_set_text(t, SW_STRATEGY, p->strategy);
        if (r->ok) {
            rs_table_set_text(t, SW_DTYPE, r->dtype);
            rs_table_set_text(t, SW_CHOSEN, r->chosen);
            rs_table_set_uint(t, SW_MOVED, r->bytes_moved);
            rs_table_set_uint(t, SW_NETWORK, r->network_bytes);
            rs_table_set_uint(t, SW_MESSAGES, r->n_messages);
            rs_table_set_double(t, SW_TIME, r->time_s);
            rs_table_set_double(t, SW_BOUND, r->bound_s);
            rs_table_set_double(t, SW_EFFICIENCY, r->time_s > 0 ? r->bound_s / r->time_s : 0);
            rs_table_set_uint(t, SW_INFER_MEM, r->memory.side[RS_MEMORY_INFER].total_bytes);
            rs_table_set_uint(t, SW_TRAIN_MEM, r->memory.side[RS_MEMORY_TRAIN].total_bytes);
            /* A topology without gpu.memory: the memory was not checked, neither "of 0 GB"
             * nor "fits yes". */
            guint64 capacity = r->memory.side[RS_MEMORY_INFER].capacity_bytes;
            if (capacity == 0) {
                rs_table_set_null(t, SW_GPU_MEM);
                rs_table_set_null(t, SW_FEASIBLE);
            } else {
                rs_table_set_uint(t, SW_GPU_MEM, capacity);
                rs_table_set_bool(t, SW_FEASIBLE, r->memory.feasible);
            }
        } else {
            rs_table_set_null(t, SW_DTYPE);
            rs_table_set_null(t, SW_CHOSEN);
            rs_table_set_null(t, SW_TIME);
            rs_table_set_null(t, SW_FEASIBLE);
        }
        rs_table_set_text(t, SW_ERROR, r->error);
    }
    if (!any_error)
        rs_table_hide_column(t, SW_ERROR);
    return t;
}

static void
append_query_text(const RsSweepPoint *points, const RsSweepResult *results, GArray *rows,
                  const char *title, GString *out)
{
    g_string_append_printf(out, "\n%s\n", title);
    if (rows->len == 0) {
        g_string_append(out, "  none\n");
        return;
    }
    g_autoptr(RsTable) t = rs_sweep_table_new(points, results, rows);
    rs_table_append_text(t, out);
}

static void
json_indices(JsonBuilder *b, const char *name, GArray *rows)
{
    json_builder_set_member_name(b, name);
    json_builder_begin_array(b);
    for (guint k = 0; k < rows->len; k++)
        json_builder_add_int_value(b, g_array_index(rows, guint, k));
    json_builder_end_array(b);
}

void
rs_sweep_report(const RsSweepPoint *points, const RsSweepResult *results, guint n, double target_s,
                RsSweepSelect select, RsFormat format, GString *out)
{
    g_autoptr(GArray) all = rs_sweep_select(results, n, RS_SWEEP_SELECT_ALL, 0);
    g_autoptr(GArray) under = rs_sweep_select(results, n, RS_SWEEP_SELECT_UNDER_TARGET, target_s);
    g_autoptr(GArray) fastest = rs_sweep_select(results, n, RS_SWEEP_SELECT_FASTEST, 0);
    g_autoptr(GArray) pareto = rs_sweep_select(results, n, RS_SWEEP_SELECT_PARETO, 0);
    if (format == RS_FORMAT_CSV) {
        GArray *rows = select == RS_SWEEP_SELECT_UNDER_TARGET ? under
                       : select == RS_SWEEP_SELECT_FASTEST    ? fastest
                       : select == RS_SWEEP_SELECT_PARETO     ? pareto
                                                              : all;
        g_autoptr(RsTable) t = rs_sweep_table_new(points, results, rows);
        rs_table_append_csv(t, out);
        return;
    }
    if (format == RS_FORMAT_JSON) {
        g_autoptr(RsTable) t = rs_sweep_table_new(points, results, all);
        g_autoptr(JsonBuilder) b = json_builder_new();
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "points");
        rs_table_add_json_array(t, b);
        if (target_s > 0) {
            json_builder_set_member_name(b, "target_s");
            json_builder_add_double_value(b, target_s);
            json_indices(b, "under_target", under);
        }
        json_indices(b, "fastest_per_gpus", fastest);
        json_indices(b, "pareto", pareto);
        json_builder_end_object(b);
        rs_report_json_append(b, out);
        return;
    }
    g_autoptr(RsTable) t = rs_sweep_table_new(points, results, all);
    guint n_ok = 0, n_fit = 0, n_unchecked = 0;
    for (guint i = 0; i < n; i++) {
        n_ok += results[i].ok;
        gboolean unchecked =
            results[i].ok && results[i].memory.side[RS_MEMORY_INFER].capacity_bytes == 0;
        n_unchecked += unchecked;
        n_fit += usable(&results[i]) && !unchecked;
    }
    g_autofree char *unchecked_text =
        n_unchecked > 0
            ? g_strdup_printf(", %u not checked (their topology states no gpu.memory)", n_unchecked)
            : g_strdup("");
    g_string_append_printf(out,
                           "sweep      %u point%s: %u planned, %u fit in GPU memory%s (memory: "
                           "weights + staging + reserve on the busiest GPU of each side)\n\n",
                           n, n == 1 ? "" : "s", n_ok, n_fit, unchecked_text);
    rs_table_append_text(t, out);
    if (target_s > 0) {
        g_autofree char *title = NULL;
        if (under->len > 0) {
            guint best = g_array_index(under, guint, 0);
            title = g_strdup_printf(
                "under %.4g s: fewest GPUs %u, %s (%.4g s); every feasible point under the "
                "target, fewest GPUs first:",
                target_s, results[best].n_infer_gpus, results[best].infer_layout,
                results[best].time_s);
        } else {
            title = g_strdup_printf("under %.4g s: no feasible point reaches the target", target_s);
        }
        append_query_text(points, results, under, title, out);
    }
    append_query_text(points, results, fastest, "fastest feasible layout per GPU count:", out);
    append_query_text(points, results, pareto,
                      "Pareto front (GPUs against refit time; fewer GPUs or faster than every "
                      "other feasible point):",
                      out);
}
