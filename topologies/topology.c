/* topology.c — loads a fabric description into an explicit link graph and routes on it.
 *
 * Links are stored in one array: a block per GPU (NVLink egress/ingress, PCIe
 * egress/ingress when modelled, NIC egress/ingress), then an uplink/downlink pair per leaf.
 * A 4,096-GPU cluster has about 25,000 links; routes are computed, not stored, from the
 * GPU's node, rail and scalable unit. Which links can never bind (dominated links) is
 * decided once here, from the structure of the routes, so that the simulator and the
 * lower bound need not know the topology's shape. */
#include "topologies/topology.h"

#include "base/mesh.h"

#include "base/units.h"
#include "base/yaml-reader.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(rs-topology-error-quark, rs_topology_error)
/* clang-format on */

/* The figures of one link class as the file gives them. */
typedef struct {
    double bw_bytes_per_s;
    double efficiency;
    double latency_s;
} LinkClass;

struct _RsTopology {
    char *name;
    char *description;
    char *gpu_model;
    guint64 gpu_memory_bytes;
    guint n_nodes;
    guint gpus_per_node;
    guint nodes_per_nvlink_domain;
    guint su_nodes; /* nodes per full scalable unit */
    guint n_sus;
    double oversubscription;
    double switch_latency_s;
    double message_overhead_s;
    double chunk_overhead_s;  /* per chunk operation of chunk_size_bytes; 0: none */
    guint64 chunk_size_bytes; /* 0 when chunk_overhead_s is 0 */
    GArray *copy_runs; /* RsCopyRate by increasing run_bytes; NULL without a copy section */
    RsGpuCosts gpu_costs;
    guint8 *job; /* [n_gpus] 1: in the job; NULL: every GPU */
    gboolean has_pcie;
    gboolean pxn;
    guint gpu_stride;          /* links per GPU block */
    gint slot[RS_LINK_KIND_N]; /* position of a per-GPU kind in the block, or -1 */
    guint32 leaf_base;         /* id of the first leaf link */
    guint n_links;
    RsLink *links;
    guint8 *dominated;
    GPtrArray *warnings; /* (element-type utf8): defaults taken for keys the file omits */
};

/* --- reading --- */

/* "2", "2.5" or "2:1": leaf downlink over uplink bandwidth, >= 1. */
static gboolean
read_oversubscription(RsYaml *yaml, yaml_node_t *fabric, double *out, GError **error)
{
    yaml_node_t *node = rs_yaml_lookup(yaml, fabric, "oversubscription");
    if (node == NULL)
        return TRUE;
    const char *text = rs_yaml_scalar_value(node);
    if (text == NULL) {
        rs_yaml_set_error(yaml, node, "fabric", "oversubscription", error, RS_YAML_ERROR_TYPE,
                          "expected a single value");
        return FALSE;
    }
    if (!rs_topology_parse_oversubscription(text, out)) {
        rs_yaml_set_error(yaml, node, "fabric", "oversubscription", error, RS_YAML_ERROR_VALUE,
                          "\"%s\": %s", text, RS_TOPOLOGY_OVERSUBSCRIPTION_EXPECTED);
        return FALSE;
    }
    return TRUE;
}

gboolean
rs_topology_parse_oversubscription(const char *text, double *out)
{
    char *end = NULL;
    double value = g_ascii_strtod(text, &end);
    if (end == text || !isfinite(value) || value <= 0)
        return FALSE;
    if (*end == ':') {
        /* "A:B", as fabrics are quoted (2:1, 3:2): the quotient. */
        const char *denominator = end + 1;
        double d = g_ascii_strtod(denominator, &end);
        if (end == denominator || !isfinite(d) || d <= 0)
            return FALSE;
        value /= d;
    }
    if (*end != '\0' || !(value >= 1.0 && value <= RS_TOPOLOGY_MAX_OVERSUBSCRIPTION))
        return FALSE;
    *out = value;
    return TRUE;
}

static gboolean invalid(GError **error, const char *path, const char *format, ...)
    G_GNUC_PRINTF(3, 4);

static gboolean
invalid(GError **error, const char *path, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *message = g_strdup_vprintf(format, args);
    va_end(args);
    g_set_error(error, RS_TOPOLOGY_ERROR, RS_TOPOLOGY_ERROR_INVALID, "%s: %s", path, message);
    return FALSE;
}

static const char *const copy_rate_keys[2][RS_COPY_SIDE_N][RS_COPY_SCOPE_N] = {
    {{"read_one_rank", "read_node"}, {"write_one_rank", "write_node"}},
    {{"local_read_one_rank", "local_read_node"}, {"local_write_one_rank", "local_write_node"}},
};

const char *
rs_copy_rate_get_key(gboolean local, RsCopySide side, RsCopyScope scope)
{
    g_return_val_if_fail(side < RS_COPY_SIDE_N && scope < RS_COPY_SCOPE_N, NULL);
    return copy_rate_keys[local ? 1 : 0][side][scope];
}

double
rs_copy_rate_get(const RsCopyRate *rate, gboolean local, RsCopySide side, RsCopyScope scope)
{
    g_return_val_if_fail(side < RS_COPY_SIDE_N && scope < RS_COPY_SCOPE_N, 0.0);
    return local ? rate->local_bytes_per_s[side][scope] : rate->bytes_per_s[side][scope];
}

/* copy {runs: [{bytes, read_one_rank, read_node, write_one_rank, write_node, local_…}, …]}:
 * the rates of ranks copying bytes in memory, by run length, strictly increasing. */
static gboolean
read_copy(RsYaml *yaml, yaml_node_t *root, GArray **out, GError **error)
{
    static const char *const copy_keys[] = {"runs", NULL};
    static const char *const run_keys[] = {
        "bytes",           "read_one_rank",        "read_node",           "write_one_rank",
        "write_node",      "local_read_one_rank",  "local_read_node",     "local_write_one_rank",
        "local_write_node", NULL};
    *out = NULL;
    yaml_node_t *copy = rs_yaml_lookup(yaml, root, "copy");
    if (copy == NULL)
        return TRUE;
    if (!rs_yaml_check_keys(yaml, copy, "copy", copy_keys, error))
        return FALSE;
    yaml_node_t *runs = rs_yaml_lookup(yaml, copy, "runs");
    if (runs == NULL || runs->type != YAML_SEQUENCE_NODE ||
        runs->data.sequence.items.start == runs->data.sequence.items.top) {
        rs_yaml_set_error(yaml, runs ? runs : copy, "copy", "runs", error,
                          runs ? RS_YAML_ERROR_TYPE : RS_YAML_ERROR_MISSING,
                          "expected a non-empty list of {bytes, read_one_rank, read_node, "
                          "write_one_rank, write_node}");
        return FALSE;
    }
    g_autoptr(GArray) rates = g_array_new(FALSE, TRUE, sizeof(RsCopyRate));
    guint i = 0;
    for (yaml_node_item_t *item = runs->data.sequence.items.start;
         item < runs->data.sequence.items.top; item++, i++) {
        yaml_node_t *entry = rs_yaml_node_at(yaml, *item);
        g_autofree char *section = g_strdup_printf("copy.runs[%u]", i);
        RsCopyRate rate = {0};
        if (!rs_yaml_check_keys(yaml, entry, section, run_keys, error) ||
            !rs_yaml_read_size(yaml, entry, section, "bytes", TRUE, &rate.run_bytes, error))
            return FALSE;
        if (rate.run_bytes == 0) {
            rs_yaml_set_error(yaml, rs_yaml_lookup(yaml, entry, "bytes"), section, "bytes",
                              error, RS_YAML_ERROR_VALUE, "must be positive");
            return FALSE;
        }
        for (guint local = 0; local < 2; local++) {
            for (guint side = 0; side < RS_COPY_SIDE_N; side++) {
                for (guint scope = 0; scope < RS_COPY_SCOPE_N; scope++) {
                    const char *key = copy_rate_keys[local][side][scope];
                    double *value = local ? &rate.local_bytes_per_s[side][scope]
                                          : &rate.bytes_per_s[side][scope];
                    /* Local rates are optional: without them local copies go at the
                     * message rates. */
                    if (local && rs_yaml_lookup(yaml, entry, key) == NULL) {
                        *value = rate.bytes_per_s[side][scope];
                        continue;
                    }
                    if (!rs_yaml_read_bandwidth(yaml, entry, section, key, TRUE, value, error))
                        return FALSE;
                    if (!(*value > 0.0)) {
                        rs_yaml_set_error(yaml, rs_yaml_lookup(yaml, entry, key), section, key,
                                          error, RS_YAML_ERROR_VALUE, "must be positive");
                        return FALSE;
                    }
                }
            }
        }
        if (rates->len > 0 &&
            rate.run_bytes <= g_array_index(rates, RsCopyRate, rates->len - 1).run_bytes) {
            rs_yaml_set_error(yaml, rs_yaml_lookup(yaml, entry, "bytes"), section, "bytes",
                              error, RS_YAML_ERROR_VALUE,
                              "runs must be listed by increasing bytes");
            return FALSE;
        }
        g_array_append_val(rates, rate);
    }
    *out = g_steal_pointer(&rates);
    return TRUE;
}

static void build_links(RsTopology *topo, const LinkClass *nvlink, const LinkClass *pcie,
                        const LinkClass *nic, double uplink_efficiency);

/* What a topology file says, before overrides; strings borrowed from the YAML document. */
typedef struct {
    const char *name;
    const char *description;
    const char *gpu_model;
    guint64 gpu_memory_bytes;
    RsGpuCosts gpu_costs;
    gint64 n_nodes;
    gint64 gpus_per_node;
    gint64 nodes_per_domain;
    gint64 su_nodes; /* 0: one scalable unit of every node */
    double message_overhead_s;
    double chunk_overhead_s;
    guint64 chunk_size_bytes;
    double oversubscription;
    double switch_latency_s;
    double uplink_efficiency; /* < 0: the NIC's efficiency */
    gboolean pxn;
    gboolean has_pcie;
    LinkClass nvlink, pcie, nic;
    gboolean has_fabric, has_switch_latency, has_pxn;
    /* (uplink_efficiency is not said: its default is the file's own nic.efficiency) */
    gboolean has_su_nodes, has_oversubscription;
    const char *path;
    GPtrArray *warnings; /* (element-type utf8) (owned): defaults taken, one line each */
} TopologyFile;

/* Notes that @f took a default for @field: "PATH: field not given: taking ...". */
G_GNUC_PRINTF(3, 4)
static void
note_default(TopologyFile *f, const char *field, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *taking = g_strdup_vprintf(format, args);
    va_end(args);
    g_ptr_array_add(f->warnings,
                    g_strdup_printf("%s: %s not given: taking %s", f->path, field, taking));
}

static gboolean
read_link_class(RsYaml *yaml, yaml_node_t *root, const char *section, gboolean required,
                LinkClass *link, gboolean *present, TopologyFile *f, GError **error)
{
    static const char *const keys[] = {"bandwidth", "efficiency", "latency", NULL};
    yaml_node_t *map = rs_yaml_lookup(yaml, root, section);
    *present = map != NULL;
    if (map == NULL) {
        if (!required)
            return TRUE;
        rs_yaml_set_error(yaml, root, NULL, section, error, RS_YAML_ERROR_MISSING,
                          "required section is missing");
        return FALSE;
    }
    link->efficiency = 1.0;
    link->latency_s = 0.0;
    if (!rs_yaml_check_keys(yaml, map, section, keys, error) ||
        !rs_yaml_read_bandwidth(yaml, map, section, "bandwidth", TRUE, &link->bw_bytes_per_s,
                                error) ||
        !rs_yaml_read_double(yaml, map, section, "efficiency", FALSE, 1e-6, 1.0,
                             &link->efficiency, error) ||
        !rs_yaml_read_duration(yaml, map, section, "latency", FALSE, &link->latency_s, error))
        return FALSE;
    g_autofree char *efficiency = g_strconcat(section, ".efficiency", NULL);
    g_autofree char *latency = g_strconcat(section, ".latency", NULL);
    if (rs_yaml_lookup(yaml, map, "efficiency") == NULL)
        note_default(f, efficiency, "1.0 (the full nominal bandwidth)");
    if (rs_yaml_lookup(yaml, map, "latency") == NULL)
        note_default(f, latency, "0 us");
    return TRUE;
}

/* name, description, nodes, gpus_per_node and nodes_per_nvlink_domain. */
static gboolean
read_root_scalars(RsYaml *yaml, yaml_node_t *root, TopologyFile *f, GError **error)
{
    return rs_yaml_read_string(yaml, root, NULL, "name", TRUE, &f->name, error) &&
           rs_yaml_read_string(yaml, root, NULL, "description", FALSE, &f->description, error) &&
           rs_yaml_read_int64(yaml, root, NULL, "nodes", TRUE, 1, 1 << 20, &f->n_nodes, error) &&
           rs_yaml_read_int64(yaml, root, NULL, "gpus_per_node", TRUE, 1, 1024, &f->gpus_per_node,
                              error) &&
           rs_yaml_read_int64(yaml, root, NULL, "nodes_per_nvlink_domain", FALSE, 1, 1 << 20,
                              &f->nodes_per_domain, error);
}

/* The optional cost keys of gpu (RsGpuCosts); each absent one stays 0. */
static gboolean
read_gpu_costs(RsYaml *yaml, yaml_node_t *gpu, RsGpuCosts *c, GError **error)
{
    guint64 penalty_bytes = 0;
    gboolean ok =
        rs_yaml_read_bandwidth(yaml, gpu, "gpu", "hbm_bandwidth", FALSE, &c->hbm_bytes_per_s,
                               error) &&
        rs_yaml_read_bandwidth(yaml, gpu, "gpu", "kernel_copy_bandwidth", FALSE,
                               &c->kernel_copy_bytes_per_s, error) &&
        rs_yaml_read_bandwidth(yaml, gpu, "gpu", "copy_engine_bandwidth", FALSE,
                               &c->copy_engine_bytes_per_s, error) &&
        rs_yaml_read_bandwidth(yaml, gpu, "gpu", "h2d_bandwidth", FALSE, &c->h2d_bytes_per_s,
                               error) &&
        rs_yaml_read_duration(yaml, gpu, "gpu", "kernel_launch", FALSE, &c->kernel_launch_s,
                              error) &&
        rs_yaml_read_duration(yaml, gpu, "gpu", "stream_sync", FALSE, &c->stream_sync_s,
                              error) &&
        rs_yaml_read_size(yaml, gpu, "gpu", "strided_row_penalty", FALSE, &penalty_bytes,
                          error);
    if (!ok)
        return FALSE;
    c->strided_row_penalty = (double)penalty_bytes;
    static const char *const keys[] = {"hbm_bandwidth", "kernel_copy_bandwidth",
                                       "copy_engine_bandwidth", "h2d_bandwidth",
                                       "kernel_launch", "stream_sync"};
    const double values[] = {c->hbm_bytes_per_s,         c->kernel_copy_bytes_per_s,
                             c->copy_engine_bytes_per_s, c->h2d_bytes_per_s,
                             c->kernel_launch_s,         c->stream_sync_s};
    for (guint i = 0; i < G_N_ELEMENTS(keys); i++) {
        if (!(values[i] >= 0.0) || !isfinite(values[i])) {
            rs_yaml_set_error(yaml, rs_yaml_lookup(yaml, gpu, keys[i]), "gpu", keys[i], error,
                              RS_YAML_ERROR_VALUE, "must be a finite value >= 0");
            return FALSE;
        }
    }
    return TRUE;
}

/* The keys of gpu that change the figures and were not given, one warning each; every cost
 * key missing is one warning ("gpu costs"). hbm_bandwidth is documentation only (no model
 * reads it) and gpu.model a name: neither is said. */
static void
note_gpu_defaults(RsYaml *yaml, yaml_node_t *gpu, TopologyFile *f)
{
    if (rs_yaml_lookup(yaml, gpu, "memory") == NULL)
        note_default(f, "gpu.memory", "none (memory not checked, staging 1 GiB a round)");
    static const struct {
        const char *field, *taking;
    } costs[] = {
        {"gpu.kernel_copy_bandwidth", "none (kernel packs and unpacks free)"},
        {"gpu.copy_engine_bandwidth", "none (copy-engine copies free)"},
        {"gpu.h2d_bandwidth", "none (host-to-device copies free)"},
        {"gpu.kernel_launch", "0 us (launches free)"},
        {"gpu.stream_sync", "0 us (synchronisations free)"},
        {"gpu.strided_row_penalty", "0 B (strided rows cost no more than contiguous)"},
    };
    gboolean missing[G_N_ELEMENTS(costs)];
    guint n_missing = 0;
    for (guint i = 0; i < G_N_ELEMENTS(costs); i++)
        n_missing += missing[i] =
            rs_yaml_lookup(yaml, gpu, costs[i].field + strlen("gpu.")) == NULL;
    if (n_missing == G_N_ELEMENTS(costs)) {
        note_default(f,
                     "gpu costs (kernel_copy_bandwidth, copy_engine_bandwidth, h2d_bandwidth, "
                     "kernel_launch, stream_sync, strided_row_penalty)",
                     "none (GPU-side packs, copies, launches and synchronisations free)");
        return;
    }
    for (guint i = 0; i < G_N_ELEMENTS(costs); i++)
        if (missing[i])
            note_default(f, costs[i].field, "%s", costs[i].taking);
}

/* gpu {model, memory, costs}, all optional; memory at least RS_TOPOLOGY_MIN_GPU_MEMORY_BYTES. */
static gboolean
read_gpu(RsYaml *yaml, yaml_node_t *root, TopologyFile *f, GError **error)
{
    static const char *const gpu_keys[] = {"model",
                                           "memory",
                                           "hbm_bandwidth",
                                           "kernel_copy_bandwidth",
                                           "copy_engine_bandwidth",
                                           "h2d_bandwidth",
                                           "kernel_launch",
                                           "stream_sync",
                                           "strided_row_penalty",
                                           NULL};
    yaml_node_t *gpu = rs_yaml_lookup(yaml, root, "gpu");
    /* A host topology (its `copy` section, as reshard calibrate writes it) prices copies by
     * its measured rates and has no GPU memory: the gpu section's defaults do not apply. */
    gboolean host = rs_yaml_lookup(yaml, root, "copy") != NULL;
    if (gpu == NULL) {
        if (!host)
            note_default(f, "gpu",
                         "no GPU memory (memory not checked, staging 1 GiB a round) and no "
                         "GPU-side costs (packs, copies, launches and synchronisations free)");
        return TRUE;
    }
    if (!rs_yaml_check_keys(yaml, gpu, "gpu", gpu_keys, error) ||
        !rs_yaml_read_string(yaml, gpu, "gpu", "model", FALSE, &f->gpu_model, error) ||
        !rs_yaml_read_size(yaml, gpu, "gpu", "memory", FALSE, &f->gpu_memory_bytes, error) ||
        !read_gpu_costs(yaml, gpu, &f->gpu_costs, error))
        return FALSE;
    /* The default staging is 1/16 of GPU memory; below 16 MiB it would be under 1 MiB and
     * cut the weights into more buckets than a plan can hold. */
    if (rs_yaml_lookup(yaml, gpu, "memory") != NULL &&
        f->gpu_memory_bytes < RS_TOPOLOGY_MIN_GPU_MEMORY_BYTES) {
        rs_yaml_set_error(yaml, rs_yaml_lookup(yaml, gpu, "memory"), "gpu", "memory", error,
                          RS_YAML_ERROR_VALUE, "must be at least 16 MiB");
        return FALSE;
    }
    if (f->gpu_memory_bytes > RS_TOPOLOGY_MAX_GPU_MEMORY_BYTES) {
        rs_yaml_set_error(yaml, rs_yaml_lookup(yaml, gpu, "memory"), "gpu", "memory", error,
                          RS_YAML_ERROR_VALUE, "above the largest accepted, 16 TiB");
        return FALSE;
    }
    if (!host)
        note_gpu_defaults(yaml, gpu, f);
    return TRUE;
}

/* nvlink and nic (required), pcie (optional). */
static gboolean
read_link_classes(RsYaml *yaml, yaml_node_t *root, TopologyFile *f, GError **error)
{
    gboolean has_nvlink, has_nic;
    return read_link_class(yaml, root, "nvlink", TRUE, &f->nvlink, &has_nvlink, f, error) &&
           read_link_class(yaml, root, "pcie", FALSE, &f->pcie, &f->has_pcie, f, error) &&
           read_link_class(yaml, root, "nic", TRUE, &f->nic, &has_nic, f, error);
}

/* fabric {scalable_unit_nodes, oversubscription, switch_latency, uplink_efficiency, pxn}. */
static gboolean
read_fabric(RsYaml *yaml, yaml_node_t *root, TopologyFile *f, GError **error)
{
    static const char *const fabric_keys[] = {"scalable_unit_nodes",
                                              "oversubscription",
                                              "switch_latency",
                                              "uplink_efficiency",
                                              "pxn",
                                              NULL};
    yaml_node_t *fabric = rs_yaml_lookup(yaml, root, "fabric");
    if (fabric == NULL)
        return TRUE;
    f->has_fabric = TRUE;
    f->has_switch_latency = rs_yaml_lookup(yaml, fabric, "switch_latency") != NULL;
    f->has_pxn = rs_yaml_lookup(yaml, fabric, "pxn") != NULL;
    f->has_su_nodes = rs_yaml_lookup(yaml, fabric, "scalable_unit_nodes") != NULL;
    f->has_oversubscription = rs_yaml_lookup(yaml, fabric, "oversubscription") != NULL;
    return rs_yaml_check_keys(yaml, fabric, "fabric", fabric_keys, error) &&
           rs_yaml_read_int64(yaml, fabric, "fabric", "scalable_unit_nodes", FALSE, 1, 1 << 20,
                              &f->su_nodes, error) &&
           read_oversubscription(yaml, fabric, &f->oversubscription, error) &&
           rs_yaml_read_duration(yaml, fabric, "fabric", "switch_latency", FALSE,
                                 &f->switch_latency_s, error) &&
           rs_yaml_read_double(yaml, fabric, "fabric", "uplink_efficiency", FALSE, 1e-6, 1.0,
                               &f->uplink_efficiency, error) &&
           rs_yaml_read_bool(yaml, fabric, "fabric", "pxn", FALSE, &f->pxn, error);
}

/* software {message_overhead, chunk_overhead, chunk_size}: chunk_overhead needs the
 * chunk_size it was measured at. */
static gboolean
read_software(RsYaml *yaml, yaml_node_t *root, TopologyFile *f, GError **error)
{
    static const char *const software_keys[] = {"message_overhead", "chunk_overhead",
                                                "chunk_size", NULL};
    yaml_node_t *software = rs_yaml_lookup(yaml, root, "software");
    if (software == NULL || rs_yaml_lookup(yaml, software, "message_overhead") == NULL)
        note_default(f, "software.message_overhead", "0 us (no cost per message)");
    if (software == NULL)
        return TRUE;
    if (!rs_yaml_check_keys(yaml, software, "software", software_keys, error) ||
        !rs_yaml_read_duration(yaml, software, "software", "message_overhead", FALSE,
                               &f->message_overhead_s, error) ||
        !rs_yaml_read_duration(yaml, software, "software", "chunk_overhead", FALSE,
                               &f->chunk_overhead_s, error) ||
        !rs_yaml_read_size(yaml, software, "software", "chunk_size", FALSE,
                           &f->chunk_size_bytes, error))
        return FALSE;
    if (f->chunk_overhead_s > 0 && f->chunk_size_bytes == 0) {
        yaml_node_t *at = rs_yaml_lookup(yaml, software, "chunk_size");
        rs_yaml_set_error(yaml, at != NULL ? at : software, "software", "chunk_size", error,
                          at != NULL ? RS_YAML_ERROR_VALUE : RS_YAML_ERROR_MISSING,
                          at != NULL ? "must be positive when chunk_overhead is given"
                                     : "required with chunk_overhead (the chunk it was "
                                       "measured at)");
        return FALSE;
    }
    if (f->chunk_overhead_s == 0)
        f->chunk_size_bytes = 0;
    return TRUE;
}

/* The command line's overrides of nodes, NIC bandwidth, oversubscription and PXN. */
static gboolean
apply_overrides(TopologyFile *f, const RsTopologyOverrides *overrides, const char *path,
                GError **error)
{
    if (overrides == NULL)
        return TRUE;
    if (overrides->n_nodes != 0)
        f->n_nodes = overrides->n_nodes;
    if (overrides->nic_bw_bytes_per_s != 0.0) {
        if (!(overrides->nic_bw_bytes_per_s >= RS_UNITS_MIN_BANDWIDTH_BYTES_PER_S) ||
            !(overrides->nic_bw_bytes_per_s <= RS_UNITS_MAX_BANDWIDTH_BYTES_PER_S))
            return invalid(error, path, "NIC bandwidth override %g B/s: outside 1 kB/s .. 1 PB/s",
                           overrides->nic_bw_bytes_per_s);
        f->nic.bw_bytes_per_s = overrides->nic_bw_bytes_per_s;
    }
    if (overrides->oversubscription != 0.0) {
        if (!(overrides->oversubscription >= 1.0) ||
            !(overrides->oversubscription <= RS_TOPOLOGY_MAX_OVERSUBSCRIPTION))
            return invalid(error, path, "oversubscription override must be from 1 to 64, not %g",
                           overrides->oversubscription);
        f->oversubscription = overrides->oversubscription;
    }
    if (overrides->pxn != RS_TOPOLOGY_PXN_KEEP)
        f->pxn = overrides->pxn == RS_TOPOLOGY_PXN_ON;
    return TRUE;
}

/* "PATH:LINE:COL: " of @key's value in @map (of @yaml), or "PATH: " when it is absent.
 * Returns: (transfer full). */
static char *
value_where(RsYaml *yaml, yaml_node_t *map, const char *key, const char *path)
{
    yaml_node_t *node = map != NULL ? rs_yaml_lookup(yaml, map, key) : NULL;
    if (node == NULL)
        return g_strdup_printf("%s: ", path);
    return g_strdup_printf("%s:%zu:%zu: ", path, node->start_mark.line + 1,
                           node->start_mark.column + 1);
}

/* NVLink domains must tile the nodes and the scalable units; at most 2^24 GPUs. Sets an
 * unset scalable unit size to every node. Errors name the line of nodes_per_nvlink_domain
 * (the default 1 divides everything) and where the other count came from. */
static gboolean
check_sizes(TopologyFile *f, RsYaml *yaml, yaml_node_t *root,
            const RsTopologyOverrides *overrides, const char *path, GError **error)
{
    yaml_node_t *fabric = rs_yaml_lookup(yaml, root, "fabric");
    if (f->su_nodes == 0)
        f->su_nodes = f->n_nodes;
    if (f->n_nodes % f->nodes_per_domain != 0) {
        g_autofree char *where = value_where(yaml, root, "nodes_per_nvlink_domain", path);
        yaml_node_t *nodes = rs_yaml_lookup(yaml, root, "nodes");
        g_autofree char *from =
            overrides != NULL && overrides->n_nodes != 0
                ? g_strdup("--nodes")
                : g_strdup_printf("nodes, line %zu", nodes ? nodes->start_mark.line + 1 : 0);
        g_set_error(error, RS_TOPOLOGY_ERROR, RS_TOPOLOGY_ERROR_INVALID,
                    "%snodes_per_nvlink_domain=%" G_GINT64_FORMAT
                    " does not divide %" G_GINT64_FORMAT " nodes (%s)",
                    where, f->nodes_per_domain, f->n_nodes, from);
        return FALSE;
    }
    if (f->su_nodes % f->nodes_per_domain != 0) {
        g_autofree char *where = value_where(yaml, fabric, "scalable_unit_nodes", path);
        g_set_error(error, RS_TOPOLOGY_ERROR, RS_TOPOLOGY_ERROR_INVALID,
                    "%snodes_per_nvlink_domain=%" G_GINT64_FORMAT
                    " does not divide fabric.scalable_unit_nodes=%" G_GINT64_FORMAT
                    " (an NVLink domain must sit in one scalable unit)",
                    where, f->nodes_per_domain, f->su_nodes);
        return FALSE;
    }
    if ((guint64)f->n_nodes * (guint64)f->gpus_per_node > RS_MAX_RANKS) {
        /* The node count that makes it too many: --nodes when it overrides the file's
         * (the file's own line was blamed), else the file's nodes. */
        gboolean from_option = overrides != NULL && overrides->n_nodes != 0;
        g_autofree char *where =
            from_option ? g_strdup("--nodes: ") : value_where(yaml, root, "nodes", path);
        g_set_error(error, RS_TOPOLOGY_ERROR, RS_TOPOLOGY_ERROR_INVALID,
                    "%s%" G_GINT64_FORMAT " nodes of %" G_GINT64_FORMAT
                    " GPUs is above the limit of %u GPUs (RS_MAX_RANKS): at most %" G_GINT64_FORMAT
                    " nodes",
                    where, f->n_nodes, f->gpus_per_node, RS_MAX_RANKS,
                    (gint64)(RS_MAX_RANKS / (guint64)f->gpus_per_node));
        return FALSE;
    }
    return TRUE;
}

/* The topology of a checked file, with its links built; takes @copy_runs. */
static RsTopology *
topology_new_from_file(const TopologyFile *f, GArray *copy_runs)
{
    RsTopology *topo = g_new0(RsTopology, 1);
    topo->name = g_strdup(f->name);
    topo->description = g_strdup(f->description);
    topo->gpu_model = g_strdup(f->gpu_model);
    topo->gpu_memory_bytes = f->gpu_memory_bytes;
    topo->n_nodes = (guint)f->n_nodes;
    topo->gpus_per_node = (guint)f->gpus_per_node;
    topo->nodes_per_nvlink_domain = (guint)f->nodes_per_domain;
    topo->su_nodes = (guint)f->su_nodes;
    topo->n_sus = (guint)((f->n_nodes + f->su_nodes - 1) / f->su_nodes);
    topo->oversubscription = f->oversubscription;
    topo->switch_latency_s = f->switch_latency_s;
    topo->message_overhead_s = f->message_overhead_s;
    topo->chunk_overhead_s = f->chunk_overhead_s;
    topo->chunk_size_bytes = f->chunk_size_bytes;
    topo->copy_runs = copy_runs;
    topo->gpu_costs = f->gpu_costs;
    topo->has_pcie = f->has_pcie;
    topo->pxn = f->pxn;
    build_links(topo, &f->nvlink, &f->pcie, &f->nic,
                f->uplink_efficiency > 0 ? f->uplink_efficiency : f->nic.efficiency);
    return topo;
}

/* Reads and checks every field of @yaml into @f (defaults first) and *@copy_runs; the
 * node counts' consistency, which overrides can change, is checked later (check_sizes()).
 * Sets *@root_out to the root mapping. */
static gboolean
read_topology_fields(RsYaml *yaml, TopologyFile *f, GArray **copy_runs, yaml_node_t **root_out,
                     GError **error)
{
    static const char *const root_keys[] = {
        "name",     "description", "nodes", "gpus_per_node", "nodes_per_nvlink_domain",
        "gpu",      "nvlink",      "pcie",  "nic",           "fabric",
        "software", "copy",        NULL};
    yaml_node_t *root = rs_yaml_get_root_mapping(yaml, error);
    if (root == NULL || !rs_yaml_check_keys(yaml, root, NULL, root_keys, error))
        return FALSE;
    *root_out = root;
    memset(f, 0, sizeof *f);
    f->path = rs_yaml_get_path(yaml);
    f->warnings = g_ptr_array_new_with_free_func(g_free);
    f->gpu_model = "GPU";
    f->description = "";
    f->nodes_per_domain = 1;
    f->oversubscription = 1.0;
    f->uplink_efficiency = -1.0;
    return read_root_scalars(yaml, root, f, error) && read_gpu(yaml, root, f, error) &&
           read_link_classes(yaml, root, f, error) && read_fabric(yaml, root, f, error) &&
           read_software(yaml, root, f, error) && read_copy(yaml, root, copy_runs, error);
}

static RsTopology *
topology_from_yaml(RsYaml *yaml, const RsTopologyOverrides *overrides, GError **error)
{
    const char *path = rs_yaml_get_path(yaml);
    TopologyFile f = {0}; /* (read_topology_fields() can fail before it clears it) */
    yaml_node_t *root = NULL;
    g_autoptr(GArray) copy_runs = NULL;
    gboolean ok = read_topology_fields(yaml, &f, &copy_runs, &root, error) &&
                  apply_overrides(&f, overrides, path, error) &&
                  check_sizes(&f, yaml, root, overrides, path, error);
    if (!ok) {
        if (f.warnings != NULL)
            g_ptr_array_unref(f.warnings);
        return NULL;
    }
    /* The fabric's defaults matter once nodes of several NVLink domains talk over it. */
    gint64 per_domain = MAX(f.nodes_per_domain, 1);
    if (f.n_nodes > per_domain) {
        if (!f.has_fabric)
            note_default(&f, "fabric",
                         "one scalable unit of every node, oversubscription 1:1, switch "
                         "latency 0 us, PXN off");
        else {
            if (!f.has_su_nodes)
                note_default(&f, "fabric.scalable_unit_nodes",
                             "every node (one scalable unit, one leaf per rail)");
            if (!f.has_oversubscription)
                note_default(&f, "fabric.oversubscription", "1:1 (non-blocking)");
            if (!f.has_switch_latency)
                note_default(&f, "fabric.switch_latency", "0 us");
            if (!f.has_pxn)
                note_default(&f, "fabric.pxn", "false (no PXN)");
        }
    }
    RsTopology *topo = topology_new_from_file(&f, g_steal_pointer(&copy_runs));
    topo->warnings = f.warnings;
    return topo;
}

gboolean
rs_topology_check_file(const char *path, GError **error)
{
    g_autoptr(RsYaml) yaml = rs_yaml_load_file(path, error);
    TopologyFile f;
    yaml_node_t *root = NULL;
    g_autoptr(GArray) copy_runs = NULL;
    memset(&f, 0, sizeof f);
    gboolean ok = yaml != NULL && read_topology_fields(yaml, &f, &copy_runs, &root, error);
    if (f.warnings != NULL)
        g_ptr_array_unref(f.warnings);
    return ok;
}

static RsLink
make_link(RsLinkKind kind, const LinkClass *c, guint32 owner)
{
    RsLink l = {kind, c->bw_bytes_per_s, c->efficiency, c->latency_s, owner};
    return l;
}

static guint
su_n_nodes(const RsTopology *topo, guint unit)
{
    guint first = unit * topo->su_nodes;
    return MIN(topo->su_nodes, topo->n_nodes - first);
}

static void
build_links(RsTopology *topo, const LinkClass *nvlink, const LinkClass *pcie, const LinkClass *nic,
            double uplink_efficiency)
{
    static const RsLinkKind order[] = {RS_LINK_NVLINK_EGRESS, RS_LINK_NVLINK_INGRESS,
                                       RS_LINK_PCIE_EGRESS,   RS_LINK_PCIE_INGRESS,
                                       RS_LINK_NIC_EGRESS,    RS_LINK_NIC_INGRESS};
    for (guint k = 0; k < RS_LINK_KIND_N; k++)
        topo->slot[k] = -1;
    guint stride = 0;
    for (guint i = 0; i < G_N_ELEMENTS(order); i++) {
        gboolean is_pcie = order[i] == RS_LINK_PCIE_EGRESS || order[i] == RS_LINK_PCIE_INGRESS;
        if (is_pcie && !topo->has_pcie)
            continue;
        topo->slot[order[i]] = (gint)stride++;
    }
    topo->gpu_stride = stride;
    guint n_gpus = rs_topology_get_n_gpus(topo);
    guint n_rails = topo->gpus_per_node;
    guint n_leaves = topo->n_sus * n_rails;
    topo->leaf_base = n_gpus * stride;
    topo->n_links = topo->leaf_base + 2 * n_leaves;
    topo->links = g_new0(RsLink, topo->n_links);
    topo->dominated = g_new0(guint8, topo->n_links);
    for (guint32 g = 0; g < n_gpus; g++) {
        RsLink *block = &topo->links[g * stride];
        block[topo->slot[RS_LINK_NVLINK_EGRESS]] = make_link(RS_LINK_NVLINK_EGRESS, nvlink, g);
        block[topo->slot[RS_LINK_NVLINK_INGRESS]] = make_link(RS_LINK_NVLINK_INGRESS, nvlink, g);
        block[topo->slot[RS_LINK_NIC_EGRESS]] = make_link(RS_LINK_NIC_EGRESS, nic, g);
        block[topo->slot[RS_LINK_NIC_INGRESS]] = make_link(RS_LINK_NIC_INGRESS, nic, g);
        if (topo->has_pcie) {
            block[topo->slot[RS_LINK_PCIE_EGRESS]] = make_link(RS_LINK_PCIE_EGRESS, pcie, g);
            block[topo->slot[RS_LINK_PCIE_INGRESS]] = make_link(RS_LINK_PCIE_INGRESS, pcie, g);
            /* PCIe and NIC carry the same flows: the larger never binds. */
            double pcie_cap = pcie->bw_bytes_per_s * pcie->efficiency;
            double nic_cap = nic->bw_bytes_per_s * nic->efficiency;
            gboolean pcie_dominated = pcie_cap >= nic_cap;
            RsLinkKind dominated_eg = pcie_dominated ? RS_LINK_PCIE_EGRESS : RS_LINK_NIC_EGRESS;
            RsLinkKind dominated_in = pcie_dominated ? RS_LINK_PCIE_INGRESS : RS_LINK_NIC_INGRESS;
            topo->dominated[g * stride + topo->slot[dominated_eg]] = 1;
            topo->dominated[g * stride + topo->slot[dominated_in]] = 1;
        }
    }
    /* A NIC's path capacity: the smaller of its NIC and PCIe links. */
    double path_eg = nic->bw_bytes_per_s * nic->efficiency;
    double path_in = path_eg;
    if (topo->has_pcie) {
        path_eg = MIN(path_eg, pcie->bw_bytes_per_s * pcie->efficiency);
        path_in = path_eg;
    }
    for (guint u = 0; u < topo->n_sus; u++) {
        guint nodes = su_n_nodes(topo, u);
        LinkClass up = {nodes * nic->bw_bytes_per_s / topo->oversubscription, uplink_efficiency,
                        0.0};
        for (guint r = 0; r < n_rails; r++) {
            guint32 leaf = u * n_rails + r;
            guint32 id = topo->leaf_base + 2 * leaf;
            topo->links[id] = make_link(RS_LINK_LEAF_UPLINK, &up, leaf);
            topo->links[id + 1] = make_link(RS_LINK_LEAF_DOWNLINK, &up, leaf);
            double cap = up.bw_bytes_per_s * up.efficiency;
            /* Relative slack keeps "oversubscription 1" dominated despite rounding. */
            if (cap * (1 + 1e-12) >= nodes * path_eg)
                topo->dominated[id] = 1;
            if (cap * (1 + 1e-12) >= nodes * path_in)
                topo->dominated[id + 1] = 1;
        }
    }
}

RsTopology *
rs_topology_load_file(const char *path, const RsTopologyOverrides *overrides, GError **error)
{
    g_autoptr(RsYaml) yaml = rs_yaml_load_file(path, error);
    return yaml ? topology_from_yaml(yaml, overrides, error) : NULL;
}

RsTopology *
rs_topology_load_string(const char *text, const char *name, const RsTopologyOverrides *overrides,
                        GError **error)
{
    g_autoptr(RsYaml) yaml = rs_yaml_load_string(text, name, error);
    return yaml ? topology_from_yaml(yaml, overrides, error) : NULL;
}

guint
rs_topology_get_n_warnings(const RsTopology *topo)
{
    return topo->warnings != NULL ? topo->warnings->len : 0;
}

const char *
rs_topology_get_warning(const RsTopology *topo, guint index)
{
    g_return_val_if_fail(index < rs_topology_get_n_warnings(topo), NULL);
    return g_ptr_array_index(topo->warnings, index);
}

void
rs_topology_free(RsTopology *topo)
{
    if (topo == NULL)
        return;
    g_free(topo->name);
    g_free(topo->description);
    g_free(topo->gpu_model);
    g_free(topo->links);
    g_free(topo->dominated);
    g_free(topo->job);
    if (topo->copy_runs != NULL)
        g_array_unref(topo->copy_runs);
    if (topo->warnings != NULL)
        g_ptr_array_unref(topo->warnings);
    g_free(topo);
}

/* --- queries --- */

const char *
rs_topology_get_name(const RsTopology *topo)
{
    return topo->name;
}

const char *
rs_topology_get_description(const RsTopology *topo)
{
    return topo->description;
}

const char *
rs_topology_get_gpu_model(const RsTopology *topo)
{
    return topo->gpu_model;
}

guint64
rs_topology_get_gpu_memory_bytes(const RsTopology *topo)
{
    return topo->gpu_memory_bytes;
}

guint
rs_topology_get_n_nodes(const RsTopology *topo)
{
    return topo->n_nodes;
}

guint
rs_topology_get_gpus_per_node(const RsTopology *topo)
{
    return topo->gpus_per_node;
}

guint
rs_topology_get_n_gpus(const RsTopology *topo)
{
    return topo->n_nodes * topo->gpus_per_node;
}

guint
rs_topology_get_gpus_per_nvlink_domain(const RsTopology *topo)
{
    return topo->gpus_per_node * topo->nodes_per_nvlink_domain;
}

guint
rs_topology_get_n_nvlink_domains(const RsTopology *topo)
{
    return topo->n_nodes / topo->nodes_per_nvlink_domain;
}

guint
rs_topology_get_nvlink_domain(const RsTopology *topo, guint32 gpu)
{
    return gpu / rs_topology_get_gpus_per_nvlink_domain(topo);
}

guint
rs_topology_get_node(const RsTopology *topo, guint32 gpu)
{
    return gpu / topo->gpus_per_node;
}

guint
rs_topology_get_rail(const RsTopology *topo, guint32 gpu)
{
    return gpu % topo->gpus_per_node;
}

guint
rs_topology_get_n_rails(const RsTopology *topo)
{
    return topo->gpus_per_node;
}

guint
rs_topology_get_scalable_unit_nodes(const RsTopology *topo)
{
    return topo->su_nodes;
}

guint
rs_topology_get_n_scalable_units(const RsTopology *topo)
{
    return topo->n_sus;
}

guint
rs_topology_get_scalable_unit(const RsTopology *topo, guint32 gpu)
{
    return rs_topology_get_node(topo, gpu) / topo->su_nodes;
}

double
rs_topology_get_oversubscription(const RsTopology *topo)
{
    return topo->oversubscription;
}

double
rs_topology_get_switch_latency_s(const RsTopology *topo)
{
    return topo->switch_latency_s;
}

gboolean
rs_topology_has_pcie(const RsTopology *topo)
{
    return topo->has_pcie;
}

gboolean
rs_topology_has_pxn(const RsTopology *topo)
{
    return topo->pxn;
}

double
rs_topology_get_message_overhead_s(const RsTopology *topo)
{
    return topo->message_overhead_s;
}

double
rs_topology_get_chunk_overhead_s(const RsTopology *topo, guint64 *chunk_size_bytes_out)
{
    if (chunk_size_bytes_out != NULL)
        *chunk_size_bytes_out = topo->chunk_size_bytes;
    return topo->chunk_overhead_s;
}

guint64
rs_topology_count_chunks(const RsTopology *topo, guint64 size_bytes, guint64 chunk_bytes)
{
    guint64 c = chunk_bytes > 0 ? chunk_bytes : topo->chunk_size_bytes;
    if (c == 0 || size_bytes == 0)
        return size_bytes > 0;
    return size_bytes / c + (size_bytes % c != 0);
}

void
rs_topology_set_job_gpus(RsTopology *topo, const guint32 *gpus, guint n_gpus)
{
    g_clear_pointer(&topo->job, g_free);
    if (gpus == NULL || n_gpus == 0)
        return;
    guint n = rs_topology_get_n_gpus(topo);
    topo->job = g_new0(guint8, MAX(n, 1));
    for (guint i = 0; i < n_gpus; i++)
        if (gpus[i] < n)
            topo->job[gpus[i]] = 1;
}

gboolean
rs_topology_gpu_in_job(const RsTopology *topo, guint32 gpu)
{
    return topo->job == NULL || (gpu < rs_topology_get_n_gpus(topo) && topo->job[gpu]);
}

gboolean
rs_topology_has_job(const RsTopology *topo)
{
    return topo->job != NULL;
}

const RsGpuCosts *
rs_topology_get_gpu_costs(const RsTopology *topo)
{
    return &topo->gpu_costs;
}

const RsCopyRate *
rs_topology_get_copy_rates(const RsTopology *topo, guint *n_out)
{
    *n_out = topo->copy_runs ? topo->copy_runs->len : 0;
    return topo->copy_runs ? (const RsCopyRate *)topo->copy_runs->data : NULL;
}

/* Interpolation between the two entries around @run_bytes, linear in log(run bytes);
 * outside the table the nearest entry. */
double
rs_topology_get_copy_bytes_per_s(const RsTopology *topo, guint64 run_bytes, gboolean local,
                                 RsCopySide side, RsCopyScope scope)
{
    guint n;
    const RsCopyRate *rates = rs_topology_get_copy_rates(topo, &n);
    g_return_val_if_fail(side < RS_COPY_SIDE_N && scope < RS_COPY_SCOPE_N, INFINITY);
    if (n == 0)
        return INFINITY;
    if (run_bytes <= rates[0].run_bytes)
        return rs_copy_rate_get(&rates[0], local, side, scope);
    if (run_bytes >= rates[n - 1].run_bytes)
        return rs_copy_rate_get(&rates[n - 1], local, side, scope);
    guint hi = 1;
    while (rates[hi].run_bytes < run_bytes)
        hi++;
    const RsCopyRate *a = &rates[hi - 1], *b = &rates[hi];
    double f = log((double)run_bytes / (double)a->run_bytes) /
               log((double)b->run_bytes / (double)a->run_bytes);
    double ra = rs_copy_rate_get(a, local, side, scope);
    return ra + f * (rs_copy_rate_get(b, local, side, scope) - ra);
}

double
rs_topology_get_copy_s_per_byte(const RsTopology *topo, guint64 read_run_bytes,
                                guint64 write_run_bytes, gboolean local, RsCopyScope scope)
{
    guint n;
    const RsCopyRate *rates = rs_topology_get_copy_rates(topo, &n);
    if (n == 0)
        return 0.0;
    const RsCopyRate *last = &rates[n - 1];
    double contiguous_s = 1.0 / MAX(rs_copy_rate_get(last, local, RS_COPY_READ, scope),
                                    rs_copy_rate_get(last, local, RS_COPY_WRITE, scope));
    double read_s = 1.0 / rs_topology_get_copy_bytes_per_s(topo, read_run_bytes, local,
                                                           RS_COPY_READ, scope);
    double write_s = 1.0 / rs_topology_get_copy_bytes_per_s(topo, write_run_bytes, local,
                                                            RS_COPY_WRITE, scope);
    return MAX(read_s + write_s - contiguous_s, MAX(read_s, write_s));
}

guint
rs_topology_get_n_links(const RsTopology *topo)
{
    return topo->n_links;
}

const RsLink *
rs_topology_get_link(const RsTopology *topo, guint32 link_id)
{
    g_return_val_if_fail(link_id < topo->n_links, NULL);
    return &topo->links[link_id];
}

guint32
rs_topology_get_link_gpu(const RsTopology *topo, guint32 link_id)
{
    if (link_id >= topo->leaf_base)
        return G_MAXUINT32;
    return link_id / topo->gpu_stride;
}

guint32
rs_topology_get_gpu_link(const RsTopology *topo, guint32 gpu, RsLinkKind kind)
{
    g_return_val_if_fail(kind < RS_LINK_KIND_N, G_MAXUINT32);
    if (topo->slot[kind] < 0)
        return G_MAXUINT32;
    return gpu * topo->gpu_stride + (guint32)topo->slot[kind];
}

guint32
rs_topology_get_leaf_link(const RsTopology *topo, guint unit, guint rail, RsLinkKind kind)
{
    g_return_val_if_fail(kind == RS_LINK_LEAF_UPLINK || kind == RS_LINK_LEAF_DOWNLINK, G_MAXUINT32);
    return topo->leaf_base + 2 * (unit * topo->gpus_per_node + rail) +
           (kind == RS_LINK_LEAF_DOWNLINK);
}

gboolean
rs_topology_link_is_dominated(const RsTopology *topo, guint32 link_id)
{
    return topo->dominated[link_id] != 0;
}

const char *
rs_link_kind_get_name(RsLinkKind kind)
{
    static const char *const names[RS_LINK_KIND_N] = {
        [RS_LINK_NVLINK_EGRESS] = "nvlink-egress", [RS_LINK_NVLINK_INGRESS] = "nvlink-ingress",
        [RS_LINK_NIC_EGRESS] = "nic-egress",       [RS_LINK_NIC_INGRESS] = "nic-ingress",
        [RS_LINK_PCIE_EGRESS] = "pcie-egress",     [RS_LINK_PCIE_INGRESS] = "pcie-ingress",
        [RS_LINK_LEAF_UPLINK] = "uplink",          [RS_LINK_LEAF_DOWNLINK] = "downlink",
    };
    g_return_val_if_fail(kind < RS_LINK_KIND_N, "invalid");
    return names[kind];
}

char *
rs_topology_format_link(const RsTopology *topo, guint32 link_id)
{
    g_return_val_if_fail(link_id < topo->n_links, g_strdup("invalid"));
    const RsLink *l = &topo->links[link_id];
    if (l->kind == RS_LINK_LEAF_UPLINK || l->kind == RS_LINK_LEAF_DOWNLINK)
        return g_strdup_printf("su%u.rail%u.%s", l->owner / topo->gpus_per_node,
                               l->owner % topo->gpus_per_node, rs_link_kind_get_name(l->kind));
    return g_strdup_printf("gpu%u.%s", l->owner, rs_link_kind_get_name(l->kind));
}

double
rs_link_get_capacity_bytes_per_s(const RsLink *link)
{
    return link->bw_bytes_per_s * link->efficiency;
}

/* --- routes --- */

/* Appends the links from @from's GPU out to @dst's GPU over the scale-out fabric; returns
 * the new count, and adds the switches crossed to *n_switches. */
static guint
route_network(const RsTopology *topo, guint32 from, guint32 dst, guint32 *links, guint n,
              guint *n_switches)
{
    if (topo->has_pcie)
        links[n++] = rs_topology_get_gpu_link(topo, from, RS_LINK_PCIE_EGRESS);
    links[n++] = rs_topology_get_gpu_link(topo, from, RS_LINK_NIC_EGRESS);
    guint su_from = rs_topology_get_scalable_unit(topo, from);
    guint su_dst = rs_topology_get_scalable_unit(topo, dst);
    guint rail_from = rs_topology_get_rail(topo, from), rail_dst = rs_topology_get_rail(topo, dst);
    if (su_from != su_dst || rail_from != rail_dst) {
        links[n++] = rs_topology_get_leaf_link(topo, su_from, rail_from, RS_LINK_LEAF_UPLINK);
        links[n++] = rs_topology_get_leaf_link(topo, su_dst, rail_dst, RS_LINK_LEAF_DOWNLINK);
        *n_switches += 3; /* leaf, spine, leaf */
    } else {
        *n_switches += 1; /* the rail's leaf */
    }
    links[n++] = rs_topology_get_gpu_link(topo, dst, RS_LINK_NIC_INGRESS);
    if (topo->has_pcie)
        links[n++] = rs_topology_get_gpu_link(topo, dst, RS_LINK_PCIE_INGRESS);
    return n;
}

static guint
route_full(const RsTopology *topo, guint32 src, guint32 dst, guint32 *links, guint *n_switches)
{
    *n_switches = 0;
    if (src == dst)
        return 0;
    if (rs_topology_get_nvlink_domain(topo, src) == rs_topology_get_nvlink_domain(topo, dst)) {
        links[0] = rs_topology_get_gpu_link(topo, src, RS_LINK_NVLINK_EGRESS);
        links[1] = rs_topology_get_gpu_link(topo, dst, RS_LINK_NVLINK_INGRESS);
        return 2;
    }
    guint n = 0;
    guint32 from = src;
    guint rail_dst = rs_topology_get_rail(topo, dst);
    guint32 proxy = rs_topology_get_node(topo, src) * topo->gpus_per_node + rail_dst;
    if (topo->pxn && rs_topology_get_rail(topo, src) != rail_dst &&
        rs_topology_gpu_in_job(topo, proxy)) {
        /* PXN: hand the data over NVLink to the GPU of our node on the destination's rail. */
        from = proxy;
        links[n++] = rs_topology_get_gpu_link(topo, src, RS_LINK_NVLINK_EGRESS);
        links[n++] = rs_topology_get_gpu_link(topo, from, RS_LINK_NVLINK_INGRESS);
    }
    return route_network(topo, from, dst, links, n, n_switches);
}

guint
rs_topology_route(const RsTopology *topo, guint32 src, guint32 dst, guint32 *links)
{
    guint n_switches;
    return route_full(topo, src, dst, links, &n_switches);
}

double
rs_topology_get_route_latency_s(const RsTopology *topo, guint32 src, guint32 dst)
{
    guint32 links[RS_TOPOLOGY_MAX_ROUTE];
    guint n_switches;
    guint n = route_full(topo, src, dst, links, &n_switches);
    double t = n_switches * topo->switch_latency_s;
    for (guint i = 0; i < n; i++)
        t += topo->links[links[i]].latency_s;
    return t;
}

double
rs_topology_get_message_latency_s(const RsTopology *topo, guint32 src, guint32 dst)
{
    if (src == dst)
        return 0.0;
    return topo->message_overhead_s + rs_topology_get_route_latency_s(topo, src, dst);
}

char *
rs_topology_format_summary(const RsTopology *topo)
{
    const RsLink *nv = &topo->links[topo->slot[RS_LINK_NVLINK_EGRESS]];
    const RsLink *nic = &topo->links[topo->slot[RS_LINK_NIC_EGRESS]];
    g_autoptr(GString) s = g_string_new(NULL);
    g_string_append_printf(s,
                           "%s: %u nodes x %u %s = %u GPUs, NVLink domains of %u GPUs; NVLink "
                           "%.0f GB/s x %.2f, NIC %.0f Gbit/s x %.2f per GPU",
                           topo->name, topo->n_nodes, topo->gpus_per_node, topo->gpu_model,
                           rs_topology_get_n_gpus(topo),
                           rs_topology_get_gpus_per_nvlink_domain(topo), nv->bw_bytes_per_s / 1e9,
                           nv->efficiency, nic->bw_bytes_per_s * 8 / 1e9, nic->efficiency);
    if (topo->has_pcie) {
        const RsLink *pcie = &topo->links[topo->slot[RS_LINK_PCIE_EGRESS]];
        g_string_append_printf(s, ", PCIe %.0f GB/s x %.2f", pcie->bw_bytes_per_s / 1e9,
                               pcie->efficiency);
    }
    g_autofree char *units = rs_topology_describe_scalable_units(topo);
    g_string_append_printf(s, "; %s, oversubscription %g:1%s", units, topo->oversubscription,
                           topo->pxn ? ", PXN" : "");
    return g_string_free(g_steal_pointer(&s), FALSE);
}

char *
rs_topology_describe_scalable_units(const RsTopology *topo)
{
    guint n = topo->n_sus, size = topo->su_nodes;
    guint last = n > 0 ? topo->n_nodes - (n - 1) * size : 0;
    if (n == 0 || last == size)
        return g_strdup_printf("%u scalable unit%s of %u nodes", n, n == 1 ? "" : "s", size);
    if (n == 1)
        return g_strdup_printf("1 scalable unit, %u of its %u nodes", last, size);
    return g_strdup_printf("%u scalable units of %u nodes, the last with %u", n, size, last);
}
