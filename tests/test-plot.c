/* test-plot.c — every plot of analysis/plot.h is produced, a valid PNG and SVG of the
 * requested size, with the data rows expected; without gnuplot, a clear error and no file.
 * Skips (g_test_skip) where gnuplot is not installed. */
#include "analysis/plot.h"
#include "base/trace.h"
#include "sim/flow-sim.h"

#include "tests/test-util.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>

static gboolean
have_gnuplot(void)
{
    g_autofree char *path = g_find_program_in_path("gnuplot");
    if (path == NULL)
        g_test_skip("gnuplot is not installed (scripts/install-deps.sh installs it)");
    return path != NULL;
}

/* Checks PREFIX.png (PNG signature, IHDR width and height), PREFIX.svg (an <svg> of that
 * size) and returns the data rows of PREFIX.dat (lines not starting with '#', not empty). */
static guint
check_outputs(const char *prefix)
{
    g_autofree char *png = g_strconcat(prefix, ".png", NULL);
    g_autofree char *svg = g_strconcat(prefix, ".svg", NULL);
    g_autofree char *dat = g_strconcat(prefix, ".dat", NULL);
    gsize len = 0;
    g_autofree char *bytes = NULL;
    g_assert_true(g_file_get_contents(png, &bytes, &len, NULL));
    g_assert_cmpuint(len, >, 24);
    const guchar sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    g_assert_cmpmem(bytes, 8, sig, 8);
    g_assert_cmpmem(bytes + 12, 4, "IHDR", 4);
    const guchar *u = (const guchar *)bytes;
    guint32 w = (guint32)u[16] << 24 | u[17] << 16 | u[18] << 8 | u[19];
    guint32 h = (guint32)u[20] << 24 | u[21] << 16 | u[22] << 8 | u[23];
    g_assert_cmpuint(w, ==, RS_PLOT_WIDTH);
    g_assert_cmpuint(h, ==, RS_PLOT_HEIGHT);
    g_autofree char *text = read_file(svg);
    g_autofree char *size =
        g_strdup_printf("width=\"%u\" height=\"%u\"", RS_PLOT_WIDTH, RS_PLOT_HEIGHT);
    assert_contains(text, "<svg");
    assert_contains(text, size);
    assert_contains(text, "</svg>");
    g_autofree char *data = read_file(dat);
    g_auto(GStrv) lines = g_strsplit(data, "\n", -1);
    guint rows = 0;
    for (guint i = 0; lines[i]; i++)
        rows += lines[i][0] != '\0' && lines[i][0] != '#';
    return rows;
}

static RsTrace *
small_trace(void)
{
    RsTrace *t = rs_trace_new();
    rs_trace_add(t, 0, 0, 2, 1000000, 0, 0, 0.001, "gpu0.nic-egress;gpu2.nic-ingress", NULL, 0);
    rs_trace_add(t, 1, 1, 3, 2000000, 0, 0.0002, 0.002, "gpu1.nic-egress;gpu3.nic-ingress", NULL,
                 0);
    rs_trace_add(t, 2, 0, 3, 500000, 1, 0.002, 0.0025, "gpu0.nic-egress;gpu3.nic-ingress", NULL, 0);
    rs_trace_add(t, 3, 2, 2, 500000, 1, 0.002, 0.0021, "", NULL, 0); /* a local copy */
    return t;
}

static void
test_strategies(void)
{
    if (!have_gnuplot())
        return;
    g_autofree char *dir = make_temp_dir();
    g_autofree char *prefix = g_build_filename(dir, "strategies", NULL);
    g_autoptr(GError) error = NULL;
    const RsPlotBar bars[] = {{"direct", 1.0, 0, 0.1, 0.05, 1.1},
                              {"hierarchical", 0.8, 0.1, 0, 0.05, 0.97},
                              {"auto: hierarchical+relays", 0.8, 0.1, 0, 0.05, 0.96}};
    g_assert_true(rs_plot_strategies(bars, 3, 0.887, prefix, &error));
    g_assert_no_error(error);
    g_assert_cmpuint(check_outputs(prefix), ==, 3);
}

static void
test_timeline_and_traffic(void)
{
    if (!have_gnuplot())
        return;
    g_autofree char *dir = make_temp_dir();
    g_autoptr(RsTrace) t = small_trace();
    g_autoptr(GError) error = NULL;
    g_autofree char *tl = g_build_filename(dir, "timeline", NULL);
    g_assert_true(rs_plot_timeline(t, tl, &error));
    g_assert_no_error(error);
    g_assert_cmpuint(check_outputs(tl), ==, 3); /* the local copy is left out */
    g_autofree char *tm = g_build_filename(dir, "traffic", NULL);
    g_assert_true(rs_plot_traffic(t, 2, tm, &error));
    g_assert_no_error(error);
    /* Sources 0 and 1 by destinations 2 and 3: 4 cells. */
    g_assert_cmpuint(check_outputs(tm), ==, 4);
    g_autofree char *data = g_strconcat(tm, ".dat", NULL);
    g_autofree char *text = read_file(data);
    assert_contains(text, "\n2 0 0.001\n3 0 0.0005\n\n2 1 0\n3 1 0.002\n");
}

static void
test_links(void)
{
    if (!have_gnuplot())
        return;
    g_autoptr(GError) error = NULL;
    g_autofree char *path = data_path("small-fabric.yaml");
    g_autoptr(RsTopology) topo = rs_topology_load_file(path, NULL, &error);
    g_assert_no_error(error);
    g_autoptr(RsTrace) t = small_trace();
    RsFlowSimOptions o;
    rs_flow_sim_options_init(&o);
    g_autoptr(RsFlowSimResult) flow = rs_flow_sim_run_trace(t, topo, &o, &error);
    g_assert_no_error(error);
    guint n_loaded = 0;
    for (guint l = 0; l < flow->n_links; l++)
        n_loaded += flow->link_bytes[l] > 0;
    g_autofree char *dir = make_temp_dir();
    g_autofree char *prefix = g_build_filename(dir, "links", NULL);
    g_assert_true(rs_plot_links(flow, topo, 40, prefix, &error));
    g_assert_no_error(error);
    g_assert_cmpuint(check_outputs(prefix), ==, MIN(n_loaded, 40) * flow->n_buckets);
    /* The rows are the most loaded links (bytes / capacity), not those with the most bytes:
     * GPU 0 sends 40 MB over NVLink (0.4 ms at 100 GB/s) and 10 MB over its NIC, so the NIC
     * binds although the NVLink carries more (ranked by bytes, the plot of the default
     * showed only NVLink links and hid the NIC that bound the run). */
    g_autoptr(RsTrace) mixed = rs_trace_new();
    rs_trace_add(mixed, 0, 0, 1, 40000000, 0, 0, 0, "", NULL, 0);
    rs_trace_add(mixed, 1, 0, 2, 10000000, 0, 0, 0, "", NULL, 0);
    g_autoptr(RsFlowSimResult) mf = rs_flow_sim_run_trace(mixed, topo, &o, &error);
    g_assert_no_error(error);
    g_autofree char *one = g_build_filename(dir, "one", NULL);
    g_assert_true(rs_plot_links(mf, topo, 1, one, &error));
    g_assert_no_error(error);
    g_autofree char *dat = g_strconcat(one, ".dat", NULL);
    g_autofree char *text = read_file(dat);
    assert_contains(text, " gpu0.nic-egress\n");
    g_assert_null(strstr(text, "nvlink"));
    /* The x axis ends at the run's end, not at the last bucket's. */
    g_autofree char *gp = g_strconcat(one, ".gp", NULL);
    g_autofree char *script = read_file(gp);
    g_autofree char *xrange = g_strdup_printf("set xrange [0:%.9g]\n", mf->total_s);
    assert_contains(script, xrange);
}

static void
test_compare_and_sweep(void)
{
    if (!have_gnuplot())
        return;
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = make_temp_dir();
    g_autofree char *cp = g_build_filename(dir, "compare", NULL);
    const double pred[] = {0.001, 0.002, 0, 0.004}, meas[] = {0.0012, 0.0019, 0.001, 0.005};
    g_assert_true(rs_plot_compare(pred, meas, 4, cp, &error));
    g_assert_no_error(error);
    g_assert_cmpuint(check_outputs(cp), ==, 3); /* a message without a prediction left out */
    RsSweepPoint pts[4] = {{0}};
    RsSweepResult res[4] = {{0}};
    const gint64 tps[] = {8, 8, 32, 32};
    const guint gpus[] = {128, 256, 128, 256};
    const double times[] = {3.5, 4.0, 0.93, 1.04};
    for (guint i = 0; i < 4; i++) {
        pts[i].index = i;
        pts[i].tp = tps[i];
        res[i].ok = TRUE;
        res[i].n_infer_gpus = gpus[i];
        res[i].time_s = times[i];
        res[i].memory.feasible = tps[i] == 32;
    }
    g_autofree char *sp = g_build_filename(dir, "sweep", NULL);
    g_assert_true(rs_plot_sweep(pts, res, 4, sp, &error));
    g_assert_no_error(error);
    /* Curves: tp=32 at 128 and 256; the front: 128; infeasible: the two tp=8 points. */
    g_assert_cmpuint(check_outputs(sp), ==, 5);
}

static void
test_no_gnuplot(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = make_temp_dir();
    g_autofree char *prefix = g_build_filename(dir, "s", NULL);
    g_setenv("RESHARD_GNUPLOT", "/nonexistent/gnuplot", TRUE);
    const RsPlotBar bar = {"direct", 1, 0, 0, 0, 1};
    g_assert_false(rs_plot_strategies(&bar, 1, 0.5, prefix, &error));
    g_unsetenv("RESHARD_GNUPLOT");
    g_assert_error(error, RS_PLOT_ERROR, RS_PLOT_ERROR_NO_GNUPLOT);
    assert_contains(error->message, "apt-get install gnuplot-nox");
    g_autofree char *dat = g_strconcat(prefix, ".dat", NULL);
    g_assert_false(g_file_test(dat, G_FILE_TEST_EXISTS));
    /* The command line says it too, exit 1, and the sweep's table is not printed. */
    g_autofree char *cli_prefix = g_build_filename(dir, "sw", NULL);
    const char *args[] = {"sweep",  "--scale", "16",       "--layers", "29-30",
                          "--tp",   "8",       "--gpus",   "64",       "--strategies",
                          "direct", "--plot",  cli_prefix, "-q",       NULL};
    const char *env[] = {"RESHARD_GNUPLOT=/nonexistent/gnuplot", NULL};
    RunResult r = run_reshard_env(args, env);
    g_assert_cmpint(r.exit_code, ==, 1);
    assert_contains(r.err, "plots need gnuplot");
    g_assert_cmpstr(r.out, ==, "");
    run_result_clear(&r);
}

/* reshard simulate --plot writes the four plots of a simulated refit. */
static void
test_cli_simulate(void)
{
    if (!have_gnuplot())
        return;
    g_autofree char *dir = make_temp_dir();
    g_autofree char *prefix = g_build_filename(dir, "p", NULL);
    const char *args[] = {"simulate",
                          "--model",
                          "llama-3.1-8b",
                          "--nodes",
                          "2",
                          "--train",
                          "megatron:tp=2,pp=2",
                          "--train-gpus",
                          "0-7",
                          "--infer",
                          "vllm:tp=4",
                          "--infer-gpus",
                          "8-15",
                          "--plot",
                          prefix,
                          "-q",
                          NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    const char *const names[] = {"strategies", "timeline", "links", "traffic"};
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *p = g_strdup_printf("%s-%s", prefix, names[i]);
        g_assert_cmpuint(check_outputs(p), >, 0);
    }
    g_autofree char *bars = g_strdup_printf("%s-strategies.dat", prefix);
    g_autofree char *text = read_file(bars);
    assert_contains(text, "\"auto: ");
    run_result_clear(&r);
}

/* A failure after some plots were written (here a stand-in gnuplot that writes the first
 * plot's two images and fails on the second plot) leaves none of them behind, like the command's other outputs (the
 * strategies plot's .dat and .gp stayed). */
static void
test_cli_simulate_plot_failure(void)
{
    g_autofree char *dir = make_temp_dir();
    g_autofree char *prefix = g_build_filename(dir, "p", NULL);
    g_autofree char *fake = g_build_filename(dir, "gnuplot", NULL);
    g_autofree char *script = g_strdup_printf(
        "#!/bin/sh\nif [ -e %s/ran ]; then cat >/dev/null; echo broken >&2; exit 1; fi\n"
        ": >%s/ran\nsed -n 's/^set output \"\\(.*\\)\"$/\\1/p' | while read -r f; do "
        "echo x >\"$f\"; done\n",
        dir, dir);
    g_assert_true(g_file_set_contents(fake, script, -1, NULL));
    g_assert_cmpint(g_chmod(fake, 0755), ==, 0);
    g_autofree char *env0 = g_strdup_printf("RESHARD_GNUPLOT=%s", fake);
    const char *env[] = {env0, NULL};
    const char *args[] = {"simulate",     "--model",      "llama-3.1-8b", "--nodes",
                          "2",            "--train",      "megatron:tp=2,pp=2",
                          "--train-gpus", "0-7",          "--infer",      "vllm:tp=4",
                          "--infer-gpus", "8-15",         "--strategy",   "direct",
                          "--plot",       prefix,         "-q",           NULL};
    RunResult r = run_reshard_env(args, env);
    g_assert_cmpint(r.exit_code, ==, 1);
    assert_contains(r.err, "broken");
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    g_assert_nonnull(d);
    for (const char *name; (name = g_dir_read_name(d)) != NULL;)
        g_assert_false(g_str_has_prefix(name, "p-"));
    run_result_clear(&r);
}

/* A gnuplot that ends without reading its script (/bin/true) closed the pipe: SIGPIPE
 * killed the command (exit 141, no message, the .dat and .gp left). Now exit 1 saying so,
 * and nothing left; a failing one names its exit status. */
static void
test_cli_plot_gnuplot_ends_early(void)
{
    const char *const fakes[] = {"/bin/true", "/bin/false"};
    /* /bin/true ends before or after the script fits in the pipe: either is said. */
    const char *const expected[] = {"ended before it read the script for |wrote no image for ",
                                    "(exit status 1)"};
    for (guint i = 0; i < G_N_ELEMENTS(fakes); i++) {
        g_autofree char *dir = make_temp_dir();
        g_autofree char *prefix = g_build_filename(dir, "p", NULL);
        g_autofree char *env0 = g_strdup_printf("RESHARD_GNUPLOT=%s", fakes[i]);
        const char *env[] = {env0, NULL};
        const char *args[] = {"simulate", "--scenario", "qwen3-30b-colocated", "--network",
                              "bottleneck", "--plot", prefix, "-q", NULL};
        RunResult r = run_reshard_env(args, env);
        g_assert_cmpint(r.exit_code, ==, 1);
        g_auto(GStrv) either = g_strsplit(expected[i], "|", -1);
        gboolean said = FALSE;
        for (guint k = 0; either[k] != NULL; k++)
            said |= strstr(r.err, either[k]) != NULL;
        if (!said)
            g_error("stderr \"%s\" says none of \"%s\"", r.err, expected[i]);
        g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
        g_assert_nonnull(d);
        g_assert_null(g_dir_read_name(d));
        run_result_clear(&r);
    }
}

/* reshard report: one HTML file with its plots inlined, nothing fetched; and Markdown. */
static void
test_cli_report(void)
{
    if (!have_gnuplot())
        return;
    g_autofree char *dir = make_temp_dir();
    g_autofree char *html = g_build_filename(dir, "r.html", NULL);
    g_autofree char *md = g_build_filename(dir, "r.md", NULL);
    const char *args[] = {"report",
                          "--model",
                          "llama-3.1-8b",
                          "--nodes",
                          "2",
                          "--train",
                          "megatron:tp=2,pp=2",
                          "--train-gpus",
                          "0-7",
                          "--infer",
                          "vllm:tp=4",
                          "--infer-gpus",
                          "8-15",
                          "--output",
                          html,
                          "-q",
                          NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    run_result_clear(&r);
    g_autofree char *text = read_file(html);
    g_assert_true(g_str_has_prefix(text, "<!DOCTYPE html>"));
    guint n_svg = 0;
    for (const char *p = text; (p = strstr(p, "<svg")) != NULL; p++)
        n_svg++;
    g_assert_cmpuint(n_svg, ==, 4);
    /* Titled with what was simulated (it said "deepseek-v3-h100, Llama-3.1-8B", as if the
     * default scenario had run), as the scenario line names it. */
    const char *title = "reshard report: deepseek-v3-h100 (with --model, --nodes, --train, "
                        "--train-gpus, --infer, --infer-gpus from the command line), "
                        "Llama-3.1-8B";
    g_autofree char *html_title = g_strdup_printf("<title>%s</title>", title);
    assert_contains(text, html_title);
    assert_contains(text, "<h2>Strategies</h2>\n<table>");
    assert_contains(text, "memory     infer GPU 8: ");
    assert_contains(text, "Lower bound");
    assert_contains(text, "Made by reshard ");
    g_assert_null(strstr(text, "src=\"http"));
    g_assert_null(strstr(text, "href=\"http"));
    g_assert_null(strstr(text, "<script"));
    const char *margs[] = {"report",
                           "--model",
                           "llama-3.1-8b",
                           "--nodes",
                           "2",
                           "--train",
                           "megatron:tp=2,pp=2",
                           "--train-gpus",
                           "0-7",
                           "--infer",
                           "vllm:tp=4",
                           "--infer-gpus",
                           "8-15",
                           "--format",
                           "md",
                           "--output",
                           md,
                           "-q",
                           NULL};
    r = run_reshard(margs);
    g_assert_cmpint(r.exit_code, ==, 0);
    run_result_clear(&r);
    g_autofree char *mtext = read_file(md);
    g_autofree char *md_title = g_strdup_printf("# %s\n", title);
    g_assert_true(g_str_has_prefix(mtext, md_title));
    assert_contains(mtext, "| strategy | moved GB |");
    assert_contains(mtext, "](data:image/svg+xml;base64,");
    const char *bad[] = {"report", "--format", "csv", NULL};
    r = run_reshard(bad);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "a report is html (default) or md");
    run_result_clear(&r);
}

/* The PNG at @path decoded (8-bit RGB or RGBA, not interlaced: what Chromium writes): the
 * fraction of its pixels that are coloured (max − min channel > 60), which text, tables
 * and a blank page do not have and the plots do. */
static double
png_coloured_fraction(const char *path)
{
    gsize len;
    g_autofree guchar *png = NULL;
    g_assert_true(g_file_get_contents(path, (char **)&png, &len, NULL));
    guint32 w = 0, h = 0;
    guint channels = 0;
    g_autoptr(GByteArray) idat = g_byte_array_new();
    for (gsize off = 8; off + 12 <= len;) {
        guint32 n = (guint32)png[off] << 24 | png[off + 1] << 16 | png[off + 2] << 8 | png[off + 3];
        const guchar *type = png + off + 4, *d = png + off + 8;
        if (memcmp(type, "IHDR", 4) == 0) {
            w = (guint32)d[0] << 24 | d[1] << 16 | d[2] << 8 | d[3];
            h = (guint32)d[4] << 24 | d[5] << 16 | d[6] << 8 | d[7];
            g_assert_cmpuint(d[8], ==, 8);
            channels = d[9] == 6 ? 4 : d[9] == 2 ? 3 : 0;
            g_assert_cmpuint(channels, >, 0);
            g_assert_cmpuint(d[12], ==, 0);
        } else if (memcmp(type, "IDAT", 4) == 0) {
            g_byte_array_append(idat, d, n);
        }
        off += 12 + n;
    }
    gsize stride = (gsize)w * channels;
    g_autofree guchar *raw = g_malloc((stride + 1) * h);
    g_autoptr(GConverter) z = G_CONVERTER(g_zlib_decompressor_new(G_ZLIB_COMPRESSOR_FORMAT_ZLIB));
    gsize in_done = 0, out_done = 0, read, written;
    while (out_done < (stride + 1) * h) {
        GConverterResult cr = g_converter_convert(z, idat->data + in_done, idat->len - in_done,
                                                  raw + out_done, (stride + 1) * h - out_done,
                                                  G_CONVERTER_INPUT_AT_END, &read, &written, NULL);
        g_assert_cmpint(cr, !=, G_CONVERTER_ERROR);
        in_done += read;
        out_done += written;
        if (cr == G_CONVERTER_FINISHED)
            break;
    }
    g_assert_cmpuint(out_done, ==, (stride + 1) * h);
    /* Unfilter in place (PNG spec 9.2), rows of stride bytes after their filter byte. */
    g_autofree guchar *img = g_malloc0(stride * h);
    for (guint32 y = 0; y < h; y++) {
        const guchar *f = raw + y * (stride + 1);
        guchar *row = img + y * stride, *up = y ? row - stride : NULL;
        for (gsize x = 0; x < stride; x++) {
            guint a = x >= channels ? row[x - channels] : 0, b = up ? up[x] : 0;
            guint c = x >= channels && up ? up[x - channels] : 0;
            guint p = f[1 + x];
            switch (f[0]) {
            case 0:
                row[x] = p;
                break;
            case 1:
                row[x] = p + a;
                break;
            case 2:
                row[x] = p + b;
                break;
            case 3:
                row[x] = p + (a + b) / 2;
                break;
            default: {
                gint pa = ABS((gint)b - (gint)c), pb = ABS((gint)a - (gint)c),
                     pc = ABS((gint)a + (gint)b - 2 * (gint)c);
                row[x] = p + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
            }
            }
        }
    }
    guint64 coloured = 0;
    for (gsize i = 0; i < (gsize)w * h; i++) {
        const guchar *px = img + i * channels;
        guint mx = MAX(px[0], MAX(px[1], px[2])), mn = MIN(px[0], MIN(px[1], px[2]));
        coloured += mx - mn > 60;
    }
    return (double)coloured / ((double)w * h);
}

/* Slow suite: the HTML report of the default scenario opened in headless Chromium renders
 * its plots (a screenshot with coloured pixels, not a blank page). */
static void
test_slow_chromium(void)
{
    if (!g_test_slow()) {
        g_test_skip("slow: meson test --setup slow --suite slow");
        return;
    }
    if (!have_gnuplot())
        return;
    g_autofree char *chromium = g_find_program_in_path("chromium");
    if (chromium == NULL) {
        g_test_skip("chromium is not installed (scripts/install-deps.sh installs it)");
        return;
    }
    g_autofree char *dir = make_temp_dir();
    g_autofree char *html = g_build_filename(dir, "report.html", NULL);
    const char *args[] = {"report", "--network", "bottleneck", "--output", html, "-q", NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    run_result_clear(&r);
    g_autofree char *shot = g_build_filename(dir, "shot.png", NULL);
    g_autofree char *shot_arg = g_strconcat("--screenshot=", shot, NULL);
    g_autofree char *url = g_strconcat("file://", html, NULL);
    const char *argv[] = {chromium,
                          "--headless",
                          "--no-sandbox",
                          "--disable-gpu",
                          "--hide-scrollbars",
                          "--window-size=1200,2400",
                          shot_arg,
                          url,
                          NULL};
    gint status = 0;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL,
                               G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                               NULL, NULL, &status, &error));
    g_assert_no_error(error);
    g_assert_true(g_file_test(shot, G_FILE_TEST_IS_REGULAR));
    double frac = png_coloured_fraction(shot);
    g_test_message("coloured pixels: %.2f%%", 100 * frac);
    g_assert_cmpfloat(frac, >, 0.005);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/plot/strategies", test_strategies);
    g_test_add_func("/plot/timeline-traffic", test_timeline_and_traffic);
    g_test_add_func("/plot/links", test_links);
    g_test_add_func("/plot/compare-sweep", test_compare_and_sweep);
    g_test_add_func("/plot/no-gnuplot", test_no_gnuplot);
    g_test_add_func("/plot/cli-simulate", test_cli_simulate);
    g_test_add_func("/plot/cli-simulate-failure", test_cli_simulate_plot_failure);
    g_test_add_func("/plot/cli-gnuplot-ends-early", test_cli_plot_gnuplot_ends_early);
    g_test_add_func("/plot/cli-report", test_cli_report);
    g_test_add_func("/plot/slow/chromium", test_slow_chromium);
    return g_test_run();
}
