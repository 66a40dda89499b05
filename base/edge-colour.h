/* edge-colour.h — colours for the messages of a schedule, so that the operations one rank
 * posts together meet operations its peers post at the same time.
 *
 * The messages of a group (a phase) are the edges of a bipartite multigraph: each message
 * an edge from its sender's send side to its receiver's receive side. A proper edge
 * colouring gives every message a colour such that no two messages of the group leaving
 * one rank, nor two entering one rank, share it: each colour class is a set of messages in
 * which every rank sends at most once and receives at most once (a partial permutation),
 * so ranks that walk their messages by colour walk them in step. König's theorem (1916)
 * says Δ colours suffice for a bipartite multigraph of largest degree Δ; first fit, used
 * here, gives each message in input order the smallest colour free at both its ends and
 * needs at most 2Δ − 1 (a message meets at most Δ − 1 others at each end), in O(n × Δ / 64)
 * time with one bit per colour and rank side.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * rs_edge_colour_first_fit:
 * @src: (array length=n): per message, its sender, below @n_vertices
 * @dst: (array length=n): per message, its receiver, below @n_vertices
 * @group: (array length=n): per message, its group (a phase); colours restart in each
 *   group, and messages of different groups never conflict
 * @n: messages
 * @n_vertices: ranks (one more than the largest rank named)
 * @colour_out: (array length=n) (out caller-allocates): per message, its colour from 0;
 *   0 for a message with @src == @dst, which takes no colour
 *
 * First-fit proper edge colouring, messages of a group taken in input order (see the top
 * of the file). Deterministic. Memory: O(n_vertices + colours × ranks / 64 words) at most
 * per group.
 */
void rs_edge_colour_first_fit(const guint32 *src, const guint32 *dst, const guint32 *group,
                              guint n, guint n_vertices, guint32 *colour_out);

G_END_DECLS
