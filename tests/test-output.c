/* test-output.c — output files (base/output.h): a regular file is replaced through a
 * temporary file, while a FIFO or a device is written into and keeps its kind, and a
 * symbolic link is followed (a plain rename once turned /dev/full into a CSV file). */
#include "base/output.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *
make_dir(void)
{
    g_autoptr(GError) error = NULL;
    char *dir = g_dir_make_tmp("test-output-XXXXXX", &error);
    g_assert_no_error(error);
    return dir;
}

static void
test_regular(void)
{
    g_autofree char *dir = make_dir();
    g_autofree char *path = g_build_filename(dir, "out.csv", NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(rs_output_write_file(path, "old\n", -1, &error));
    g_assert_true(rs_output_write_file(path, "a,b\n1,2\n", 8, &error));
    g_assert_no_error(error);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    g_assert_cmpstr(text, ==, "a,b\n1,2\n");
    g_unlink(path);
    g_rmdir(dir);
}

/* The reader of the FIFO: its bytes, until the writer closes. */
static gpointer
read_fifo(gpointer path)
{
    g_autofree char *text = NULL;
    g_file_get_contents(path, &text, NULL, NULL);
    return g_steal_pointer(&text);
}

static void
test_fifo(void)
{
    g_autofree char *dir = make_dir();
    g_autofree char *path = g_build_filename(dir, "pipe", NULL);
    g_assert_cmpint(mkfifo(path, 0600), ==, 0);
    GThread *reader = g_thread_new("fifo-reader", read_fifo, path);
    g_autoptr(GError) error = NULL;
    g_assert_true(rs_output_write_file(path, "through the pipe\n", -1, &error));
    g_assert_no_error(error);
    g_autofree char *got = g_thread_join(reader);
    g_assert_cmpstr(got, ==, "through the pipe\n");
    struct stat st;
    g_assert_cmpint(lstat(path, &st), ==, 0);
    g_assert_true(S_ISFIFO(st.st_mode));
    g_unlink(path);
    g_rmdir(dir);
}

static void
test_symlink(void)
{
    g_autofree char *dir = make_dir();
    g_autofree char *target = g_build_filename(dir, "target.csv", NULL);
    g_autofree char *link = g_build_filename(dir, "link.csv", NULL);
    g_assert_cmpint(symlink("target.csv", link), ==, 0); /* dangling at first */
    g_autoptr(GError) error = NULL;
    g_assert_true(rs_output_write_file(link, "first\n", -1, &error));
    g_assert_true(rs_output_write_file(link, "second\n", -1, &error));
    g_assert_no_error(error);
    struct stat st;
    g_assert_cmpint(lstat(link, &st), ==, 0);
    g_assert_true(S_ISLNK(st.st_mode));
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(target, &text, NULL, NULL));
    g_assert_cmpstr(text, ==, "second\n");
    g_unlink(link);
    g_unlink(target);
    g_rmdir(dir);
}

/* /dev/full takes no byte: the write fails with "no space", and /dev/full stays the device.
 * Run only after /output/fifo has shown that special files are written into, not replaced
 * (so that a regression can never replace the machine's /dev/full). */
static void
test_dev_full(void)
{
    struct stat st;
    if (stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode)) {
        g_test_skip("no /dev/full character device");
        return;
    }
    g_autofree char *dir = make_dir();
    g_autofree char *probe = g_build_filename(dir, "probe", NULL);
    g_assert_cmpint(mkfifo(probe, 0600), ==, 0);
    int keep = open(probe, O_RDONLY | O_NONBLOCK); /* a reader, so the write does not block */
    g_assert_cmpint(keep, >=, 0);
    g_assert_true(rs_output_write_file(probe, "x", 1, NULL));
    g_assert_cmpint(lstat(probe, &st), ==, 0);
    close(keep);
    g_unlink(probe);
    g_rmdir(dir);
    if (!S_ISFIFO(st.st_mode)) {
        g_test_fail_printf("special files are replaced: not writing to /dev/full");
        return;
    }
    g_autoptr(GError) error = NULL;
    g_assert_false(rs_output_write_file("/dev/full", "no room\n", -1, &error));
    g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_NOSPC);
    g_assert_nonnull(strstr(error->message, "/dev/full: write failed"));
    g_assert_cmpint(stat("/dev/full", &st), ==, 0);
    g_assert_true(S_ISCHR(st.st_mode));
    /* Through a symbolic link: the error names the path given, then the file it names. */
    g_clear_error(&error);
    g_autofree char *dir2 = make_dir();
    g_autofree char *link = g_build_filename(dir2, "out.csv", NULL);
    g_assert_cmpint(symlink("/dev/full", link), ==, 0);
    g_assert_false(rs_output_write_file(link, "no room\n", -1, &error));
    g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_NOSPC);
    g_autofree char *want = g_strdup_printf("%s (-> /dev/full): write failed: ", link);
    g_assert_true(g_str_has_prefix(error->message, want));
    g_assert_cmpint(lstat(link, &st), ==, 0);
    g_assert_true(S_ISLNK(st.st_mode));
    g_unlink(link);
    g_rmdir(dir2);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/output/regular", test_regular);
    g_test_add_func("/output/fifo", test_fifo);
    g_test_add_func("/output/symlink", test_symlink);
    g_test_add_func("/output/dev-full", test_dev_full);
    return g_test_run();
}
