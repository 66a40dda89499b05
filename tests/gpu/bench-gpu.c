/* bench-gpu.c — the executor's CUDA kernels and the cuda-local transport, measured on one
 * GPU, every figure a ratio against a reference measured in the same run.
 *
 * 1. Pack and unpack against cudaMemcpy. A tensor of 2-byte elements whose rows of R bytes
 *    lie one in every two rows of a padded buffer (the columns one rank keeps when a row is
 *    split two ways) is packed into a contiguous buffer and unpacked back, by the kernels
 *    the executor uses (rs_cuda_launch_move), for R from 16 B to 64 KiB and for the whole
 *    buffer as one contiguous run; the reference is cudaMemcpyAsync device to device of the
 *    same number of bytes. Times are CUDA events around one launch, median of --runs. The
 *    issue's targets: >= 90% of memcpy for rows >= 4 KiB, >= 50% for 256-byte rows.
 * 2. Refits on cuda-local. The transport is calibrated on the spot (rs_calibrate_run: the
 *    shifted-reshard sweep and the copy sweep, with device buffers and the CUDA kernels),
 *    its topology written to a temporary file, then a scaled DeepSeek-V3 and a scaled
 *    Qwen3-30B-A3B are planned on it under every strategy, predicted with the first-order
 *    model (rs_cost_estimate_full), run validated (one warm-up run, then --runs) and the
 *    median measured time printed next to the prediction with the relative error (target:
 *    within 15%). The ranks are logical ranks on the GPUs present (rank r on GPU r mod n).
 *
 * Writes the same figures as JSON to --json FILE. Exit 3 when a refit fails validation,
 * 1 on a CUDA or executor error; speed is reported, never asserted. */
#include "base/stats.h"
#include "base/units.h"
#include "exec/calibrate.h"
#include "exec/cuda-kernels.h"
#include "exec/cuda-private.h"
#include "layout/scenario.h"
#include "sim/cost.h"

#include "rs-config.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static gint opt_runs = 10;
static char *opt_json;
static gboolean opt_quick;
static char *opt_pack_bytes_text;

static GOptionEntry entries[] = {
    {"runs", 'r', 0, G_OPTION_ARG_INT, &opt_runs, "Timed repetitions per point (median; "
     "default 10)", "N"},
    {"json", 0, 0, G_OPTION_ARG_FILENAME, &opt_json, "Also write the results as JSON here",
     "FILE"},
    {"quick", 0, 0, G_OPTION_ARG_NONE, &opt_quick, "Fewer row lengths, one model, smaller "
     "calibration", NULL},
    {"pack-bytes", 0, 0, G_OPTION_ARG_STRING, &opt_pack_bytes_text, "Packed bytes per point "
     "(default 256MiB)", "SIZE"},
    {NULL},
};

static void
die(const char *what, const GError *error)
{
    g_printerr("bench-gpu: %s: %s\n", what, error->message);
    exit(1);
}

static void
cuda_or_die(cudaError_t rc, const char *call)
{
    if (rc != cudaSuccess) {
        g_printerr("bench-gpu: %s: %s\n", call, cudaGetErrorString(rc));
        exit(1);
    }
}

typedef enum { OP_MEMCPY, OP_PACK, OP_UNPACK } Op;

/* Median time of @n_runs launches of @op, CUDA events around each. */
static double
time_op(Op op, const RsRegion *region, guint8 *wire, const guint8 *ref_src, guint8 *ref_dst,
        cudaStream_t s, guint n_runs)
{
    cudaEvent_t start, end;
    cuda_or_die(cudaEventCreate(&start), "cudaEventCreate");
    cuda_or_die(cudaEventCreate(&end), "cudaEventCreate");
    g_autofree double *t = g_new(double, n_runs);
    for (guint i = 0; i <= n_runs; i++) { /* run 0 warms up */
        cuda_or_die(cudaEventRecord(start, s), "cudaEventRecord");
        if (op == OP_MEMCPY)
            cuda_or_die(cudaMemcpyAsync(ref_dst, ref_src, region->n_bytes,
                                        cudaMemcpyDeviceToDevice, s),
                        "cudaMemcpyAsync");
        else
            cuda_or_die((cudaError_t)rs_cuda_launch_move(region, 0, region->n_bytes, wire,
                                                         op == OP_PACK, s),
                        "move kernel");
        cuda_or_die(cudaEventRecord(end, s), "cudaEventRecord");
        cuda_or_die(cudaEventSynchronize(end), "cudaEventSynchronize");
        float ms;
        cuda_or_die(cudaEventElapsedTime(&ms, start, end), "cudaEventElapsedTime");
        if (i > 0)
            t[i - 1] = ms * 1e-3;
    }
    cudaEventDestroy(start);
    cudaEventDestroy(end);
    return rs_stats_median(t, n_runs);
}

typedef struct {
    guint64 row_bytes; /* 0: the whole buffer, one run */
    double memcpy_bw, pack_bw, unpack_bw;
} PackPoint;

/* Part 1: pack and unpack by row length against cudaMemcpy. */
static GArray *
bench_pack(guint64 pack_bytes)
{
    static const guint64 rows_full[] = {16, 64, 256, 1024, 4096, 16384, 65536, 0};
    static const guint64 rows_quick[] = {64, 256, 4096, 0};
    const guint64 *rows = opt_quick ? rows_quick : rows_full;
    guint n_rows = opt_quick ? G_N_ELEMENTS(rows_quick) : G_N_ELEMENTS(rows_full);
    GArray *points = g_array_new(FALSE, FALSE, sizeof(PackPoint));
    cudaStream_t s;
    cuda_or_die(cudaSetDevice(0), "cudaSetDevice");
    cuda_or_die(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    guint8 *padded, *wire, *ref;
    cuda_or_die(cudaMalloc((void **)&padded, 2 * pack_bytes), "cudaMalloc");
    cuda_or_die(cudaMalloc((void **)&wire, pack_bytes), "cudaMalloc");
    cuda_or_die(cudaMalloc((void **)&ref, pack_bytes), "cudaMalloc");
    cuda_or_die(cudaMemset(padded, 1, 2 * pack_bytes), "cudaMemset");
    printf("pack and unpack on GPU 0, %.0f MiB per point, 2-byte elements, rows one in every "
           "two of a padded buffer; median of %d\n",
           pack_bytes / 1048576.0, opt_runs);
    printf("%10s  %12s  %12s  %12s  %8s  %8s\n", "row bytes", "memcpy GB/s", "pack GB/s",
           "unpack GB/s", "pack", "unpack");
    for (guint i = 0; i < n_rows; i++) {
        RsRegion r = {0};
        r.base = padded;
        r.elem_bytes = 2;
        r.n_bytes = pack_bytes;
        if (rows[i] == 0) {
            r.n_dims = 1;
            r.counts[0] = (gint64)(pack_bytes / 2);
            r.strides_bytes[0] = 2;
        } else {
            r.n_dims = 2;
            r.counts[0] = (gint64)(pack_bytes / rows[i]);
            r.counts[1] = (gint64)(rows[i] / 2);
            r.strides_bytes[0] = (gint64)(2 * rows[i]);
            r.strides_bytes[1] = 2;
        }
        PackPoint p = {rows[i], 0, 0, 0};
        double tm = time_op(OP_MEMCPY, &r, wire, padded, ref, s, (guint)opt_runs);
        double tp = time_op(OP_PACK, &r, wire, NULL, NULL, s, (guint)opt_runs);
        double tu = time_op(OP_UNPACK, &r, wire, NULL, NULL, s, (guint)opt_runs);
        p.memcpy_bw = pack_bytes / tm;
        p.pack_bw = pack_bytes / tp;
        p.unpack_bw = pack_bytes / tu;
        g_autofree char *label =
            rows[i] ? g_strdup_printf("%" G_GUINT64_FORMAT, rows[i]) : g_strdup("contiguous");
        printf("%10s  %12.1f  %12.1f  %12.1f  %7.0f%%  %7.0f%%\n", label, p.memcpy_bw / 1e9,
               p.pack_bw / 1e9, p.unpack_bw / 1e9, 100 * p.pack_bw / p.memcpy_bw,
               100 * p.unpack_bw / p.memcpy_bw);
        g_array_append_val(points, p);
    }
    printf("targets: >= 90%% of memcpy for rows >= 4 KiB, >= 50%% for 256-byte rows\n\n");
    cudaFree(padded);
    cudaFree(wire);
    cudaFree(ref);
    cudaStreamDestroy(s);
    return points;
}

typedef struct {
    const char *label;
    const char *model;
    guint scale;
    gint first_layer, last_layer;
} BenchModel;

/* The scaled models of bench/bench-exec.c: layers on both sides of the pipeline-stage
 * boundary (pp=2), so both stages send; scales chosen so the tensor-parallel rows stay
 * 128 and 192 bytes, as small as a CPU-calibrated copy model still describes. */
static const BenchModel models[] = {
    {"DeepSeek-V3 1/8 layers 29-30", "deepseek-v3", 8, 29, 30},
    {"Qwen3-30B-A3B 1/2 layers 23-24", "qwen3-30b-a3b", 2, 23, 24},
};

#define N_RANKS 4

typedef struct {
    const char *model;
    const char *strategy;
    guint64 bytes_moved, local_bytes;
    double measured_s, predicted_s;
    double predicted_2term_s; /* with the two-term fit (no chunk overhead) */
    gboolean validated;
} RefitRow;

static void
build_case(const BenchModel *bm, const char *topo_path, RsScenarioBuild *build)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsScenario) s = rs_scenario_new();
    s->name = g_strdup(bm->label);
    s->model = g_strdup(bm->model);
    s->topology = g_strdup(topo_path);
    s->scale = bm->scale;
    s->has_layer_range = TRUE;
    s->first_layer = bm->first_layer;
    s->last_layer = bm->last_layer;
    s->train = rs_convention_parse("megatron:tp=1,pp=2,ep=2", &error);
    s->infer = rs_convention_parse("vllm:tp=4", &error);
    if (s->train == NULL || s->infer == NULL || !rs_ranks_parse("0-3", &s->train_gpus, &error) ||
        !rs_ranks_parse("0-3", &s->infer_gpus, &error))
        die("layout", error);
    if (!rs_scenario_build(s, build, &error))
        die(bm->label, error);
}

/* Part 2: calibration, then the refits predicted and measured. */
static GArray *
bench_refits(RsCalibration *cal_out, int *exit_code)
{
    g_autoptr(GError) error = NULL;
    RsTransportConfig tconfig = {.timeout_s = 120};
    g_autoptr(RsTransport) t = rs_transport_open("cuda-local", &tconfig, &error);
    if (t == NULL)
        die("cuda-local", error);
    RsCalibrateOptions copts = {.n_ranks = N_RANKS, .concurrency = N_RANKS,
                                .n_runs = opt_quick ? 3 : 5, .exec = {.timeout_s = 120}};
    fprintf(stderr, "calibrating cuda-local with %d ranks ...\n", N_RANKS);
    if (!rs_calibrate_run(t, &copts, cal_out, &error))
        die("calibration", error);
    /* The same points without the chunk term first (the model before it), then the fit
     * kept: both predict every refit below. */
    rs_calibration_fit_terms(cal_out, FALSE);
    printf("two-term fit of cuda-local (no chunk term): overhead %.2f us per message, %.1f GB/s "
           "per rank, fit error RMS %.1f%% max %.1f%%\n",
           cal_out->overhead_s * 1e6, cal_out->bw_bytes_per_s / 1e9, 100 * cal_out->rms_error,
           100 * cal_out->max_error);
    g_autoptr(RsTopology) topo_2term =
        rs_calibration_load_topology(cal_out, "bench-cuda-local-2term", "bench-gpu", &error);
    if (topo_2term == NULL)
        die("topology", error);
    rs_calibration_fit(cal_out);
    printf("calibration of cuda-local, %d ranks: overhead %.2f us per message, %.2f us per "
           "chunk of %" G_GUINT64_FORMAT " B, %.1f GB/s per rank, fit error RMS %.1f%% max "
           "%.1f%%; device memcpy %.1f GB/s; one %.0f MiB message %.1f GB/s\n",
           N_RANKS, cal_out->overhead_s * 1e6, cal_out->chunk_overhead_s * 1e6,
           cal_out->chunk_bytes, cal_out->bw_bytes_per_s / 1e9, 100 * cal_out->rms_error,
           100 * cal_out->max_error, cal_out->memcpy_bytes_per_s / 1e9,
           cal_out->reference_bytes / 1048576.0, cal_out->large_bytes_per_s / 1e9);
    g_autofree char *dir = g_dir_make_tmp("bench-gpu-XXXXXX", &error);
    if (dir == NULL)
        die("temporary directory", error);
    g_autofree char *topo_path = g_build_filename(dir, "cuda-local.yaml", NULL);
    g_autofree char *yaml = rs_calibration_to_topology(cal_out, "bench-cuda-local", "bench-gpu");
    if (!g_file_set_contents(topo_path, yaml, -1, &error))
        die("topology", error);
    GArray *rows = g_array_new(FALSE, FALSE, sizeof(RefitRow));
    printf("\n%-32s  %-18s  %8s  %8s  %11s  %11s  %8s  %11s  %8s\n",
           "model (4 ranks on cuda-local)", "strategy", "GB moved", "GB local", "measured s",
           "predicted s", "error", "2-term s", "error");
    guint n_models = opt_quick ? 1u : G_N_ELEMENTS(models);
    for (guint mi = 0; mi < n_models; mi++) {
        RsScenarioBuild build;
        build_case(&models[mi], topo_path, &build);
        for (guint st = 0; st < RS_STRATEGY_N; st++) {
            RsPlanOptions po;
            rs_plan_options_init(&po, build.topology);
            g_autoptr(RsPlan) plan = rs_plan_build_full(build.refit, (RsStrategy)st, &po, &error);
            if (plan == NULL)
                die("plan", error);
            RsCostEstimate cost;
            if (!rs_cost_estimate_chunked(plan, build.refit, build.topology,
                                          RS_EXEC_DEFAULT_CHUNK_BYTES, &cost, &error))
                die("prediction", error);
            RsCostEstimate cost2;
            if (!rs_cost_estimate_chunked(plan, build.refit, topo_2term,
                                          RS_EXEC_DEFAULT_CHUNK_BYTES, &cost2, &error))
                die("prediction", error);
            fprintf(stderr, "running %s, %s ...\n", models[mi].label,
                    rs_strategy_get_name((RsStrategy)st));
            RsExecOptions eo = {.n_runs = (guint)opt_runs + 1, .timeout_s = 120};
            RsExecResult res;
            if (!rs_exec_run(t, plan, build.refit, &eo, &res, &error))
                die("run", error);
            RefitRow row = {models[mi].label, rs_strategy_get_name((RsStrategy)st),
                            res.bytes_moved, res.local_bytes, 0, cost.predicted_s,
                            cost2.predicted_s, res.n_bad_elems == 0};
            if (res.n_bad_elems > 0) {
                g_autofree char *what = rs_exec_mismatch_format(&res.first_bad, build.refit);
                g_printerr("bench-gpu: validation failed: %s\n", what);
                *exit_code = 3;
            }
            row.measured_s =
                res.run_s->len > 1
                    ? rs_stats_median(&g_array_index(res.run_s, double, 1), res.run_s->len - 1)
                    : g_array_index(res.run_s, double, 0);
            printf("%-32s  %-18s  %8.3f  %8.3f  %11.5f  %11.5f  %+7.1f%%  %11.5f  %+7.1f%%%s\n",
                   row.model, row.strategy, row.bytes_moved / 1e9, row.local_bytes / 1e9,
                   row.measured_s, row.predicted_s,
                   100 * (row.predicted_s - row.measured_s) / row.measured_s,
                   row.predicted_2term_s,
                   100 * (row.predicted_2term_s - row.measured_s) / row.measured_s,
                   row.validated ? "" : "  VALIDATION FAILED");
            g_array_append_val(rows, row);
            rs_exec_result_clear(&res);
        }
        rs_scenario_build_clear(&build);
    }
    guint within = 0, within2 = 0;
    g_autofree double *abs_err = g_new(double, MAX(rows->len, 1));
    g_autofree double *abs_err2 = g_new(double, MAX(rows->len, 1));
    for (guint i = 0; i < rows->len; i++) {
        const RefitRow *r = &g_array_index(rows, RefitRow, i);
        abs_err[i] = fabs(r->predicted_s - r->measured_s) / r->measured_s;
        abs_err2[i] = fabs(r->predicted_2term_s - r->measured_s) / r->measured_s;
        within += abs_err[i] <= 0.15;
        within2 += abs_err2[i] <= 0.15;
    }
    printf("prediction error: median |error| %.1f%%, %u of %u cases within 15%% (target: all); "
           "two-term fit: median %.1f%%, %u within 15%%\n",
           100 * rs_stats_median(abs_err, rows->len), within, rows->len,
           100 * rs_stats_median(abs_err2, rows->len), within2);
    g_unlink(topo_path);
    g_rmdir(dir);
    return rows;
}

static void
write_json(const char *path, const GArray *pack, const RsCalibration *cal, const GArray *rows,
           int exit_code)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "tool");
    json_builder_add_string_value(b, "reshard bench-gpu " RS_VERSION);
    json_builder_set_member_name(b, "schema_version");
    json_builder_add_int_value(b, 1);
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
        json_builder_set_member_name(b, "device");
        json_builder_add_string_value(b, prop.name);
    }
    json_builder_set_member_name(b, "pack");
    json_builder_begin_array(b);
    for (guint i = 0; i < pack->len; i++) {
        const PackPoint *p = &g_array_index(pack, PackPoint, i);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "row_bytes");
        json_builder_add_int_value(b, (gint64)p->row_bytes);
        json_builder_set_member_name(b, "memcpy_bytes_per_s");
        json_builder_add_double_value(b, p->memcpy_bw);
        json_builder_set_member_name(b, "pack_bytes_per_s");
        json_builder_add_double_value(b, p->pack_bw);
        json_builder_set_member_name(b, "unpack_bytes_per_s");
        json_builder_add_double_value(b, p->unpack_bw);
        json_builder_set_member_name(b, "pack_frac");
        json_builder_add_double_value(b, p->pack_bw / p->memcpy_bw);
        json_builder_set_member_name(b, "unpack_frac");
        json_builder_add_double_value(b, p->unpack_bw / p->memcpy_bw);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "calibration");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "overhead_s");
    json_builder_add_double_value(b, cal->overhead_s);
    json_builder_set_member_name(b, "chunk_overhead_s");
    json_builder_add_double_value(b, cal->chunk_overhead_s);
    json_builder_set_member_name(b, "bw_bytes_per_s");
    json_builder_add_double_value(b, cal->bw_bytes_per_s);
    json_builder_set_member_name(b, "rms_error");
    json_builder_add_double_value(b, cal->rms_error);
    json_builder_set_member_name(b, "memcpy_bytes_per_s");
    json_builder_add_double_value(b, cal->memcpy_bytes_per_s);
    json_builder_set_member_name(b, "large_bytes_per_s");
    json_builder_add_double_value(b, cal->large_bytes_per_s);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "refits");
    json_builder_begin_array(b);
    for (guint i = 0; i < rows->len; i++) {
        const RefitRow *r = &g_array_index(rows, RefitRow, i);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "model");
        json_builder_add_string_value(b, r->model);
        json_builder_set_member_name(b, "strategy");
        json_builder_add_string_value(b, r->strategy);
        json_builder_set_member_name(b, "bytes_moved");
        json_builder_add_int_value(b, (gint64)r->bytes_moved);
        json_builder_set_member_name(b, "local_bytes");
        json_builder_add_int_value(b, (gint64)r->local_bytes);
        json_builder_set_member_name(b, "measured_s");
        json_builder_add_double_value(b, r->measured_s);
        json_builder_set_member_name(b, "predicted_s");
        json_builder_add_double_value(b, r->predicted_s);
        json_builder_set_member_name(b, "error_frac");
        json_builder_add_double_value(b, (r->predicted_s - r->measured_s) / r->measured_s);
        json_builder_set_member_name(b, "predicted_2term_s");
        json_builder_add_double_value(b, r->predicted_2term_s);
        json_builder_set_member_name(b, "validated");
        json_builder_add_boolean_value(b, r->validated);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "exit_code");
    json_builder_add_int_value(b, exit_code);
    json_builder_end_object(b);
    g_autoptr(JsonGenerator) gen = json_generator_new();
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    json_generator_set_root(gen, root);
    json_generator_set_pretty(gen, TRUE);
    g_autoptr(GError) error = NULL;
    if (!json_generator_to_file(gen, path, &error))
        die(path, error);
}

int
main(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C");
    g_autoptr(GError) error = NULL;
    g_autoptr(GOptionContext) context = g_option_context_new("- GPU kernels and cuda-local");
    g_option_context_add_main_entries(context, entries, NULL);
    if (!g_option_context_parse(context, &argc, &argv, &error) || opt_runs < 1) {
        g_printerr("bench-gpu: %s\n", error ? error->message : "--runs must be >= 1");
        return 2;
    }
    guint64 pack_bytes = 256 << 20;
    if (opt_pack_bytes_text != NULL &&
        (!rs_units_parse_size(opt_pack_bytes_text, &pack_bytes, &error) || pack_bytes < 65536)) {
        g_printerr("bench-gpu: --pack-bytes: %s\n", error ? error->message : "at least 64 KiB");
        return 2;
    }
    pack_bytes -= pack_bytes % 65536; /* whole rows of every length */
    if (g_getenv("RESHARD_DATA_DIR") == NULL)
        g_setenv("RESHARD_DATA_DIR", RS_SOURCE_DATA_DIR, TRUE);
    int n_devices = rs_cuda_get_device_count(&error);
    if (n_devices == 0)
        die("device", error);
    struct cudaDeviceProp prop;
    cuda_or_die(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    printf("%d CUDA device%s; GPU 0: %s, %.0f GiB\n\n", n_devices, n_devices == 1 ? "" : "s",
           prop.name, prop.totalGlobalMem / 1073741824.0);
    g_autoptr(GArray) pack = bench_pack(pack_bytes);
    int exit_code = 0;
    RsCalibration cal;
    g_autoptr(GArray) rows = bench_refits(&cal, &exit_code);
    if (opt_json != NULL)
        write_json(opt_json, pack, &cal, rows, exit_code);
    rs_calibration_clear(&cal);
    return exit_code;
}
