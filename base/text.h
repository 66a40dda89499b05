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

/* Deepest nesting of JSON arrays and objects rs_json_check_depth() accepts: a
 * config.json or a safetensors header is a few levels deep. */
#define RS_JSON_MAX_DEPTH 64

/**
 * rs_json_check_depth:
 * @text: (array length=len): JSON text (strings with their escapes skipped)
 * @name: the file, for the message
 * @kind: what the file is ("config.json", "safetensors header")
 * @domain, @code: the error to set
 *
 * Before a JSON parser sees @text: fails with "NAME:LINE:COL: the KIND nests deeper than
 * 64 levels" where arrays and objects go deeper than RS_JSON_MAX_DEPTH (json-glib's parser
 * recurses per level: 100,000 levels overflowed the stack, SIGSEGV). O(len).
 * Returns: TRUE when the nesting is within the limit.
 */
gboolean rs_json_check_depth(const char *text, gsize len, const char *name, const char *kind,
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

G_END_DECLS
