/* text.h — input files that must be text, and names from input made safe to print.
 *
 * Every text input (YAML, config.json, a safetensors index or header, a messages CSV) is
 * UTF-8 without control characters other than tab, LF and CR; rs_text_find_bad() finds
 * the first byte that breaks that, so a binary or mis-encoded file is named at its place
 * instead of reported as an empty or unparsable document. rs_text_escape() makes any name
 * taken from input (a tensor, model or file name, an argument) safe to write to a terminal:
 * error messages print names through it, so no input can send escape sequences. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * rs_text_find_bad:
 * @text: (array length=len): the bytes
 * @offset: (out): the byte offset of the first bad byte, 0-based
 * @line: (out): its line, 1-based (LF ends a line)
 * @column: (out): its column in characters, 1-based
 * @byte: (out): the byte
 * @bad_utf8: (out): TRUE when it starts invalid UTF-8, FALSE for a control character
 *   (NUL, C0 other than tab, LF, CR, or DEL)
 *
 * O(len). Returns: TRUE when a bad byte was found (the outs are then set).
 */
gboolean rs_text_find_bad(const char *text, gsize len, gsize *offset, guint *line, guint *column,
                          guchar *byte, gboolean *bad_utf8);

/**
 * rs_text_check:
 * @name: the file, for the message
 * @kind: what the file is, for the message ("YAML file", "config.json")
 * @domain, @code: the error to set
 *
 * Fails on the first bad byte (rs_text_find_bad()) with "NAME:LINE:COL: byte offset N:
 * byte 0xNN is not text (a control character); a KIND is UTF-8 text" or "…: byte 0xNN is
 * not valid UTF-8; a KIND is UTF-8 text". Returns: TRUE when @text is text.
 */
gboolean rs_text_check(const char *text, gsize len, const char *name, const char *kind,
                       GQuark domain, gint code, GError **error);

/* Deepest nesting of JSON arrays and objects rs_json_scan() accepts: a config.json or a
 * safetensors header is a few levels deep. */
#define RS_JSON_MAX_DEPTH 64

typedef enum {
    RS_JSON_SCAN_OK,
    RS_JSON_SCAN_DEPTH,     /* arrays and objects nest deeper than RS_JSON_MAX_DEPTH */
    RS_JSON_SCAN_INTEGER,   /* an integer outside [-2^63, 2^63 - 1] */
    RS_JSON_SCAN_NUMBER,    /* a number with a fraction or exponent beyond a double */
    RS_JSON_SCAN_DUPLICATE, /* a key given twice in one object */
} RsJsonScanProblem;

/* What rs_json_scan() found: the problem, where (the byte offset, 0-based, and line and
 * column, 1-based, columns in characters), the key path of the value or key concerned
 * ("a", "a.b", "a.2.c"; "" for the top), the number's text, and for a duplicate where the
 * key came first. rs_json_scan_result_clear() frees the strings. */
typedef struct {
    RsJsonScanProblem problem;
    gsize offset;
    guint line, column;
    char *path;  /* (nullable) */
    char *token; /* (nullable): the number's text */
    guint first_line, first_column;
} RsJsonScanResult;

/* Called by rs_json_scan() for every key: its path (borrowed for the call), its opening
 * quote's line and column (1-based) and byte offset. */
typedef void (*RsJsonKeyFunc)(const char *path, guint line, guint column, gsize offset,
                              gpointer user_data);

/**
 * rs_json_scan:
 * @text: (array length=len): JSON text; strings are skipped with their escapes, key
 *   identity is their text as written
 * @on_key: (nullable) (scope call): called for every key, in order
 * @result: (out caller-allocates): the first problem found; clear it with
 *   rs_json_scan_result_clear() whatever the return
 *
 * One pass over @text before a JSON parser sees it, for what json-glib (1.6) accepts
 * silently or cannot survive: nesting deeper than RS_JSON_MAX_DEPTH (its parser recurses
 * per level: 100,000 levels overflowed the stack, SIGSEGV), integers outside 64 bits (its
 * scanner wraps them: 99999999999999999999 reads as -1, -18446744073709551617 as 1),
 * numbers beyond a double (they read as infinity) and a key given twice in one object (it
 * keeps the last). Does not validate the grammar (the parser does). O(len).
 * Returns: TRUE when none of those problems was found.
 */
gboolean rs_json_scan(const char *text, gsize len, RsJsonKeyFunc on_key, gpointer user_data,
                      RsJsonScanResult *result);

/* Frees @result's strings (it can be scanned into again). */
void rs_json_scan_result_clear(RsJsonScanResult *result);

/**
 * rs_json_scan_describe:
 * @result: a problem rs_json_scan() found
 * @kind: what the file is ("config.json", "JSON header"), for the nesting message
 *
 * Returns: (transfer full): the problem in words, without its place: "the KIND nests
 *   deeper than 64 levels", "PATH: the integer N is outside the 64-bit range a JSON reader
 *   keeps (-2^63 to 2^63 - 1)", "PATH: the number X is beyond the range of a double",
 *   "PATH: field given twice (first at line L, column C)".
 */
char *rs_json_scan_describe(const RsJsonScanResult *result, const char *kind);

/**
 * rs_json_check:
 * @name: the file, for the message
 * @kind: what the file is ("config.json", "safetensors index")
 * @domain, @code: the error to set
 *
 * rs_json_scan() without a key callback; fails with "NAME:LINE:COL: " and
 * rs_json_scan_describe()'s words. Returns: TRUE when no problem was found.
 */
gboolean rs_json_check(const char *text, gsize len, const char *name, const char *kind,
                       GQuark domain, gint code, GError **error);

/**
 * rs_text_escape:
 * @text: (nullable): a NUL-terminated string, any bytes
 *
 * Returns: (transfer full): @text with every byte that would act on a terminal spelled out:
 *   C0 controls other than LF and tab, and DEL, as \xNN; C1 controls (U+0080..U+009F) as
 *   \u00NN; bytes of invalid UTF-8 as \xNN; a backslash stays as it is. NULL gives "".
 */
char *rs_text_escape(const char *text);

/**
 * rs_text_edit_distance:
 * @a: a NUL-terminated string (bytes compared)
 * @b: another
 * @cap: the largest distance of interest
 *
 * The Levenshtein distance of @a and @b, in byte insertions, deletions and substitutions,
 * computed row by row (Wagner & Fischer, "The String-to-String Correction Problem", JACM
 * 21(1), 1974), stopping once it must exceed @cap. O(|a| × |b|) time, O(|b|) memory.
 * Returns: the distance, or @cap + 1 when it is larger than @cap.
 */
guint rs_text_edit_distance(const char *a, const char *b, guint cap);

G_END_DECLS
