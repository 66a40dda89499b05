/* trace.h — the per-message trace shared by the simulator (predicted) and the executor
 * (measured), so the two can be compared row by row and any trace replayed.
 *
 * CSV, one row per message, with a header row naming the columns:
 *   message,src,dst,bytes,phase,start_s,end_s,route,depends_on
 * message: index of the message in its plan (each message one row: a second row of the same
 * index is refused); src, dst: global ranks (GPUs); bytes: payload;
 * phase: plan phase; start_s, end_s: when it started and finished, seconds from the start
 * of the refit (empty when unknown; a negative time, or an end before its start, is
 * refused); route: names of the links crossed, ';'-separated (empty for a local copy or when
 * unknown; a replay routes each message on its topology again and does not read it);
 * depends_on: message indices it waits for, ';'-separated. The metadata (source:
 * simulated|measured, strategy, scenario, …) goes to the sidecar PATH.meta when a trace is
 * written to a file (rs_trace_write_file(): the CSV then has no comment line); in text
 * (rs_trace_to_string()) it comes first as "# key: value" lines, which reading accepts.
 *
 * Reading accepts any subset of columns that includes src, dst and bytes, in any order, so
 * traffic from other tools can be replayed; absent columns take defaults (message = row
 * index, phase 0, times unknown, no route, no dependencies).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define RS_TRACE_ERROR (rs_trace_error_quark())
GQuark rs_trace_error_quark(void);

typedef enum {
    RS_TRACE_ERROR_IO,     /* the file could not be read or written */
    RS_TRACE_ERROR_PARSE,  /* a malformed row or header; the message names file:line and column */
} RsTraceError;

typedef struct {
    guint32 message;
    guint32 src, dst;
    guint64 size_bytes;
    guint32 phase;
    double start_s; /* NAN when unknown */
    double end_s;   /* NAN when unknown */
    char *route;    /* owned, "" when none */
    GArray *depends_on; /* guint32 message indices; owned, never NULL */
    guint line;         /* the file line it was read from; 0 when not read from a file */
} RsTraceRow;

typedef struct _RsTrace RsTrace;

/** rs_trace_new: Returns: (transfer full): an empty trace. */
RsTrace *rs_trace_new(void);
void rs_trace_free(RsTrace *trace);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsTrace, rs_trace_free)

/** rs_trace_set_meta: Sets metadata @key (a word) to @value (one line); copies both. */
void rs_trace_set_meta(RsTrace *trace, const char *key, const char *value);
/** rs_trace_get_meta: Returns: (transfer none) (nullable): the value of @key. */
const char *rs_trace_get_meta(const RsTrace *trace, const char *key);

/**
 * rs_trace_get_name: Returns: (transfer none) (nullable): the file (or name) it was read
 * from, for messages; NULL when built in memory.
 */
const char *rs_trace_get_name(const RsTrace *trace);

/**
 * rs_trace_format_row_where:
 * Returns: (transfer full): "file:line: message ID" for a row read from a file, else
 * "message ID", to start an error message about @row.
 */
char *rs_trace_format_row_where(const RsTrace *trace, const RsTraceRow *row);

/**
 * rs_trace_add:
 * @route: (nullable): link names, ';'-separated
 * @depends_on: (array length=n_deps) (nullable): message indices
 *
 * Appends a row; strings and arrays are copied. Returns: (transfer none): the new row,
 * valid until the next rs_trace_add.
 */
RsTraceRow *rs_trace_add(RsTrace *trace, guint32 message, guint32 src, guint32 dst,
                         guint64 size_bytes, guint32 phase, double start_s, double end_s,
                         const char *route, const guint32 *depends_on, guint n_deps);

guint rs_trace_get_n_rows(const RsTrace *trace);
/** rs_trace_get_row: Returns: (transfer none): row @index, alive as @trace. */
const RsTraceRow *rs_trace_get_row(const RsTrace *trace, guint index);

/**
 * rs_trace_write_file:
 * @path: destination; written to a temporary file and renamed, so a failure leaves no
 *   half-written file
 * @error: RS_TRACE_ERROR_IO
 *
 * Writes the CSV without comment lines (one header row, one row per message, so that
 * pandas.read_csv() loads it as it is) and, when the trace has metadata, the sidecar
 * rs_trace_get_meta_path(@path): a GKeyFile with the metadata in group [trace]. Times are
 * written with 9 significant digits. Returns: TRUE on success.
 */
gboolean rs_trace_write_file(const RsTrace *trace, const char *path, GError **error);

/** rs_trace_to_string: Returns: (transfer full): the CSV text, the metadata first as
 * "# key: value" lines (which rs_trace_read_string() reads back). */
char *rs_trace_to_string(const RsTrace *trace);

/* The most messages a file may list: 2^24 (16.7 million, far above the few hundred
 * thousand network messages of the largest shipped refit), checked while reading, before
 * a simulation allocates per message. */
#define RS_TRACE_MAX_ROWS (1u << 24)

/**
 * rs_trace_read_file:
 * @error: RS_TRACE_ERROR_IO (also "PATH: is a folder, not a file"), or RS_TRACE_ERROR_PARSE
 *   "path:line: column bytes: \"x\" is not a non-negative integer" (also for a missing
 *   src/dst/bytes column, a repeated or unknown column, a wrong number of fields, a
 *   dependency on a message not in the file, more than RS_TRACE_MAX_ROWS messages, or a
 *   file that is not text: "path:line:col: byte 0xff is not text: …"); quoted fields are
 *   cut at 40 characters
 *
 * Returns: (transfer full): the trace, or NULL.
 */
RsTrace *rs_trace_read_file(const char *path, GError **error);

/**
 * rs_trace_get_meta_path:
 * Returns: (transfer full): the metadata sidecar of the trace file @path: "PATH.meta".
 * rs_trace_read_file() reads it when it exists.
 */
char *rs_trace_get_meta_path(const char *path);

/** rs_trace_read_string: as rs_trace_read_file(); @name is used in messages. */
RsTrace *rs_trace_read_string(const char *text, const char *name, GError **error);

G_END_DECLS
