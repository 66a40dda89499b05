/* lower-bound.h — a cut-based lower bound on the time of any refit of a set of layouts.
 *
 * No schedule can beat, for any set of GPUs, the bytes that must cross the
 * set's boundary divided by the capacity of the links crossing it (a cut bound; Ford &
 * Fulkerson's max-flow min-cut argument applied per cut). Sets and their cut links:
 *  - each GPU: ingress = NVLink ingress (when its NVLink domain has other GPUs) + the
 *    smaller of its NIC and PCIe ingress, the latter only when some GPU of the job
 *    (rs_topology_gpu_in_job()) lies outside its NVLink domain (traffic inside a domain
 *    takes NVLink, rs_topology_route()); egress likewise;
 *  - each NVLink domain: the NIC path (smaller of NIC and PCIe) of every GPU in it;
 *  - each scalable unit (when there are several): the smaller of its leaves' downlinks
 *    (uplinks) and its GPUs' NIC paths.
 * Bytes that must enter a set: elements its destination GPUs need that no source GPU in the
 * set holds (each counted once, as a relay inside the set could fan it out). Bytes that must
 * leave a set: elements held by source GPUs in the set only and needed by some destination
 * GPU outside it, counted once. Which replica sends is the planner's choice, so an element
 * also held outside the set is never counted on the egress side. The bound uses the same
 * achievable capacities as the simulator, so efficiency = bound / predicted is at most 1.
 */
#pragma once

#include <glib.h>

#include "layout/refit.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

#define RS_LOWER_BOUND_ERROR (rs_lower_bound_error_quark())
GQuark rs_lower_bound_error_quark(void);

typedef enum {
    RS_LOWER_BOUND_ERROR_RANK, /* a rank of the refit is not a GPU of the topology */
} RsLowerBoundError;

typedef enum {
    RS_CUT_NONE,           /* nothing has to move */
    RS_CUT_GPU_INGRESS,    /* one GPU's NVLink + NIC path ingress */
    RS_CUT_DOMAIN_INGRESS, /* one NVLink domain's NIC paths, ingress */
    RS_CUT_GPU_EGRESS,     /* one GPU's NVLink + NIC path egress */
    RS_CUT_DOMAIN_EGRESS,  /* one NVLink domain's NIC paths, egress */
    RS_CUT_UNIT_INGRESS,   /* one scalable unit's leaf downlinks */
    RS_CUT_UNIT_EGRESS,    /* one scalable unit's leaf uplinks */
    RS_CUT_KIND_N
} RsCutKind;

/* The links a binding cut's capacity is made of. */
typedef enum {
    RS_CUT_LINKS_NIC,  /* its GPUs' NICs (a GPU cut: with its NVLink) */
    RS_CUT_LINKS_PCIE, /* some GPU's PCIe link between it and its NIC, below the NIC (a NIC
                        * faster than PCIe: dgx-h100 with --nic-bw 800Gbit/s) */
    RS_CUT_LINKS_LEAF, /* a scalable unit's leaf links, below its GPUs' NICs */
    RS_CUT_LINKS_NVLINK, /* a GPU cut's NVLink alone: no GPU of the job outside its NVLink
                          * domain, so its NIC carries nothing */
} RsCutLinks;

typedef struct {
    double time_s;                /* the bound, seconds */
    RsCutKind kind;               /* which cut binds */
    guint32 where;                /* the GPU, NVLink domain or scalable unit of that cut */
    guint64 cut_bytes;            /* bytes that must cross it */
    double cut_capacity_bytes_per_s;
    RsCutLinks cut_links;         /* what that capacity is made of */
    double gpu_ingress_s;         /* = kind_s[RS_CUT_GPU_INGRESS] */
    double domain_ingress_s;      /* = kind_s[RS_CUT_DOMAIN_INGRESS] */
    double kind_s[RS_CUT_KIND_N]; /* the best bound of each kind, seconds */
    guint32 kind_where[RS_CUT_KIND_N];
} RsLowerBound;

/**
 * rs_lower_bound_compute:
 * @refit: tensors with layouts
 * @topo: the topology
 * @out: (out caller-allocates): the bound and its binding cut
 * @error: RS_LOWER_BOUND_ERROR_RANK when a source or destination rank is not a GPU of @topo
 *
 * Strategy-independent. Tensors sharing a (source, destination) layout pair are evaluated
 * once. Per pair O(Σ_sets boxes² + source boxes × destination boxes) box operations. Ties
 * between kinds go to the first kind in RsCutKind order.
 *
 * Returns: TRUE on success.
 */
gboolean rs_lower_bound_compute(const RsRefit *refit, const RsTopology *topo, RsLowerBound *out,
                                GError **error);

/** rs_lower_bound_format_cut: Returns: (transfer full): "NVLink domain 33 ingress (its
 * NICs): 335.5 GB over 380 GB/s". */
char *rs_lower_bound_format_cut(const RsLowerBound *bound);

/** rs_cut_kind_get_name: Returns: (transfer none): "gpu-ingress", "nvlink-domain-egress",
 * "scalable-unit-ingress", …, "none". */
const char *rs_cut_kind_get_name(RsCutKind kind);

G_END_DECLS
