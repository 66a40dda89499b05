/* memory.h — memory feasibility of a refit: the bytes each GPU holds for the weights of
 * each side, plus the staging the planner may use per round, plus a reserve the user sets,
 * against the GPU memory of the topology.
 *
 * Weights per GPU are counted from the layouts as they are allocated: each (rank, local
 * buffer) once, at the product of its buffer shape (padding rows and every tensor of a
 * fused buffer included), in the side's dtype (the sources' dtype for training, the wire
 * and destination dtype for inference; MXFP4 at half a byte per element). Block scales of
 * a quantised destination (FP8 weight_scale_inv, MXFP4 scales) count on the inference side
 * only: the sources compute them when converting. A GPU that is on both sides (colocated
 * training and inference) holds both sides' buffers, both reserves and the staging once.
 *
 * The reserve stands for what else the framework keeps on the GPU: on the inference side
 * the KV cache and activations (vLLM's gpu_memory_utilization leaves the rest of the GPU
 * to the KV cache), on the training side the optimizer state, gradients and activations.
 */
#pragma once

#include <glib.h>

#include "layout/refit.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

/* The sides of a refit. */
typedef enum { RS_MEMORY_TRAIN, RS_MEMORY_INFER, RS_MEMORY_SIDE_N } RsMemorySide;

/* What one side needs on its busiest GPU. */
typedef struct {
    guint n_gpus;           /* GPUs of the side */
    guint32 max_gpu;        /* the GPU that needs the most (of this side) */
    guint64 weights_bytes;  /* weights held by @max_gpu, bytes (both sides when colocated) */
    guint64 staging_bytes;  /* staging the planner may use per round on it, bytes */
    guint64 reserve_bytes;  /* the reserves of the sides it is on, bytes */
    guint64 total_bytes;    /* weights + staging + reserve, bytes */
    guint64 capacity_bytes; /* the topology's GPU memory, bytes (0: unknown) */
    gboolean feasible;      /* total_bytes <= capacity_bytes (TRUE when unknown) */
} RsMemorySideResult;

typedef struct {
    RsMemorySideResult side[RS_MEMORY_SIDE_N];
    gboolean feasible; /* both sides */
} RsMemoryResult;

/* What the caller sets. */
typedef struct {
    guint64 staging_bytes;                   /* per rank per round, bytes (the planner's) */
    guint64 reserve_bytes[RS_MEMORY_SIDE_N]; /* per GPU of each side, bytes */
} RsMemoryOptions;

/**
 * rs_memory_compute:
 * @refit: the refit; its ranks must be GPUs of @topology
 * @topology: supplies the GPU memory (rs_topology_get_gpu_memory_bytes())
 * @options: staging and reserves
 * @out: (out caller-allocates): each side's busiest GPU and whether it fits
 *
 * O(Σ tensors × ranks per layout). Deterministic: ties go to the lowest GPU index.
 * A side with no GPU has n_gpus 0 and is feasible.
 */
void rs_memory_compute(const RsRefit *refit, const RsTopology *topology,
                       const RsMemoryOptions *options, RsMemoryResult *out);

/**
 * rs_memory_side_get_name:
 * Returns: (transfer none): "train" or "infer".
 */
const char *rs_memory_side_get_name(RsMemorySide side);

/**
 * rs_memory_format_lines:
 * Returns: (transfer full): one line per side for the text reports, e.g.
 *   "memory     infer GPU 256: 169.57 GB weights + 5.37 GB staging + 0.00 GB reserve =
 *   174.94 GB of 85.90 GB: INFEASIBLE", each ending in a newline.
 */
char *rs_memory_format_lines(const RsMemoryResult *memory);

G_END_DECLS
