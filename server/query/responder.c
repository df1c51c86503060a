/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The daemon's responder: answers from the zones served. */
#include "config.h"

#include "server/query/responder.h"

const responder_t responder_zones = { .answer = answer_query, .zones = true };
