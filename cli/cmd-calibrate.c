/* cmd-calibrate.c — `reshard calibrate`: measure a transport on this machine, fit the cost
 * model to it, and write a topology file that `reshard run` and `reshard simulate` predict
 * with. See exec/calibrate.h for the method. */
#include "cli/cli.h"
#include "base/output.h"
#include "cli/outputs.h"

#include "analysis/report.h"
#include "exec/calibrate.h"
#include "topologies/topology.h"
#include "base/mesh.h"
#include "base/units.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_RANKS 8

static char *opt_transport;
static char *opt_ranks; /* integers, taken as text (rs_cli_parse_int) */
static char *opt_sizes;
static char *opt_runs;
static char *opt_chunk_size;
static char *opt_window;
static char *opt_concurrency;
static char *opt_output;
static char *opt_name;
static char *opt_format;
static char *opt_copy_runs;
static char *opt_copy_bytes;
static double opt_timeout;
static char *opt_copy_stride;

static GOptionEntry entries[] = {
    {"transport", 0, 0, G_OPTION_ARG_STRING, &opt_transport,
     "host (threads, default), mpi (under mpirun -np N), cuda-local (ranks on this "
     "process's GPUs) or nccl (one GPU per rank)", "NAME"},
    {"ranks", 0, 0, G_OPTION_ARG_STRING, &opt_ranks,
     "Ranks to calibrate for (host default 8; mpi: the process count)", "N"},
    {"sizes", 0, 0, G_OPTION_ARG_STRING, &opt_sizes,
     "Message sizes of the sweep (default 4KiB,64KiB,4MiB,32MiB)", "LIST"},
    {"runs", 'r', 0, G_OPTION_ARG_STRING, &opt_runs, "Runs per point, median taken (default 5, at most 10000)",
     "N"},
    {"chunk-size", 0, 0, G_OPTION_ARG_STRING, &opt_chunk_size,
     "Bytes per transport call, as reshard run (default 4MiB)", "SIZE"},
    {"window", 0, 0, G_OPTION_ARG_STRING, &opt_window, "Chunks in flight per rank (default 8)", "N"},
    {"concurrency", 'k', 0, G_OPTION_ARG_STRING, &opt_concurrency,
     "Ranks receiving at once in the refits to predict; its fit goes to the topology "
     "(default: all ranks)", "K"},
    {"timeout", 0, 0, G_OPTION_ARG_DOUBLE, &opt_timeout,
     "Fail when a rank makes no progress for S seconds, naming the rank (default: wait)", "S"},
    {"output", 'o', 0, G_OPTION_ARG_FILENAME, &opt_output,
     "Write the topology YAML for this machine here", "FILE"},
    {"name", 0, 0, G_OPTION_ARG_STRING, &opt_name,
     "The topology's name (default host-calibrated)", "NAME"},
    {"format", 'f', 0, G_OPTION_ARG_STRING, &opt_format, "table or json (default table)",
     "FORMAT"},
    {"copy-runs", 0, 0, G_OPTION_ARG_STRING, &opt_copy_runs,
     "Run lengths of the copy sweep, increasing (default 1B,4B,16B,32B,64B,128B,256B,512B,1KiB,"
     "4KiB,64KiB,1MiB)",
     "LIST"},
    {"copy-bytes", 0, 0, G_OPTION_ARG_STRING, &opt_copy_bytes,
     "Bytes each receiving rank copies per copy point (default 32MiB)", "SIZE"},
    {"copy-stride", 0, 0, G_OPTION_ARG_STRING, &opt_copy_stride,
     "The strided side of the copy sweep holds one run in every N, 1 to 1024 (default 4, as "
     "one rank's columns of a row split 4 ways)",
     "N"},
    {NULL},
};

static GOptionContext *
make_context(void)
{
    GOptionContext *context =
        g_option_context_new("- measure a transport and write a topology for this machine");
    g_option_context_set_summary(
        context,
        "Runs the executor on synthetic reshards (K ranks each receive P messages of S bytes\n"
        "from P peers) over a sweep of message sizes and concurrency K, fits the first-order\n"
        "cost model (per-message overhead + bytes per rank / bandwidth) per K, reports the fit\n"
        "error and the single-thread memcpy and large-message bandwidth measured in the same\n"
        "run, and writes a topology file that reshard run --topology predicts with. Choose K\n"
        "as the number of ranks that receive at once in the refits to predict: all ranks when\n"
        "training and inference share them, the inference ranks otherwise.\n"
        "\n"
        "A second sweep measures copies by the length of their runs of adjacent bytes: a\n"
        "tensor whose rows of R bytes lie one in every N of a padded buffer (as one rank's\n"
        "columns of rows split N ways) copied from or into a contiguous buffer, by one rank\n"
        "alone and by K ranks at once (each from its own sender when there are 2K ranks),\n"
        "and the same as local copies (each rank its own rows, source to destination).\n"
        "The topology's copy section holds these rates; reshard run's prediction and the\n"
        "first-order estimate of reshard simulate charge every transfer's pieces at the rate\n"
        "of their runs (sim/cost.h), since strided rows copy several times slower than\n"
        "contiguous ones on CPUs; the flow-level simulation does not model copies.");
    g_option_context_set_description(
        context, "Examples:\n"
                 "  reshard calibrate --ranks 8 --output host.yaml\n"
                 "  mpirun -np 4 reshard calibrate --transport mpi --output mpi4.yaml\n"
                 "  reshard calibrate --transport cuda-local --ranks 4 --output gpu.yaml\n");
    g_option_context_add_main_entries(context, entries, NULL);
    rs_cli_add_common_options(context);
    return context;
}

static gboolean
parse_sizes(const char *text, GArray *sizes, GError **error)
{
    g_auto(GStrv) items = g_strsplit(text, ",", -1);
    for (guint i = 0; items[i] != NULL; i++) {
        guint64 v;
        if (!rs_units_parse_size(g_strstrip(items[i]), &v, error)) {
            g_prefix_error(error, "--sizes: ");
            return FALSE;
        }
        if (v == 0 || v > (G_GUINT64_CONSTANT(1) << 32)) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--sizes: %s is outside 1 B .. 4 GiB", items[i]);
            return FALSE;
        }
        g_array_append_val(sizes, v);
    }
    /* An empty list is an error, not "the default sizes". */
    if (sizes->len == 0) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--sizes: no sizes given (expected a comma list such as 4KiB,1MiB)");
        return FALSE;
    }
    return TRUE;
}

static gboolean
parse_copy_runs(const char *text, GArray *runs, GError **error)
{
    if (!parse_sizes(text, runs, error)) {
        /* parse_sizes names --sizes; this list is --copy-runs. */
        if (g_str_has_prefix((*error)->message, "--sizes: ")) {
            g_autofree char *rest = g_strdup((*error)->message + strlen("--sizes: "));
            g_free((*error)->message);
            (*error)->message = g_strdup_printf("--copy-runs: %s", rest);
        }
        return FALSE;
    }
    for (guint i = 1; i < runs->len; i++) {
        if (g_array_index(runs, guint64, i) <= g_array_index(runs, guint64, i - 1)) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--copy-runs: run lengths must increase (%" G_GUINT64_FORMAT
                        " B after %" G_GUINT64_FORMAT " B)",
                        g_array_index(runs, guint64, i), g_array_index(runs, guint64, i - 1));
            return FALSE;
        }
    }
    return TRUE;
}

static void
print_copy_table(const RsCalibration *cal, GString *out)
{
    if (cal->copy_rates == NULL || cal->copy_rates->len == 0)
        return;
    g_string_append_printf(out, "\ncopies, GB/s into shards: runs of R bytes, one in every %u, "
                                "read (source strided) or written (destination strided), received "
                                "or local_ (a rank's own bytes); one rank alone, and K=%u ranks "
                                "at once (node, their sum)\n",
                           cal->copy_stride_runs, cal->concurrency);
    rs_report_copy_rates((const RsCopyRate *)cal->copy_rates->data, cal->copy_rates->len, out);
}

static void
print_table(const RsCalibration *cal, const char *transport, GString *out)
{
    g_string_append_printf(out, "transport %s, %u ranks; each point: K ranks each receive P "
                                "messages of S bytes from P peers (senders: K other ranks, or "
                                "the K receivers themselves)\n\n",
                           transport, cal->n_ranks);
    g_string_append_printf(out, "%4s  %7s  %5s  %12s  %12s  %12s  %7s\n", "K", "senders",
                           "peers", "size bytes", "measured s", "fitted s", "error");
    for (guint i = 0; i < cal->points->len; i++) {
        const RsCalibratePoint *p = &g_array_index(cal->points, RsCalibratePoint, i);
        g_string_append_printf(out, "%4u  %7s  %5u  %12" G_GUINT64_FORMAT
                                    "  %12.6f  %12.6f  %+6.1f%%\n",
                               p->receivers, p->own_senders ? "other" : "same", p->peers,
                               p->size_bytes, p->measured_s, p->fitted_s,
                               100 * (p->fitted_s - p->measured_s) / p->measured_s);
    }
    g_string_append_printf(out, "\n%4s  %14s  %17s  %15s  %9s  %9s\n", "K", "overhead us",
                           "chunk overhead us", "bandwidth GB/s", "RMS error", "max error");
    for (guint f = 0; f < cal->fits->len; f++) {
        const RsCalibrateFit *fit = &g_array_index(cal->fits, RsCalibrateFit, f);
        g_string_append_printf(out, "%4u  %14.3f  %17.3f  %15.3f  %8.1f%%  %8.1f%%%s\n",
                               fit->receivers, fit->overhead_s * 1e6,
                               fit->chunk_overhead_s * 1e6, fit->bw_bytes_per_s / 1e9,
                               100 * fit->rms_error, 100 * fit->max_error,
                               fit->receivers == cal->concurrency ? "  <- topology" : "");
    }
    print_copy_table(cal, out);
    g_string_append_printf(out, "\nfit        K=%u: overhead %.3f us per message sent or received, "
                                "%.3f us per chunk of %" G_GUINT64_FORMAT " B, bandwidth %.3f "
                                "GB/s per rank and direction\n",
                           cal->concurrency, cal->overhead_s * 1e6, cal->chunk_overhead_s * 1e6,
                           cal->chunk_bytes, cal->bw_bytes_per_s / 1e9);
    g_string_append_printf(out, "reference  %s %.3f GB/s; one %.0f MiB "
                                "message rank 0 -> 1 %.3f GB/s = %.0f%% of memcpy\n",
                           cal->device_memcpy ? "device-to-device cudaMemcpy"
                                              : "single-thread memcpy",
                           cal->memcpy_bytes_per_s / 1e9, cal->reference_bytes / 1048576.0,
                           cal->large_bytes_per_s / 1e9,
                           cal->memcpy_bytes_per_s > 0
                               ? 100 * cal->large_bytes_per_s / cal->memcpy_bytes_per_s
                               : 0.0);
}

static void
print_json(const RsCalibration *cal, const char *transport, GString *out)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "transport");
    json_builder_add_string_value(b, transport);
    json_builder_set_member_name(b, "ranks");
    json_builder_add_int_value(b, cal->n_ranks);
    json_builder_set_member_name(b, "concurrency");
    json_builder_add_int_value(b, cal->concurrency);
    json_builder_set_member_name(b, "overhead_s");
    json_builder_add_double_value(b, cal->overhead_s);
    json_builder_set_member_name(b, "chunk_overhead_s");
    json_builder_add_double_value(b, cal->chunk_overhead_s);
    json_builder_set_member_name(b, "chunk_bytes");
    json_builder_add_int_value(b, (gint64)cal->chunk_bytes);
    json_builder_set_member_name(b, "bw_bytes_per_s");
    json_builder_add_double_value(b, cal->bw_bytes_per_s);
    json_builder_set_member_name(b, "rms_error");
    json_builder_add_double_value(b, cal->rms_error);
    json_builder_set_member_name(b, "max_error");
    json_builder_add_double_value(b, cal->max_error);
    json_builder_set_member_name(b, "memcpy_bytes_per_s");
    json_builder_add_double_value(b, cal->memcpy_bytes_per_s);
    json_builder_set_member_name(b, "memcpy_on_device");
    json_builder_add_boolean_value(b, cal->device_memcpy);
    json_builder_set_member_name(b, "large_message_bytes_per_s");
    json_builder_add_double_value(b, cal->large_bytes_per_s);
    json_builder_set_member_name(b, "points");
    json_builder_begin_array(b);
    for (guint i = 0; i < cal->points->len; i++) {
        const RsCalibratePoint *p = &g_array_index(cal->points, RsCalibratePoint, i);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "receivers");
        json_builder_add_int_value(b, p->receivers);
        json_builder_set_member_name(b, "other_senders");
        json_builder_add_boolean_value(b, p->own_senders);
        json_builder_set_member_name(b, "peers");
        json_builder_add_int_value(b, p->peers);
        json_builder_set_member_name(b, "size_bytes");
        json_builder_add_int_value(b, (gint64)p->size_bytes);
        json_builder_set_member_name(b, "measured_s");
        json_builder_add_double_value(b, p->measured_s);
        json_builder_set_member_name(b, "fitted_s");
        json_builder_add_double_value(b, p->fitted_s);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "fits");
    json_builder_begin_array(b);
    for (guint f = 0; f < cal->fits->len; f++) {
        const RsCalibrateFit *fit = &g_array_index(cal->fits, RsCalibrateFit, f);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "receivers");
        json_builder_add_int_value(b, fit->receivers);
        json_builder_set_member_name(b, "overhead_s");
        json_builder_add_double_value(b, fit->overhead_s);
        json_builder_set_member_name(b, "chunk_overhead_s");
        json_builder_add_double_value(b, fit->chunk_overhead_s);
        json_builder_set_member_name(b, "bw_bytes_per_s");
        json_builder_add_double_value(b, fit->bw_bytes_per_s);
        json_builder_set_member_name(b, "rms_error");
        json_builder_add_double_value(b, fit->rms_error);
        json_builder_set_member_name(b, "max_error");
        json_builder_add_double_value(b, fit->max_error);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "copy_rates");
    json_builder_begin_array(b);
    for (guint i = 0; cal->copy_rates != NULL && i < cal->copy_rates->len; i++) {
        const RsCopyRate *r = &g_array_index(cal->copy_rates, RsCopyRate, i);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "stride_runs");
        json_builder_add_int_value(b, cal->copy_stride_runs);
        rs_report_json_copy_rate(b, r);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    rs_report_json_append(b, out);
}

/* Stage: --format, table or json. */
static gboolean
parse_format(RsFormat *format, GError **error)
{
    *format = RS_FORMAT_TABLE;
    /* calibrate writes a table or json only: the error lists just those two (it listed csv,
     * which was then refused). */
    if (opt_format != NULL &&
        (!rs_format_parse(opt_format, format, NULL) || *format == RS_FORMAT_CSV)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--format: unknown format \"%s\" (known: table, json)", opt_format);
        return FALSE;
    }
    return TRUE;
}

/* Stage: --sizes, --copy-runs and --copy-bytes into @opts (the lists into @sizes and
 * @copy_runs, which @opts then borrows). */
static gboolean
parse_sweeps(RsCalibrateOptions *opts, GArray *sizes, GArray *copy_runs, GError **error)
{
    if (opt_sizes != NULL && !parse_sizes(opt_sizes, sizes, error))
        return FALSE;
    /* The bandwidth is the slope of time over size: one size (or one size twice) fits a
     * per-message cost alone, and the bandwidth came out infinite (written as 1 PB/s). */
    guint distinct = 0;
    for (guint i = 0; i < sizes->len; i++) {
        gboolean seen = FALSE;
        for (guint j = 0; j < i; j++)
            seen = seen || g_array_index(sizes, guint64, j) == g_array_index(sizes, guint64, i);
        distinct += !seen;
    }
    if (opt_sizes != NULL && distinct < 2) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--sizes %s: give at least two different message sizes (the bandwidth is "
                    "the slope of time over size)",
                    opt_sizes);
        return FALSE;
    }
    if (opt_copy_runs != NULL && !parse_copy_runs(opt_copy_runs, copy_runs, error))
        return FALSE;
    guint64 copy_bytes = 0;
    if (opt_copy_bytes != NULL &&
        (!rs_units_parse_size(opt_copy_bytes, &copy_bytes, error) || copy_bytes == 0 ||
         copy_bytes > (G_GUINT64_CONSTANT(1) << 32))) {
        if (*error == NULL)
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%s is outside 1 B .. 4 GiB", opt_copy_bytes);
        g_prefix_error(error, "--copy-bytes: ");
        return FALSE;
    }
    if (sizes->len > 0) {
        opts->sizes_bytes = (const guint64 *)sizes->data;
        opts->n_sizes = sizes->len;
    }
    if (copy_runs->len > 0) {
        opts->copy_run_bytes = (const guint64 *)copy_runs->data;
        opts->n_copy_runs = copy_runs->len;
    }
    opts->copy_bytes = copy_bytes;
    return TRUE;
}

/* Stage: the integer options and --chunk-size into @opts; --ranks into @ranks (0: not
 * given). */
static gboolean
parse_numbers(RsCalibrateOptions *opts, gint64 *ranks, GError **error)
{
    /* 0 stands for "the default" in RsCalibrateOptions; a 0 on the command line is an
     * error, not that default. */
    gint64 runs = 0, window = 0, concurrency = 0, copy_stride = 0;
    if (!rs_cli_parse_int("--ranks", opt_ranks, 2, RS_MAX_RANKS, ranks, error) ||
        !rs_cli_parse_int("--runs", opt_runs, 1, RS_CLI_MAX_RUNS, &runs, error) ||
        !rs_cli_parse_int("--window", opt_window, 1, G_MAXINT32, &window, error) ||
        !rs_cli_parse_int("--concurrency", opt_concurrency, 1, RS_MAX_RANKS, &concurrency, error) ||
        !rs_cli_parse_int("--copy-stride", opt_copy_stride, 1, 1024, &copy_stride, error))
        return FALSE;
    if (opt_timeout < 0) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--timeout: must not be negative");
        return FALSE;
    }
    opts->exec.timeout_s = opt_timeout;
    opts->n_runs = (guint)runs;
    opts->concurrency = (guint)concurrency;
    opts->exec.window = (guint)window;
    opts->copy_stride_runs = (guint)copy_stride;
    if (opt_chunk_size != NULL &&
        (!rs_units_parse_size(opt_chunk_size, &opts->exec.chunk_bytes, error) ||
         opts->exec.chunk_bytes == 0 || opts->exec.chunk_bytes > RS_EXEC_MAX_CHUNK_BYTES)) {
        if (*error == NULL)
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%s is outside 1 B .. 1 GiB", opt_chunk_size);
        g_prefix_error(error, "--chunk-size: ");
        return FALSE;
    }
    return TRUE;
}

/* Stage: the strided side's buffer is stride × the bytes copied (and at least one row of
 * stride × run): keep it within 4 GiB per rank. */
/* --name goes into the topology's YAML as a plain scalar: letters, digits and . _ + -
 * only, as the shipped topologies are named ("a: b" made a file its own check refused,
 * after the whole measurement). */
static gboolean
check_name(GError **error)
{
    if (opt_name == NULL)
        return TRUE;
    gboolean ok = *opt_name != '\0';
    for (const char *p = opt_name; ok && *p; p++)
        ok = g_ascii_isalnum(*p) || strchr("._+-", *p) != NULL;
    if (!ok)
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--name \"%s\": a topology name is letters, digits and . _ + - "
                    "(like host-calibrated)",
                    opt_name);
    return ok;
}

static gboolean
check_copy_buffer(const RsCalibrateOptions *opts, GError **error)
{
    guint64 stride = opts->copy_stride_runs > 0 ? opts->copy_stride_runs : 4;
    guint64 bytes = opts->copy_bytes > 0 ? opts->copy_bytes : 32 << 20;
    guint64 longest = opts->n_copy_runs > 0 ? opts->copy_run_bytes[opts->n_copy_runs - 1]
                                            : 1 << 20;
    if (bytes < longest) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--copy-bytes %" G_GUINT64_FORMAT " B: less than the longest run of "
                    "the copy sweep (%" G_GUINT64_FORMAT " B); each point copies whole runs",
                    bytes, longest);
        return FALSE;
    }
    if (MAX(bytes, longest) * stride > (G_GUINT64_CONSTANT(1) << 32)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--copy-stride %" G_GUINT64_FORMAT ": the strided buffer of the copy "
                    "sweep would hold %.3g GiB per rank (stride x max(--copy-bytes, the "
                    "longest --copy-runs)); at most 4 GiB",
                    stride, (double)(MAX(bytes, longest) * stride) / 1073741824.0);
        return FALSE;
    }
    return TRUE;
}

/* Stage: the rank count, from --ranks, the mpi world or the default; refused when below 2,
 * not the world size, or below --concurrency. Only the root process prints the error. */
static int
set_ranks(const char *cmd, RsTransport *transport, gint64 ranks, RsCalibrateOptions *opts)
{
    g_autoptr(GError) error = NULL;
    gboolean root = rs_transport_is_root(transport);
    guint world = rs_transport_get_world_size(transport);
    opts->n_ranks = ranks > 0 ? (guint)ranks : (world ? world : DEFAULT_RANKS);
    if (world == 1) {
        /* One mpi process: started without mpirun (a singleton) or with -n 1. */
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--transport mpi: 1 mpi process; start it with mpirun -n N, N at least 2 "
                    "(one process per rank)");
        return root ? rs_cli_fail(cmd, error, RS_EXIT_USAGE) : RS_EXIT_USAGE;
    }
    if (opts->n_ranks < 2 || (world != 0 && opts->n_ranks != world)) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--ranks %u: need at least 2%s", opts->n_ranks,
                    world ? ", and exactly the number of mpi processes" : "");
        return root ? rs_cli_fail(cmd, error, RS_EXIT_USAGE) : RS_EXIT_USAGE;
    }
    if (opts->concurrency > opts->n_ranks) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--concurrency %u: at most the %u ranks", opts->concurrency, opts->n_ranks);
        return root ? rs_cli_fail(cmd, error, RS_EXIT_USAGE) : RS_EXIT_USAGE;
    }
    return RS_EXIT_OK;
}

/* Stage: the measurement; a failure is reported (memory: a usage error with a hint) and,
 * under mpi, aborts every process. */
static int
measure(const char *cmd, RsTransport *transport, const RsCalibrateOptions *opts,
        RsCalibration *cal)
{
    g_autoptr(GError) error = NULL;
    rs_cli_progress("calibrating the %s transport with %u ranks ...",
                    rs_transport_get_name(transport), opts->n_ranks);
    if (rs_calibrate_run(transport, opts, cal, &error))
        return RS_EXIT_OK;
    int fail = RS_EXIT_RUNTIME;
    if (g_error_matches(error, RS_EXEC_ERROR, RS_EXEC_ERROR_MEMORY)) {
        rs_cli_append_hint(error, "give smaller --sizes, --copy-bytes or --copy-stride, or "
                                  "fewer --ranks");
        fail = RS_EXIT_USAGE;
    }
    rs_cli_fail(cmd, error, fail);
    if (rs_transport_get_world_size(transport) > 0)
        rs_transport_abort(transport, fail);
    return fail;
}

/* Stage (root process): the report on stdout and, with --output, the topology file, which
 * must load as a topology before it is written. */
static int
write_results(const char *cmd, const RsCalibration *cal, const char *transport_name,
              RsFormat format, const char *command)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GString) out = g_string_new(NULL);
    if (format == RS_FORMAT_JSON)
        print_json(cal, transport_name, out);
    else
        print_table(cal, transport_name, out);
    fputs(out->str, stdout);
    if (opt_output == NULL)
        return RS_EXIT_OK;
    /* A fit whose times did not grow with size (noise, or sizes too close) has no bandwidth
     * term: its topology would claim links without a limit. */
    if (!(cal->bw_bytes_per_s > 0) || !isfinite(cal->bw_bytes_per_s)) {
        g_set_error(&error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID,
                    "--output %s: not written: the fit at K=%u found no bandwidth (the "
                    "measured times did not grow with the message size); measure sizes "
                    "further apart or more --runs",
                    opt_output, cal->concurrency);
        return rs_cli_fail(cmd, error, RS_EXIT_RUNTIME);
    }
    g_autofree char *yaml =
        rs_calibration_to_topology(cal, opt_name ? opt_name : "host-calibrated", command);
    g_autoptr(RsTopology) check = rs_topology_load_string(yaml, opt_output, NULL, &error);
    if (check == NULL || !rs_output_write_file(opt_output, yaml, -1, &error)) {
        g_prefix_error(&error, "--output: "); /* (the message names the path) */
        return rs_cli_fail(cmd, error, RS_EXIT_RUNTIME);
    }
    if (format == RS_FORMAT_TABLE)
        printf("topology   written to %s\n", opt_output);
    return RS_EXIT_OK;
}

static int
run(int argc, char **argv)
{
    const char *cmd = "calibrate";
    int code = RS_EXIT_OK;
    /* The command line, for the topology file's comment. */
    g_autofree char *args = g_strjoinv(" ", argv);
    g_autofree char *command = g_strdup_printf("reshard %s", args);
    if (!rs_cli_parse(cmd, make_context, &argc, &argv, &code))
        return code;

    g_autoptr(GError) error = NULL;
    RsFormat format;
    RsCalibrateOptions opts = {0};
    gint64 ranks = 0;
    g_autoptr(GArray) sizes = g_array_new(FALSE, FALSE, sizeof(guint64));
    g_autoptr(GArray) copy_runs = g_array_new(FALSE, FALSE, sizeof(guint64));
    /* The output path is checked before measuring: a wrong folder is a usage error found
     * now. */
    if (!parse_format(&format, &error) || !parse_sweeps(&opts, sizes, copy_runs, &error) ||
        !rs_cli_check_output("--output", opt_output, &error) ||
        !parse_numbers(&opts, &ranks, &error) || !check_copy_buffer(&opts, &error) ||
        !check_name(&error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    RsTransportConfig tconfig = {.timeout_s = opts.exec.timeout_s};
    g_autoptr(RsTransport) transport =
        rs_transport_open(opt_transport ? opt_transport : "host", &tconfig, &error);
    if (transport == NULL) {
        if (g_error_matches(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_UNKNOWN))
            g_prefix_error(&error, "--transport: ");
        /* A transport that is built but cannot start (no CUDA device, MPI_Init failed) is
         * a runtime failure; an unknown or unbuilt one a usage error. */
        return rs_cli_fail(cmd, error,
                           g_error_matches(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_FAILED)
                               ? RS_EXIT_RUNTIME
                               : RS_EXIT_USAGE);
    }
    if (!rs_transport_is_root(transport))
        rs_cli_quiet = rs_cli_secondary_rank = TRUE;
    code = set_ranks(cmd, transport, ranks, &opts);
    if (code != RS_EXIT_OK)
        return code;
    RsCalibration cal;
    code = measure(cmd, transport, &opts, &cal);
    if (code == RS_EXIT_OK && rs_transport_is_root(transport))
        code = write_results(cmd, &cal, rs_transport_get_name(transport), format, command);
    rs_calibration_clear(&cal);
    return code;
}

const RsCommand rs_command_calibrate = {
    "calibrate",
    "Measure a transport on this machine and write a topology file for it",
    run,
    make_context,
};
