/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shoald's entry point: the server answering from its zones. */
#include "config.h"

#include "server/daemon/server.h"
#include "server/query/responder.h"

int main(int argc, char **argv)
{
	return server_main(argc, argv, &responder_zones);
}
