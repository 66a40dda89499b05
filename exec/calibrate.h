/* calibrate.h — measuring a transport on this machine and fitting the cost model to it.
 *
 * The first-order cost model (sim/cost.h) charges a phase the bytes of its busiest link over
 * the link's capacity plus, for its busiest rank, a fixed cost per message sent or received.
 * Calibration runs the executor on synthetic plans whose features are known exactly: K
 * ranks receive at once (the concurrency), each P messages of S bytes from P distinct
 * peers, as shifted Shard(0) → Shard(0) reshards of P tensors. When there are ranks enough
 * (2K <= n_ranks), K other ranks send, as when training and inference ranks differ
 * (sender K+i sends to receivers i, i+1, … i+P−1 mod K); otherwise the K ranks send to
 * each other (rank i to i+1 … i+P mod K), as when they share the ranks. The sweep covers
 * S, P and K. For such a plan the model predicts
 *
 *     t = overhead · m + chunk_overhead · c + (P·S) / bandwidth,
 *         m = messages per rank (P, or 2P when the receivers also send),
 *         c = chunk operations per rank, m · ⌈S / chunk⌉ (exec/executor.c cuts every
 *             message into transport calls of the run's chunk, default 4 MiB)
 *
 * and a weighted least-squares fit of the median measured times (weights 1/t², so relative
 * errors count equally at every size) gives, per concurrency K, the per-message overhead,
 * the per-chunk overhead and the per-rank link bandwidth; the fit error says how well the
 * model describes the machine. The chunk term is what the first GPU run showed missing:
 * on cuda-local every chunk is a pack launch, an event, a copy and an unpack, and with
 * only (overhead, bandwidth) the fit left an RMS error of 31.5% and folded the chunks'
 * cost into a bandwidth of 78 GB/s on a GPU that copies at 1,765 GB/s (README, "Measured
 * on one H200"). The two overheads are told apart only by messages of more than one
 * chunk: with every size at most the chunk, c = m and the fit keeps the per-message
 * overhead alone. Where ranks share cores (threads of the host transport on a small machine) the
 * bandwidth falls as K grows, which a per-link model cannot express by itself: the topology
 * file is written with the fit at one concurrency, chosen to match how many ranks receive
 * at once in the refits to be predicted (all of them when training and inference share the
 * ranks; the inference ranks otherwise). On the GPU transports (cuda-local, nccl) the same
 * sweeps run with device buffers and CUDA pack/unpack kernels, so the topology written holds
 * the device's copy rates and link figures, and the memcpy reference is a device-to-device
 * cudaMemcpy. It uses the topologies/topology.c format, every rank a
 * GPU of one NVLink domain, so `reshard run --topology FILE` predicts with it. References
 * measured in the same run: single-thread memcpy bandwidth, and the bandwidth of one large
 * message between two ranks through the executor.
 */
#pragma once

#include <glib.h>

#include "exec/executor.h"

G_BEGIN_DECLS

typedef struct {
    guint n_ranks;              /* ranks to calibrate for (mpi: the world size); >= 2 */
    const guint64 *sizes_bytes; /* (array length=n_sizes) (nullable): message sizes; NULL:
                                 * 4 KiB, 64 KiB, 4 MiB, 32 MiB */
    guint n_sizes;
    guint concurrency;          /* K of the topology written; 0: n_ranks */
    guint n_runs;               /* runs per point, median taken; 0: 5 */
    guint64 reference_bytes;    /* memcpy and large-message size; 0: 64 MiB */
    RsExecOptions exec;         /* chunk size, window of the runs (as reshard run) */
    const guint64 *copy_run_bytes; /* (array length=n_copy_runs) (nullable): run lengths of
                                    * the copy sweep, increasing; NULL: 16 B … 1 MiB */
    guint n_copy_runs;
    guint64 copy_bytes;         /* bytes each copying rank copies per copy point; 0: 32 MiB */
    guint copy_stride_runs;     /* the strided side holds one run in every this many; 0: 4 */
} RsCalibrateOptions;

typedef struct {
    guint receivers;    /* K: ranks receiving at once */
    gboolean own_senders; /* K other ranks send (else the receivers send to each other) */
    guint peers;        /* P */
    guint64 size_bytes; /* S */
    double measured_s;  /* median of the runs */
    double fitted_s;    /* overhead · m + chunk_overhead · c + P·S / bandwidth, with the fit
                         * of its K */
} RsCalibratePoint;

/* The fit at one concurrency. */
typedef struct {
    guint receivers;       /* K */
    double overhead_s;     /* per message sent or received, seconds */
    double chunk_overhead_s; /* per chunk operation sent or received, seconds (0 when the
                              * sweep has no message of several chunks) */
    double bw_bytes_per_s; /* per rank and direction */
    double rms_error;      /* relative, over the points of this K */
    double max_error;      /* largest |fitted − measured| / measured */
} RsCalibrateFit;

typedef struct {
    guint n_ranks;
    GArray *points;            /* RsCalibratePoint */
    GArray *fits;              /* RsCalibrateFit, by increasing K */
    guint concurrency;         /* the K written to the topology */
    guint64 chunk_bytes;       /* the executor's chunk of the runs (c counts these) */
    double overhead_s;         /* that fit's figures */
    double chunk_overhead_s;
    double bw_bytes_per_s;
    double rms_error;
    double max_error;
    double memcpy_bytes_per_s; /* single-thread memcpy of reference_bytes (device transports:
                                * cudaMemcpy device to device on GPU 0, device_memcpy) */
    gboolean device_memcpy;
    double large_bytes_per_s;  /* one message of reference_bytes, rank 0 → 1, executor */
    guint64 reference_bytes;
    /* The copy sweep (RsCopyRate, by increasing run length): a tensor whose rows are runs
     * of run_bytes, one run in every copy_stride_runs of the padded side's buffer, read from
     * it (read) or written into it (write), by rank 0 -> 1 alone (one rank) and by K =
     * concurrency ranks at once (node), each from a rank of its own when there are 2K ranks,
     * else from each other; and the same as local copies (each rank its own rows, from its
     * source into its destination buffer: local_bytes_per_s). */
    GArray *copy_rates;
    guint copy_stride_runs;
} RsCalibration;

/**
 * rs_calibrate_run:
 * @transport: the transport to measure (every process of an mpi job calls this)
 * @options: sweep settings; n_ranks is required
 * @out: (out caller-allocates): the fit and the points (meaningful in the process of rank 0);
 *   clear with rs_calibration_clear()
 * @error: RS_EXEC_ERROR_INVALID (fewer than 2 ranks, a size of 0), errors of rs_exec_run()
 *
 * Runtime: every point runs n_runs times; the largest point moves n_ranks·(n_ranks−1)·S
 * bytes; each copy point copies copy_bytes per copying rank. Returns: TRUE on success.
 */
gboolean rs_calibrate_run(RsTransport *transport, const RsCalibrateOptions *options,
                          RsCalibration *out, GError **error);

void rs_calibration_clear(RsCalibration *calibration);

/**
 * rs_calibration_fit:
 * @calibration: points with measured_s set, and the concurrency to write; the fits per K,
 *   fitted_s and the errors are computed
 *
 * Per K, weighted linear least squares (weights 1/measured²) of t = overhead·m +
 * chunk_overhead·c + P·S/bandwidth with every parameter >= 0: the least-squares solution
 * over each subset of the three terms (the others fixed at 0) is computed, and the one of
 * smallest weighted error among those with no negative parameter kept (for three terms
 * this is the non-negative least-squares optimum); ties keep fewer terms, and the
 * per-message term before the per-chunk one. c counts chunks of calibration->chunk_bytes
 * (0: RS_EXEC_DEFAULT_CHUNK_BYTES). The fit of the chosen concurrency (or the nearest
 * measured K) is copied into overhead_s, chunk_overhead_s, bw_bytes_per_s and the errors.
 */
void rs_calibration_fit(RsCalibration *calibration);

/**
 * rs_calibration_fit_terms:
 * @with_chunk_term: FALSE: the two-term model t = overhead·m + P·S/bandwidth (the
 *   per-chunk term held at 0), the model before the chunk term, to compare with it
 *
 * rs_calibration_fit() with the chunk term or without it; rs_calibration_fit() is
 * rs_calibration_fit_terms(@calibration, TRUE).
 */
void rs_calibration_fit_terms(RsCalibration *calibration, gboolean with_chunk_term);

/** rs_calibrate_point_get_messages: Returns: m, the messages per rank of @point. */
guint rs_calibrate_point_get_messages(const RsCalibratePoint *point);

/** rs_calibrate_point_get_chunks: Returns: c, the chunk operations per rank of @point in
 * chunks of @chunk_bytes (0: RS_EXEC_DEFAULT_CHUNK_BYTES): m · ⌈S / chunk⌉. */
guint64 rs_calibrate_point_get_chunks(const RsCalibratePoint *point, guint64 chunk_bytes);

/**
 * rs_calibration_to_topology:
 * @name: the topology's name
 * @command: (nullable): the command line that measured it, recorded in a comment
 *
 * Returns: (transfer full): topology YAML for this machine: one node of n_ranks "GPUs" in
 * one NVLink domain, NVLink and NIC at the bandwidth fitted at the chosen concurrency
 * (efficiency 1, latency 0: the fit already is the achievable figure),
 * software.message_overhead the fitted overhead (and, when the fit has one,
 * software.chunk_overhead with the chunk_size it counts), copy.runs the copy sweep (the rates
 * rs_cost_estimate_full charges copies at); comments give every concurrency's fit, the fit
 * error and the references.
 */
char *rs_calibration_to_topology(const RsCalibration *calibration, const char *name,
                                 const char *command);

/**
 * rs_calibration_load_topology:
 * @name, @command: as rs_calibration_to_topology()
 * @error: an error of rs_topology_load_string() (none is expected: the YAML is ours)
 *
 * rs_calibration_to_topology() read back as a topology: what a benchmark predicts with
 * in the same run that measured it. Returns: (transfer full) (nullable): the topology.
 */
RsTopology *rs_calibration_load_topology(const RsCalibration *calibration, const char *name,
                                         const char *command, GError **error);

/**
 * rs_measure_memcpy_bytes_per_s:
 * @size_bytes: bytes per copy (buffers are allocated and touched first)
 * @n_runs: copies timed; the median is returned
 *
 * Returns: single-thread memcpy bandwidth, bytes per second.
 */
double rs_measure_memcpy_bytes_per_s(guint64 size_bytes, guint n_runs);

G_END_DECLS
