/* yaml-reader.c — a thin layer over libyaml's document API. libyaml keeps a start mark (0-based
 * line and column) on every node; we keep the path beside the document so that any reader
 * can point a user at the exact place of a bad value. */
#include "base/yaml-reader.h"

#include "base/text.h"
#include "base/units.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(rs-yaml-error-quark, rs_yaml_error)
/* clang-format on */

struct _RsYaml {
    char *path;
    yaml_document_t document;
};

/* Deepest nesting accepted: every file reshard reads is a few levels deep (a model's
 * rope_scaling, a topology's copy runs); a file nested 100,000 deep overflowed the stack of
 * the readers that walk it and took time quadratic in its depth. */
#define RS_YAML_MAX_DEPTH 64

/* The node of @doc at @index (1-based, as libyaml numbers them). */
static yaml_node_t *
node_at(yaml_document_t *doc, int index)
{
    return doc->nodes.start + index - 1;
}

/* The @k-th child of @node (mapping: keys and values in turn), or 0 past the last. */
static int
child_at(const yaml_node_t *node, gsize k)
{
    if (node->type == YAML_SEQUENCE_NODE) {
        gsize n = (gsize)(node->data.sequence.items.top - node->data.sequence.items.start);
        return k < n ? node->data.sequence.items.start[k] : 0;
    }
    if (node->type == YAML_MAPPING_NODE) {
        gsize n = (gsize)(node->data.mapping.pairs.top - node->data.mapping.pairs.start);
        if (k >= 2 * n)
            return 0;
        const yaml_node_pair_t *p = &node->data.mapping.pairs.start[k / 2];
        return k % 2 == 0 ? p->key : p->value;
    }
    return 0;
}

/* Fails, naming the node where it happens, when @doc nests deeper than RS_YAML_MAX_DEPTH
 * (an alias counts as the nesting of the node it names) or an alias names a node that
 * contains it. Iterative, each node's depth below it computed once (aliases share nodes). */
static gboolean
check_depth(yaml_document_t *doc, const char *name, GError **error)
{
    gsize n = (gsize)(doc->nodes.top - doc->nodes.start);
    if (n == 0)
        return TRUE;
    g_autofree guint8 *state = g_new0(guint8, n + 1); /* 0 new, 1 on the stack, 2 done */
    g_autofree guint *below = g_new0(guint, n + 1);   /* levels below a done node */
    typedef struct {
        int node;
        gsize next;
    } Frame;
    g_autoptr(GArray) stack = g_array_new(FALSE, FALSE, sizeof(Frame));
    Frame root = {1, 0};
    g_array_append_val(stack, root);
    state[1] = 1;
    while (stack->len > 0) {
        Frame *f = &g_array_index(stack, Frame, stack->len - 1);
        yaml_node_t *node = node_at(doc, f->node);
        int c = child_at(node, f->next);
        if (c == 0) {
            guint deepest = 0;
            for (gsize k = 0; (c = child_at(node, k)) != 0; k++)
                deepest = MAX(deepest, below[c] + 1);
            below[f->node] = deepest;
            state[f->node] = 2;
            g_array_set_size(stack, stack->len - 1);
            continue;
        }
        f->next++;
        /* The child sits at depth stack->len (the root at 0); a done one (an alias to a
         * node seen before) reaches below[c] levels further down. */
        if (state[c] == 2 && stack->len + below[c] < RS_YAML_MAX_DEPTH)
            continue;
        yaml_node_t *child = node_at(doc, c);
        if (state[c] == 1) {
            g_set_error(error, RS_YAML_ERROR, RS_YAML_ERROR_SYNTAX,
                        "%s:%zu:%zu: an alias names a node that contains it", name,
                        child->start_mark.line + 1, child->start_mark.column + 1);
            return FALSE;
        }
        if (state[c] == 2 || stack->len >= RS_YAML_MAX_DEPTH) {
            g_set_error(error, RS_YAML_ERROR, RS_YAML_ERROR_SYNTAX,
                        "%s:%zu:%zu: nested deeper than %d levels", name,
                        child->start_mark.line + 1, child->start_mark.column + 1,
                        RS_YAML_MAX_DEPTH);
            return FALSE;
        }
        state[c] = 1;
        Frame next = {c, 0};
        g_array_append_val(stack, next);
    }
    return TRUE;
}

/* Does scalar @value (@len bytes, valid UTF-8: the file was checked) hold a control
 * character: C0 but tab and LF (NUL too: "\0" cut the value short where it was read as a
 * C string), DEL, or C1 (U+0080 to U+009F, which terminals read as controls too)? Sets
 * *@u to the first. */
static gboolean
scalar_control(const char *value, gsize len, gunichar *u)
{
    for (const char *p = value; p < value + len; p = g_utf8_next_char(p)) {
        *u = g_utf8_get_char(p);
        if ((*u < 0x20 && *u != '\t' && *u != '\n') || (*u >= 0x7f && *u <= 0x9f))
            return TRUE;
    }
    return FALSE;
}

/* Is node @n a scalar with a control character? Sets *@u to it. */
static gboolean
has_control(const yaml_node_t *n, gunichar *u)
{
    return n->type == YAML_SCALAR_NODE &&
           scalar_control((const char *)n->data.scalar.value, n->data.scalar.length, u);
}

/* The file's bytes are text (rs_text_check()), but a quoted scalar's escapes ("\e",
 * "\x1b", "\u009b", "\0") make control characters again once libyaml unescapes them, and
 * the text output prints names as they are: "\e[2J" as a topology's name cleared the
 * terminal (`reshard topology show`). Fails on the first such scalar in the file, key or
 * value, naming its place and, for a value or a list item of a mapping, its key. */
static gboolean
check_scalars(yaml_document_t *doc, const char *name, GError **error)
{
    const yaml_node_t *bad = NULL;
    gunichar u = 0;
    for (yaml_node_t *node = doc->nodes.start; node < doc->nodes.top; node++) {
        gunichar c;
        if (has_control(node, &c) &&
            (bad == NULL || node->start_mark.index < bad->start_mark.index)) {
            bad = node;
            u = c;
        }
    }
    if (bad == NULL)
        return TRUE;
    /* Its key: the mapping pair whose value is it, or a list that holds it. */
    const yaml_node_t *key = NULL;
    for (yaml_node_t *node = doc->nodes.start; key == NULL && node < doc->nodes.top; node++) {
        if (node->type != YAML_MAPPING_NODE)
            continue;
        for (yaml_node_pair_t *pair = node->data.mapping.pairs.start;
             key == NULL && pair < node->data.mapping.pairs.top; pair++) {
            yaml_node_t *v = node_at(doc, pair->value);
            if (v == bad)
                key = node_at(doc, pair->key);
            for (yaml_node_item_t *item =
                     v->type == YAML_SEQUENCE_NODE ? v->data.sequence.items.start : NULL;
                 key == NULL && item != NULL && item < v->data.sequence.items.top; item++)
                if (node_at(doc, *item) == bad)
                    key = node_at(doc, pair->key);
        }
    }
    gunichar ignored;
    g_autofree char *field = NULL;
    if (key != NULL && key->type == YAML_SCALAR_NODE && !has_control(key, &ignored))
        field = g_strdup_printf("%s: ", (const char *)key->data.scalar.value);
    g_set_error(error, RS_YAML_ERROR, RS_YAML_ERROR_SYNTAX,
                "%s:%zu:%zu: %sthe scalar holds the control character U+%04X (an escape in "
                "quotes); names and values are text",
                name, bad->start_mark.line + 1, bad->start_mark.column + 1,
                field != NULL ? field : "", (guint)u);
    return FALSE;
}

static RsYaml *
load_from_parser(yaml_parser_t *parser, const char *name, GError **error)
{
    RsYaml *yaml = g_new0(RsYaml, 1);
    yaml->path = g_strdup(name);
    if (!yaml_parser_load(parser, &yaml->document)) {
        g_set_error(error, RS_YAML_ERROR, RS_YAML_ERROR_SYNTAX, "%s:%zu:%zu: %s%s%s", name,
                    parser->problem_mark.line + 1, parser->problem_mark.column + 1,
                    parser->problem ? parser->problem : "malformed YAML",
                    parser->context ? " " : "", parser->context ? parser->context : "");
        g_free(yaml->path);
        g_free(yaml);
        return NULL;
    }
    if (yaml_document_get_root_node(&yaml->document) == NULL) {
        g_set_error(error, RS_YAML_ERROR, RS_YAML_ERROR_SYNTAX, "%s:1:1: empty document", name);
        rs_yaml_free(yaml);
        return NULL;
    }
    if (!check_depth(&yaml->document, name, error) ||
        !check_scalars(&yaml->document, name, error)) {
        rs_yaml_free(yaml);
        return NULL;
    }
    /* One document per file: libyaml stops after the first, so a second one (after "---",
     * or anything after "...") was ignored, and with it whatever it said. */
    yaml_document_t next;
    if (!yaml_parser_load(parser, &next)) {
        g_set_error(error, RS_YAML_ERROR, RS_YAML_ERROR_SYNTAX, "%s:%zu:%zu: %s%s%s", name,
                    parser->problem_mark.line + 1, parser->problem_mark.column + 1,
                    parser->problem ? parser->problem : "malformed YAML",
                    parser->context ? " " : "", parser->context ? parser->context : "");
        rs_yaml_free(yaml);
        return NULL;
    }
    yaml_node_t *next_root = yaml_document_get_root_node(&next);
    if (next_root != NULL) {
        g_set_error(error, RS_YAML_ERROR, RS_YAML_ERROR_SYNTAX,
                    "%s:%zu:%zu: a second YAML document; a file holds one", name,
                    next.start_mark.line + 1, next.start_mark.column + 1);
        yaml_document_delete(&next);
        rs_yaml_free(yaml);
        return NULL;
    }
    yaml_document_delete(&next);
    return yaml;
}

/* Before libyaml sees @text: fails when flow collections ('[', '{' outside quotes and
 * comments) or block indentation (levels of strictly increasing indentation, outside flow
 * collections) go deeper than RS_YAML_MAX_DEPTH, naming the line and column. libyaml takes
 * time quadratic in the depth (a 200 KB file of nested '[' took 23 s); check_depth() then
 * checks the document itself. Unbalanced brackets in plain scalars ("a[") count as
 * openers: more than RS_YAML_MAX_DEPTH of them on one path is refused too. */
static gboolean
check_text_depth(const char *text, const char *name, GError **error)
{
    guint flow = 0, line = 1;
    guint indents[RS_YAML_MAX_DEPTH];
    guint n_indents = 0;
    gboolean line_start = TRUE;
    for (const char *p = text; *p; p++) {
        if (line_start && flow == 0) {
            const char *q = p;
            while (*q == ' ')
                q++;
            guint indent = (guint)(q - p);
            if (*q != '\n' && *q != '\r' && *q != '#' && *q != '\0') {
                while (n_indents > 0 && indents[n_indents - 1] > indent)
                    n_indents--;
                if (n_indents == 0 || indents[n_indents - 1] < indent) {
                    if (n_indents == RS_YAML_MAX_DEPTH) { /* (the root's level is 0) */
                        g_set_error(error, RS_YAML_ERROR, RS_YAML_ERROR_SYNTAX,
                                    "%s:%u:%u: nested deeper than %d levels", name, line,
                                    indent + 1, RS_YAML_MAX_DEPTH);
                        return FALSE;
                    }
                    indents[n_indents++] = indent;
                }
            }
        }
        line_start = FALSE;
        /* Quotes open a scalar and '#' a comment only where a token can start (YAML 1.2
         * §6.6, §7.3): "Qwen's" and "a#b" are plain text. */
        gboolean token_start = p == text || strchr(" \t\n[{,:-", p[-1]) != NULL;
        if ((*p == '"' || *p == '\'' || *p == '#') && !token_start)
            continue;
        switch (*p) {
        case '\n':
            line++;
            line_start = TRUE;
            break;
        case '#': /* a comment to the end of the line */
            while (p[1] != '\0' && p[1] != '\n')
                p++;
            break;
        case '"':
            for (p++; *p && *p != '"'; p++) {
                if (*p == '\\' && p[1] != '\0')
                    p++;
                line += *p == '\n';
            }
            if (*p == '\0')
                return TRUE; /* unterminated: libyaml says where */
            break;
        case '\'':
            for (p++; *p && !(*p == '\'' && p[1] != '\''); p++) {
                if (*p == '\'' && p[1] == '\'')
                    p++;
                line += *p == '\n';
            }
            if (*p == '\0')
                return TRUE;
            break;
        case '[':
        case '{':
            if (++flow > RS_YAML_MAX_DEPTH) {
                const char *bol = p;
                while (bol > text && bol[-1] != '\n')
                    bol--;
                g_set_error(error, RS_YAML_ERROR, RS_YAML_ERROR_SYNTAX,
                            "%s:%u:%u: nested deeper than %d levels", name, line,
                            (guint)(p - bol) + 1, RS_YAML_MAX_DEPTH);
                return FALSE;
            }
            break;
        case ']':
        case '}':
            if (flow > 0)
                flow--;
            break;
        default:
            break;
        }
    }
    return TRUE;
}

RsYaml *
rs_yaml_load_string(const char *text, const char *name, GError **error)
{
    g_return_val_if_fail(text != NULL && name != NULL, NULL);
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        g_set_error(error, RS_YAML_ERROR, RS_YAML_ERROR_IO, "%s: cannot initialise YAML parser",
                    name);
        return NULL;
    }
    if (!rs_text_check(text, strlen(text), name, "YAML file", RS_YAML_ERROR, RS_YAML_ERROR_SYNTAX,
                       error) ||
        !check_text_depth(text, name, error)) {
        yaml_parser_delete(&parser);
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
    RsYaml *yaml = load_from_parser(&parser, name, error);
    yaml_parser_delete(&parser);
    return yaml;
}

RsYaml *
rs_yaml_load_file(const char *path, GError **error)
{
    g_return_val_if_fail(path != NULL, NULL);
    g_autofree char *contents = NULL;
    gsize len = 0;
    g_autoptr(GError) io_error = NULL;
    if (!g_file_get_contents(path, &contents, &len, &io_error)) {
        g_set_error(error, RS_YAML_ERROR, RS_YAML_ERROR_IO, "%s", io_error->message);
        return NULL;
    }
    /* A NUL would end the text libyaml sees (a binary file read as "empty document"). */
    if (!rs_text_check(contents, len, path, "YAML file", RS_YAML_ERROR, RS_YAML_ERROR_SYNTAX,
                       error))
        return NULL;
    return rs_yaml_load_string(contents, path, error);
}

void
rs_yaml_free(RsYaml *yaml)
{
    if (yaml == NULL)
        return;
    yaml_document_delete(&yaml->document);
    g_free(yaml->path);
    g_free(yaml);
}

const char *
rs_yaml_get_path(const RsYaml *yaml)
{
    return yaml->path;
}

const char *
rs_yaml_scalar_value(const yaml_node_t *node)
{
    if (node == NULL || node->type != YAML_SCALAR_NODE)
        return NULL;
    return (const char *)node->data.scalar.value;
}

yaml_node_t *
rs_yaml_node_at(RsYaml *yaml, int index)
{
    return yaml_document_get_node(&yaml->document, index);
}

void
rs_yaml_set_error(RsYaml *yaml, yaml_node_t *node, const char *section, const char *field,
                  GError **error, RsYamlError code, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *message = g_strdup_vprintf(format, args);
    va_end(args);
    g_autofree char *where = NULL;
    if (node != NULL)
        where = g_strdup_printf("%s:%zu:%zu", yaml->path, node->start_mark.line + 1,
                                node->start_mark.column + 1);
    else
        where = g_strdup(yaml->path);
    g_autofree char *name = NULL;
    if (section != NULL && field != NULL)
        name = g_strdup_printf("%s.%s: ", section, field);
    else if (section != NULL || field != NULL)
        name = g_strdup_printf("%s: ", section ? section : field);
    else
        name = g_strdup("");
    g_set_error(error, RS_YAML_ERROR, code, "%s: %s%s", where, name, message);
}

yaml_node_t *
rs_yaml_get_root_mapping(RsYaml *yaml, GError **error)
{
    yaml_node_t *root = yaml_document_get_root_node(&yaml->document);
    if (root == NULL || root->type != YAML_MAPPING_NODE) {
        rs_yaml_set_error(yaml, root, NULL, NULL, error, RS_YAML_ERROR_TYPE,
                          "the document must be a mapping of fields");
        return NULL;
    }
    return root;
}

yaml_node_t *
rs_yaml_lookup(RsYaml *yaml, yaml_node_t *map, const char *key)
{
    if (map == NULL || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *pair = map->data.mapping.pairs.start;
         pair < map->data.mapping.pairs.top; pair++) {
        yaml_node_t *k = yaml_document_get_node(&yaml->document, pair->key);
        const char *text = rs_yaml_scalar_value(k);
        if (text != NULL && strcmp(text, key) == 0)
            return yaml_document_get_node(&yaml->document, pair->value);
    }
    return NULL;
}

gboolean
rs_yaml_check_keys(RsYaml *yaml, yaml_node_t *map, const char *section, const char *const *known,
                   GError **error)
{
    if (map == NULL || map->type != YAML_MAPPING_NODE) {
        rs_yaml_set_error(yaml, map, section, NULL, error, RS_YAML_ERROR_TYPE,
                          "expected a mapping");
        return FALSE;
    }
    for (yaml_node_pair_t *pair = map->data.mapping.pairs.start;
         pair < map->data.mapping.pairs.top; pair++) {
        yaml_node_t *k = yaml_document_get_node(&yaml->document, pair->key);
        const char *text = rs_yaml_scalar_value(k);
        if (text == NULL) {
            rs_yaml_set_error(yaml, k, section, NULL, error, RS_YAML_ERROR_TYPE,
                              "keys must be plain names");
            return FALSE;
        }
        gboolean found = FALSE;
        for (guint i = 0; known[i] != NULL && !found; i++)
            found = strcmp(text, known[i]) == 0;
        if (!found) {
            g_autofree char *list = g_strjoinv(", ", (char **)known);
            rs_yaml_set_error(yaml, k, section, text, error, RS_YAML_ERROR_UNKNOWN_KEY,
                              "unknown field (known: %s)", list);
            return FALSE;
        }
    }
    /* A key given twice is as suspicious as an unknown one. */
    return rs_yaml_check_unique_keys(yaml, map, section, error);
}

gboolean
rs_yaml_check_unique_keys(RsYaml *yaml, yaml_node_t *map, const char *section, GError **error)
{
    for (yaml_node_pair_t *pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top;
         pair++) {
        yaml_node_t *k = rs_yaml_node_at(yaml, pair->key);
        const char *text = rs_yaml_scalar_value(k);
        for (yaml_node_pair_t *other = map->data.mapping.pairs.start;
             text != NULL && other < pair; other++) {
            const char *t2 = rs_yaml_scalar_value(rs_yaml_node_at(yaml, other->key));
            if (t2 != NULL && strcmp(t2, text) == 0) {
                rs_yaml_set_error(yaml, k, section, text, error, RS_YAML_ERROR_UNKNOWN_KEY,
                                  "field given twice");
                return FALSE;
            }
        }
    }
    return TRUE;
}

/* Finds @key and makes sure it is a scalar. *node_out is NULL when absent and optional. */
static gboolean
find_scalar(RsYaml *yaml, yaml_node_t *map, const char *section, const char *key,
            gboolean required, yaml_node_t **node_out, GError **error)
{
    yaml_node_t *node = rs_yaml_lookup(yaml, map, key);
    *node_out = NULL;
    if (node == NULL) {
        if (required) {
            rs_yaml_set_error(yaml, map, section, key, error, RS_YAML_ERROR_MISSING,
                              "required field is missing");
            return FALSE;
        }
        return TRUE;
    }
    if (node->type != YAML_SCALAR_NODE) {
        rs_yaml_set_error(yaml, node, section, key, error, RS_YAML_ERROR_TYPE,
                          "expected a single value");
        return FALSE;
    }
    *node_out = node;
    return TRUE;
}

gboolean
rs_yaml_read_string(RsYaml *yaml, yaml_node_t *map, const char *section, const char *key,
                    gboolean required, const char **out, GError **error)
{
    yaml_node_t *node;
    if (!find_scalar(yaml, map, section, key, required, &node, error))
        return FALSE;
    if (node == NULL)
        return TRUE;
    const char *text = rs_yaml_scalar_value(node);
    /* A required string given empty ("name:") is as missing as one not given. */
    if (required && (text == NULL || *text == '\0')) {
        rs_yaml_set_error(yaml, node, section, key, error, RS_YAML_ERROR_VALUE,
                          "must not be empty");
        return FALSE;
    }
    *out = text;
    return TRUE;
}

gboolean
rs_yaml_check_plain(RsYaml *yaml, yaml_node_t *node, const char *section, const char *field,
                    const char *what, GError **error)
{
    if (node == NULL || node->type != YAML_SCALAR_NODE ||
        (node->data.scalar.style != YAML_SINGLE_QUOTED_SCALAR_STYLE &&
         node->data.scalar.style != YAML_DOUBLE_QUOTED_SCALAR_STYLE))
        return TRUE;
    rs_yaml_set_error(yaml, node, section, field, error, RS_YAML_ERROR_TYPE,
                      "\"%s\" is quoted, a string: expected %s, written without quotes",
                      rs_yaml_scalar_value(node), what);
    return FALSE;
}

gboolean
rs_yaml_read_int64(RsYaml *yaml, yaml_node_t *map, const char *section, const char *key,
                   gboolean required, gint64 min, gint64 max, gint64 *out, GError **error)
{
    yaml_node_t *node;
    if (!find_scalar(yaml, map, section, key, required, &node, error))
        return FALSE;
    if (node == NULL)
        return TRUE;
    if (!rs_yaml_check_plain(yaml, node, section, key, "an integer", error))
        return FALSE;
    const char *text = rs_yaml_scalar_value(node);
    gint64 value;
    g_autoptr(GError) local = NULL;
    if (!g_ascii_string_to_signed(text, 10, min, max, &value, &local)) {
        rs_yaml_set_error(yaml, node, section, key, error, RS_YAML_ERROR_VALUE,
                          "\"%s\": expected an integer in [%" G_GINT64_FORMAT
                          ", %" G_GINT64_FORMAT "]",
                          text, min, max);
        return FALSE;
    }
    *out = value;
    return TRUE;
}

gboolean
rs_yaml_read_double(RsYaml *yaml, yaml_node_t *map, const char *section, const char *key,
                    gboolean required, double min, double max, double *out, GError **error)
{
    yaml_node_t *node;
    if (!find_scalar(yaml, map, section, key, required, &node, error))
        return FALSE;
    if (node == NULL)
        return TRUE;
    if (!rs_yaml_check_plain(yaml, node, section, key, "a number", error))
        return FALSE;
    const char *text = rs_yaml_scalar_value(node);
    char *end = NULL;
    double value = g_ascii_strtod(text, &end);
    if (end == text || *end != '\0' || !isfinite(value) || value < min || value > max) {
        rs_yaml_set_error(yaml, node, section, key, error, RS_YAML_ERROR_VALUE,
                          "\"%s\": expected a number in [%g, %g]", text, min, max);
        return FALSE;
    }
    *out = value;
    return TRUE;
}

gboolean
rs_yaml_read_bool(RsYaml *yaml, yaml_node_t *map, const char *section, const char *key,
                  gboolean required, gboolean *out, GError **error)
{
    yaml_node_t *node;
    if (!find_scalar(yaml, map, section, key, required, &node, error))
        return FALSE;
    if (node == NULL)
        return TRUE;
    if (!rs_yaml_check_plain(yaml, node, section, key, "true or false", error))
        return FALSE;
    const char *text = rs_yaml_scalar_value(node);
    if (g_ascii_strcasecmp(text, "true") == 0 || g_ascii_strcasecmp(text, "yes") == 0) {
        *out = TRUE;
    } else if (g_ascii_strcasecmp(text, "false") == 0 || g_ascii_strcasecmp(text, "no") == 0) {
        *out = FALSE;
    } else {
        rs_yaml_set_error(yaml, node, section, key, error, RS_YAML_ERROR_VALUE,
                          "\"%s\": expected true or false", text);
        return FALSE;
    }
    return TRUE;
}

typedef gboolean (*UnitParser)(const char *text, void *out, GError **error);

static gboolean
read_unit(RsYaml *yaml, yaml_node_t *map, const char *section, const char *key,
          gboolean required, UnitParser parse, void *out, GError **error)
{
    yaml_node_t *node;
    if (!find_scalar(yaml, map, section, key, required, &node, error))
        return FALSE;
    if (node == NULL)
        return TRUE;
    g_autoptr(GError) local = NULL;
    if (!parse(rs_yaml_scalar_value(node), out, &local)) {
        rs_yaml_set_error(yaml, node, section, key, error, RS_YAML_ERROR_VALUE, "%s",
                          local->message);
        return FALSE;
    }
    return TRUE;
}

gboolean
rs_yaml_read_bandwidth(RsYaml *yaml, yaml_node_t *map, const char *section, const char *key,
                       gboolean required, double *out, GError **error)
{
    return read_unit(yaml, map, section, key, required, (UnitParser)rs_units_parse_bandwidth,
                     out, error);
}

gboolean
rs_yaml_read_duration(RsYaml *yaml, yaml_node_t *map, const char *section, const char *key,
                      gboolean required, double *out, GError **error)
{
    return read_unit(yaml, map, section, key, required, (UnitParser)rs_units_parse_duration, out,
                     error);
}

gboolean
rs_yaml_read_size(RsYaml *yaml, yaml_node_t *map, const char *section, const char *key,
                  gboolean required, guint64 *out, GError **error)
{
    return read_unit(yaml, map, section, key, required, (UnitParser)rs_units_parse_size, out,
                     error);
}
