// SPDX-License-Identifier: GPL-2.0
/*
 * dirhold: read a directory in two parts with a pause between them, so
 * that the filesystem's state of the read (ext4's readdir tree) stays
 * alive across whatever the test does meanwhile: a knob flip, an unload.
 *
 * usage: dirhold DIR FIRST GO
 *
 * One getdents64() of FIRST bytes (0: none), "held" on stdout, then a
 * wait until the file GO exists (GO "-": no wait), then getdents64() of
 * 4 KiB until the end, and the file closed.  Prints
 *   dirhold: entries=N sum=S
 * where S is FNV-1a over every entry's d_ino, d_off, d_type and name, in
 * the order returned: the same for any split of one unchanged directory,
 * so a held read compares with a read in one go.  Exit 0, or 1 on error.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

struct ent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static uint64_t sum = 0xcbf29ce484222325ULL;
static long entries;

static void fnv(const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		sum = (sum ^ *c++) * 0x100000001b3ULL;
}

/* One getdents64() into @size bytes: its return, each entry summed. */
static long part(int fd, size_t size)
{
	static char buf[65536];
	long n, off;

	n = syscall(SYS_getdents64, fd, buf, size);
	for (off = 0; off < n;) {
		struct ent64 *e = (struct ent64 *)(buf + off);

		fnv(&e->d_ino, sizeof(e->d_ino));
		fnv(&e->d_off, sizeof(e->d_off));
		fnv(&e->d_type, 1);
		fnv(e->d_name, strlen(e->d_name) + 1);
		entries++;
		off += e->d_reclen;
	}
	return n;
}

int main(int argc, char **argv)
{
	long first, n;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: dirhold DIR FIRST GO\n");
		return 2;
	}
	first = atol(argv[2]);
	fd = open(argv[1], O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	if (first > 0 && part(fd, first) < 0) {
		perror("getdents64");
		return 1;
	}
	printf("held\n");
	fflush(stdout);
	while (strcmp(argv[3], "-") && access(argv[3], F_OK))
		usleep(10000);
	do {
		n = part(fd, 4096);
	} while (n > 0);
	if (n < 0) {
		perror("getdents64");
		return 1;
	}
	close(fd);
	printf("dirhold: entries=%ld sum=%016llx\n", entries,
	       (unsigned long long)sum);
	return 0;
}
