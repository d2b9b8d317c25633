// SPDX-License-Identifier: GPL-2.0
/*
 * uringname: io_uring's path-taking requests while a knob flips.
 *
 * usage: uringname KNOBFILE DIR ROUNDS
 *
 * In DIR: a file f (5 bytes), a FIFO p.  Each round submits, with the
 * raw io_uring system calls (no liburing in the guests): IORING_OP_OPENAT
 * of f, of a missing name, of a 4064-byte name (the names_cache room
 * before 7.0) and of missing/x; IORING_OP_OPENAT2 of f; IORING_OP_STATX
 * of f; IORING_OP_MKDIRAT, RENAMEAT and UNLINKAT of a directory of the
 * round's own, where the kernel has them (IORING_REGISTER_PROBE); and an
 * IORING_OP_OPENAT of the FIFO, which waits in an io-wq worker, holding
 * its name, until this program opens the FIFO for writing.  Between the
 * submissions and the writer's open the knob is written, so that names
 * are taken on one side and released on the other.  Every completion
 * must carry the answer the same request gets from the system call.
 *
 * Output: one line per wrong completion, then
 *   uringname: requests=R wrong=W
 * Exit 0 iff W == 0, 1 otherwise or on a setup error, 2 on usage error,
 * 3 when the kernel has no io_uring.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

#define ENTRIES 32

static struct io_uring_params params;
static unsigned int *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
static struct io_uring_sqe *sqes;
static struct io_uring_cqe *cqes;
static int ring;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static unsigned char supported[256];

static void setup(void)
{
	struct io_uring_probe *probe;
	char *sq, *cq;
	int i;

	ring = syscall(__NR_io_uring_setup, ENTRIES, &params);
	if (ring < 0) {
		perror("io_uring_setup");
		exit(3);
	}
	sq = mmap(NULL, params.sq_off.array + params.sq_entries * sizeof(unsigned int),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQ_RING);
	cq = mmap(NULL, params.cq_off.cqes + params.cq_entries * sizeof(struct io_uring_cqe),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_CQ_RING);
	sqes = mmap(NULL, params.sq_entries * sizeof(struct io_uring_sqe),
		    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED)
		die("mmap");
	sq_tail = (unsigned int *)(sq + params.sq_off.tail);
	sq_mask = (unsigned int *)(sq + params.sq_off.ring_mask);
	sq_array = (unsigned int *)(sq + params.sq_off.array);
	cq_head = (unsigned int *)(cq + params.cq_off.head);
	cq_tail = (unsigned int *)(cq + params.cq_off.tail);
	cq_mask = (unsigned int *)(cq + params.cq_off.ring_mask);
	cqes = (struct io_uring_cqe *)(cq + params.cq_off.cqes);
	probe = calloc(1, sizeof(*probe) + 256 * sizeof(struct io_uring_probe_op));
	if (!probe || syscall(__NR_io_uring_register, ring, IORING_REGISTER_PROBE, probe, 256))
		die("IORING_REGISTER_PROBE");
	for (i = 0; i < probe->ops_len && i < 256; i++)
		supported[i] = !!(probe->ops[i].flags & IO_URING_OP_SUPPORTED);
}

static struct io_uring_sqe *next_sqe(uint64_t tag)
{
	unsigned int tail = *sq_tail, i = tail & *sq_mask;
	struct io_uring_sqe *sqe = &sqes[i];

	memset(sqe, 0, sizeof(*sqe));
	sqe->user_data = tag;
	sq_array[i] = i;
	__atomic_store_n(sq_tail, tail + 1, __ATOMIC_RELEASE);
	return sqe;
}

/* The requests of one round; @want[tag] is each one's expected result. */
enum {
	R_OPEN_F, R_OPEN_MISSING, R_OPEN_LONG, R_OPEN_MISSING2, R_OPENAT2_F, R_STATX_F,
	R_MKDIR, R_RENAME, R_UNLINK, R_FIFO, R_COUNT
};

static const char * const labels[R_COUNT] = {
	"openat f", "openat missing", "openat 4064-byte name", "openat missing/x",
	"openat2 f", "statx f", "mkdirat", "renameat", "unlinkat", "openat fifo",
};

int main(int argc, char **argv)
{
	static char longname[4065];
	char dir1[64], dir2[64];
	struct open_how how = { .flags = O_RDONLY };
	struct statx stx, ref;
	long want[R_COUNT];
	int knob, rounds, r, i, wrong = 0, requests = 0, w, n;
	unsigned int got;
	static const unsigned char op[R_COUNT] = {
		IORING_OP_OPENAT, IORING_OP_OPENAT, IORING_OP_OPENAT, IORING_OP_OPENAT,
		IORING_OP_OPENAT2, IORING_OP_STATX, 37 /* MKDIRAT, 5.15 */,
		35 /* RENAMEAT, 5.11 */, 36 /* UNLINKAT, 5.11 */, IORING_OP_OPENAT,
	};

	if (argc != 4) {
		fprintf(stderr, "usage: uringname KNOBFILE DIR ROUNDS\n");
		return 2;
	}
	knob = open(argv[1], O_WRONLY);
	if (knob < 0 || chdir(argv[2]))
		die("setup");
	rounds = atoi(argv[3]);
	w = open("f", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (w < 0 || write(w, "data\n", 5) != 5 || close(w))
		die("f");
	unlink("p");
	if (mkfifo("p", 0644))
		die("mkfifo");
	for (i = 0; i + 2 < 4064; i += 2)
		memcpy(longname + i, "./", 2);
	longname[i++] = '/';
	longname[i++] = 'f';
	longname[i] = '\0';
	setup();
	if (syscall(SYS_statx, AT_FDCWD, "f", 0, STATX_BASIC_STATS, &ref))
		die("statx");
	for (r = 0; r < rounds; r++) {
		snprintf(dir1, sizeof(dir1), "d%d", r);
		snprintf(dir2, sizeof(dir2), "e%d", r);
		/* The answers of the system calls themselves, for the opcodes. */
		want[R_OPEN_F] = 0;
		want[R_OPEN_MISSING] = -ENOENT;
		want[R_OPEN_LONG] = 0;
		want[R_OPEN_MISSING2] = -ENOENT;
		want[R_OPENAT2_F] = 0;
		want[R_STATX_F] = 0;
		want[R_MKDIR] = 0;
		want[R_RENAME] = 0;
		want[R_UNLINK] = 0;
		want[R_FIFO] = 0;
		next_sqe(R_FIFO)->opcode = IORING_OP_OPENAT;
		sqes[(*sq_tail - 1) & *sq_mask].fd = AT_FDCWD;
		sqes[(*sq_tail - 1) & *sq_mask].addr = (uintptr_t)"p";
		sqes[(*sq_tail - 1) & *sq_mask].open_flags = O_RDONLY;
		n = 1;
		for (i = 0; i < R_FIFO; i++) {
			struct io_uring_sqe *s;

			/* mkdirat, renameat and unlinkat go together or not at all. */
			if (!supported[op[i]] || (i >= R_MKDIR && (!supported[37] ||
								   !supported[35] || !supported[36])))
				continue;
			s = next_sqe(i);
			n++;
			s->opcode = op[i];
			s->fd = AT_FDCWD;
			switch (i) {
			case R_OPEN_F:
			case R_OPEN_MISSING:
			case R_OPEN_LONG:
			case R_OPEN_MISSING2:
				s->addr = (uintptr_t)(i == R_OPEN_F ? "f" : i == R_OPEN_MISSING ?
						      "missing" : i == R_OPEN_LONG ? longname : "missing/x");
				s->open_flags = O_RDONLY;
				break;
			case R_OPENAT2_F:
				s->addr = (uintptr_t)"f";
				s->len = sizeof(how);
				s->off = (uintptr_t)&how;
				break;
			case R_STATX_F:
				s->addr = (uintptr_t)"f";
				s->len = STATX_BASIC_STATS;
				s->off = (uintptr_t)&stx;
				break;
			case R_MKDIR:
				s->addr = (uintptr_t)dir1;
				s->len = 0755;
				s->flags = IOSQE_IO_LINK;
				break;
			case R_RENAME:
				s->addr = (uintptr_t)dir1;
				s->len = AT_FDCWD;
				s->addr2 = (uintptr_t)dir2;
				s->flags = IOSQE_IO_LINK;
				break;
			case R_UNLINK:
				s->addr = (uintptr_t)dir2;
				/* unlink_flags, a name 5.10's headers lack */
				s->rw_flags = AT_REMOVEDIR;
				break;
			}
		}
		memset(&stx, 0, sizeof(stx));
		if (syscall(__NR_io_uring_enter, ring, n, 0, 0, NULL, 0) != n)
			die("io_uring_enter");
		/* Names in flight: the knob flips, then the FIFO gets its writer. */
		if (pwrite(knob, r % 2 ? "0" : "1", 1, 0) != 1)
			die("knob");
		w = open("p", O_WRONLY);
		if (w < 0)
			die("p");
		if (pwrite(knob, r % 2 ? "1" : "0", 1, 0) != 1)
			die("knob");
		for (got = 0; got < (unsigned int)n;) {
			unsigned int head = *cq_head;
			struct io_uring_cqe *c;

			if (head == __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE)) {
				if (syscall(__NR_io_uring_enter, ring, 0, 1, IORING_ENTER_GETEVENTS,
					    NULL, 0) < 0)
					die("io_uring_enter");
				continue;
			}
			c = &cqes[head & *cq_mask];
			i = (int)c->user_data;
			requests++;
			if (i >= 0 && i < R_COUNT &&
			    (want[i] == 0 ? c->res < 0 : c->res != want[i])) {
				printf("round %d: %s: %d, expected %ld\n", r, labels[i], c->res,
				       want[i]);
				wrong++;
			}
			if (i == R_STATX_F && c->res == 0 &&
			    (stx.stx_size != ref.stx_size || stx.stx_ino != ref.stx_ino ||
			     stx.stx_mode != ref.stx_mode)) {
				printf("round %d: statx f: size %llu ino %llu, expected %llu %llu\n",
				       r, (unsigned long long)stx.stx_size,
				       (unsigned long long)stx.stx_ino,
				       (unsigned long long)ref.stx_size,
				       (unsigned long long)ref.stx_ino);
				wrong++;
			}
			if (i <= R_OPENAT2_F || i == R_FIFO)
				if (c->res >= 0)
					close(c->res);
			__atomic_store_n(cq_head, head + 1, __ATOMIC_RELEASE);
			got++;
		}
		close(w);
		rmdir(dir1);
		rmdir(dir2);
	}
	if (pwrite(knob, "0", 1, 0) != 1)
		die("knob");
	printf("uringname: requests=%d wrong=%d\n", requests, wrong);
	return wrong ? 1 : 0;
}
