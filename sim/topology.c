/* topology.c — loads a fabric description and answers routing questions.
 *
 * The model is deliberately small: per GPU an NVLink port pair and a NIC port pair, each
 * a directed link with peak bandwidth, achievable efficiency and latency. Link ids are
 * computed (4·gpu + kind), so a 4,096-GPU cluster needs no per-link storage beyond the
 * four shared link records. */
#include "sim/topology.h"

#include "sim/units.h"
#include "sim/yaml-reader.h"

G_DEFINE_QUARK(rs-topology-error-quark, rs_topology_error)

struct _RsTopology {
    char *name;
    char *gpu_model;
    guint64 gpu_memory_bytes;
    guint n_nodes;
    guint gpus_per_node;
    guint nodes_per_nvlink_domain;
    double message_overhead_s;
    RsLink link_class[RS_LINK_KIND_N]; /* the figures shared by all links of a kind */
};

static gboolean
read_link_class(RsYaml *yaml, yaml_node_t *root, const char *section, RsLink *link,
                GError **error)
{
    static const char *const keys[] = {"bandwidth", "efficiency", "latency", NULL};
    yaml_node_t *map = rs_yaml_lookup(yaml, root, section);
    if (map == NULL) {
        rs_yaml_set_error(yaml, root, NULL, section, error, RS_YAML_ERROR_MISSING,
                          "required section is missing");
        return FALSE;
    }
    link->efficiency = 1.0;
    link->latency_s = 0.0;
    return rs_yaml_check_keys(yaml, map, section, keys, error) &&
           rs_yaml_read_bandwidth(yaml, map, section, "bandwidth", TRUE, &link->bw_bytes_per_s,
                                  error) &&
           rs_yaml_read_double(yaml, map, section, "efficiency", FALSE, 1e-6, 1.0,
                               &link->efficiency, error) &&
           rs_yaml_read_duration(yaml, map, section, "latency", FALSE, &link->latency_s, error);
}

static RsTopology *
topology_from_yaml(RsYaml *yaml, const RsTopologyOverrides *overrides, GError **error)
{
    static const char *const root_keys[] = {"name",    "description", "nodes",
                                            "gpus_per_node", "nodes_per_nvlink_domain", "gpu",
                                            "nvlink",  "nic",         "software", NULL};
    static const char *const gpu_keys[] = {"model", "memory", NULL};
    static const char *const software_keys[] = {"message_overhead", NULL};
    yaml_node_t *root = rs_yaml_get_root_mapping(yaml, error);
    if (root == NULL || !rs_yaml_check_keys(yaml, root, NULL, root_keys, error))
        return NULL;

    const char *name = NULL, *gpu_model = "GPU";
    gint64 n_nodes = 0, gpus_per_node = 0, nodes_per_domain = 1;
    guint64 memory = 0;
    double overhead_s = 0.0;
    RsLink nvlink = {0}, nic = {0};
    if (!rs_yaml_read_string(yaml, root, NULL, "name", TRUE, &name, error) ||
        !rs_yaml_read_int64(yaml, root, NULL, "nodes", TRUE, 1, 1 << 20, &n_nodes, error) ||
        !rs_yaml_read_int64(yaml, root, NULL, "gpus_per_node", TRUE, 1, 1024, &gpus_per_node,
                            error) ||
        !rs_yaml_read_int64(yaml, root, NULL, "nodes_per_nvlink_domain", FALSE, 1, 1 << 20,
                            &nodes_per_domain, error))
        return NULL;
    yaml_node_t *gpu = rs_yaml_lookup(yaml, root, "gpu");
    if (gpu != NULL &&
        (!rs_yaml_check_keys(yaml, gpu, "gpu", gpu_keys, error) ||
         !rs_yaml_read_string(yaml, gpu, "gpu", "model", FALSE, &gpu_model, error) ||
         !rs_yaml_read_size(yaml, gpu, "gpu", "memory", FALSE, &memory, error)))
        return NULL;
    if (!read_link_class(yaml, root, "nvlink", &nvlink, error) ||
        !read_link_class(yaml, root, "nic", &nic, error))
        return NULL;
    yaml_node_t *software = rs_yaml_lookup(yaml, root, "software");
    if (software != NULL &&
        (!rs_yaml_check_keys(yaml, software, "software", software_keys, error) ||
         !rs_yaml_read_duration(yaml, software, "software", "message_overhead", FALSE,
                                &overhead_s, error)))
        return NULL;

    if (overrides != NULL && overrides->n_nodes != 0)
        n_nodes = overrides->n_nodes;
    if (n_nodes % nodes_per_domain != 0) {
        g_set_error(error, RS_TOPOLOGY_ERROR, RS_TOPOLOGY_ERROR_INVALID,
                    "%s: nodes_per_nvlink_domain=%" G_GINT64_FORMAT " does not divide %" G_GINT64_FORMAT
                    " nodes",
                    rs_yaml_get_path(yaml), nodes_per_domain, n_nodes);
        return NULL;
    }
    if ((guint64)n_nodes * (guint64)gpus_per_node > (1u << 30)) {
        g_set_error(error, RS_TOPOLOGY_ERROR, RS_TOPOLOGY_ERROR_INVALID,
                    "%s: %" G_GINT64_FORMAT " nodes of %" G_GINT64_FORMAT " GPUs is too many",
                    rs_yaml_get_path(yaml), n_nodes, gpus_per_node);
        return NULL;
    }

    RsTopology *topo = g_new0(RsTopology, 1);
    topo->name = g_strdup(name);
    topo->gpu_model = g_strdup(gpu_model);
    topo->gpu_memory_bytes = memory;
    topo->n_nodes = (guint)n_nodes;
    topo->gpus_per_node = (guint)gpus_per_node;
    topo->nodes_per_nvlink_domain = (guint)nodes_per_domain;
    topo->message_overhead_s = overhead_s;
    topo->link_class[RS_LINK_NVLINK_EGRESS] = nvlink;
    topo->link_class[RS_LINK_NVLINK_INGRESS] = nvlink;
    topo->link_class[RS_LINK_NIC_EGRESS] = nic;
    topo->link_class[RS_LINK_NIC_INGRESS] = nic;
    for (guint k = 0; k < RS_LINK_KIND_N; k++)
        topo->link_class[k].kind = (RsLinkKind)k;
    return topo;
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

void
rs_topology_free(RsTopology *topo)
{
    if (topo == NULL)
        return;
    g_free(topo->name);
    g_free(topo->gpu_model);
    g_free(topo);
}

const char *
rs_topology_get_name(const RsTopology *topo)
{
    return topo->name;
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

double
rs_topology_get_message_overhead_s(const RsTopology *topo)
{
    return topo->message_overhead_s;
}

guint
rs_topology_get_n_links(const RsTopology *topo)
{
    return rs_topology_get_n_gpus(topo) * RS_LINK_KIND_N;
}

const RsLink *
rs_topology_get_link(const RsTopology *topo, guint32 link_id)
{
    return &topo->link_class[link_id % RS_LINK_KIND_N];
}

guint32
rs_topology_get_link_gpu(const RsTopology *topo, guint32 link_id)
{
    return link_id / RS_LINK_KIND_N;
}

guint32
rs_topology_get_gpu_link(const RsTopology *topo, guint32 gpu, RsLinkKind kind)
{
    return gpu * RS_LINK_KIND_N + kind;
}

const char *
rs_link_kind_get_name(RsLinkKind kind)
{
    static const char *const names[RS_LINK_KIND_N] = {
        [RS_LINK_NVLINK_EGRESS] = "nvlink-egress",
        [RS_LINK_NVLINK_INGRESS] = "nvlink-ingress",
        [RS_LINK_NIC_EGRESS] = "nic-egress",
        [RS_LINK_NIC_INGRESS] = "nic-ingress",
    };
    g_return_val_if_fail(kind < RS_LINK_KIND_N, "invalid");
    return names[kind];
}

char *
rs_topology_format_link(const RsTopology *topo, guint32 link_id)
{
    return g_strdup_printf("gpu%u.%s", link_id / RS_LINK_KIND_N,
                           rs_link_kind_get_name((RsLinkKind)(link_id % RS_LINK_KIND_N)));
}

double
rs_link_get_capacity_bytes_per_s(const RsLink *link)
{
    return link->bw_bytes_per_s * link->efficiency;
}

guint
rs_topology_route(const RsTopology *topo, guint32 src, guint32 dst, guint32 *links)
{
    if (src == dst)
        return 0;
    if (rs_topology_get_nvlink_domain(topo, src) == rs_topology_get_nvlink_domain(topo, dst)) {
        links[0] = rs_topology_get_gpu_link(topo, src, RS_LINK_NVLINK_EGRESS);
        links[1] = rs_topology_get_gpu_link(topo, dst, RS_LINK_NVLINK_INGRESS);
        return 2;
    }
    links[0] = rs_topology_get_gpu_link(topo, src, RS_LINK_NIC_EGRESS);
    links[1] = rs_topology_get_gpu_link(topo, dst, RS_LINK_NIC_INGRESS);
    return 2;
}

double
rs_topology_get_message_latency_s(const RsTopology *topo, guint32 src, guint32 dst)
{
    if (src == dst)
        return 0.0;
    guint32 links[RS_TOPOLOGY_MAX_ROUTE];
    guint n = rs_topology_route(topo, src, dst, links);
    double t = topo->message_overhead_s;
    for (guint i = 0; i < n; i++)
        t += rs_topology_get_link(topo, links[i])->latency_s;
    return t;
}

char *
rs_topology_format_summary(const RsTopology *topo)
{
    const RsLink *nv = &topo->link_class[RS_LINK_NVLINK_EGRESS];
    const RsLink *nic = &topo->link_class[RS_LINK_NIC_EGRESS];
    return g_strdup_printf(
        "%s: %u nodes x %u %s = %u GPUs, NVLink domains of %u GPUs; NVLink %.0f GB/s x %.2f, "
        "NIC %.0f Gbit/s x %.2f per GPU",
        topo->name, topo->n_nodes, topo->gpus_per_node, topo->gpu_model,
        rs_topology_get_n_gpus(topo), rs_topology_get_gpus_per_nvlink_domain(topo),
        nv->bw_bytes_per_s / 1e9, nv->efficiency, nic->bw_bytes_per_s * 8 / 1e9, nic->efficiency);
}
