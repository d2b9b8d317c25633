// SPDX-License-Identifier: GPL-2.0
/*
 * runas: run a command as an unprivileged user, with no capabilities.
 *
 * usage: runas UID COMMAND [ARG...]
 *
 * Drops supplementary groups, then sets group and user ID to UID.
 * Exits 2 if that fails; otherwise the command's own exit status.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	uid_t id;

	if (argc < 3) {
		fprintf(stderr, "usage: runas UID COMMAND [ARG...]\n");
		return 2;
	}
	id = strtoul(argv[1], NULL, 10);
	if (setgroups(0, NULL) || setgid(id) || setuid(id) || !getuid()) {
		perror("runas");
		return 2;
	}
	execvp(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}
