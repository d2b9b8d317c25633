// SPDX-License-Identifier: GPL-2.0
/*
 * evdiff: a seeded, deterministic fsnotify event-stream recorder.
 *
 * usage: evdiff --seed S --ops N --dir D [--fs-marks] [--no-pseudo-watches]
 *               [--out FILE] [--inject-drop K]
 *
 * Performs N seeded-random file operations inside D while inotify,
 * fanotify (notification and permission classes, with and without file
 * handles) and dnotify watch it, and writes every operation and every
 * event it caused, one line each.  Two runs with the same seed on the same
 * kernel, each in a fresh D, must produce byte-identical output; vfsfast's
 * fsnotify knobs are checked by running once with the knob off and once
 * with it on and comparing the two files.
 *
 * What makes the output reproducible:
 *  - one thread performs every operation; after each one, every group's
 *    queue is drained (poll with a zero timeout, then one large read per
 *    readable group) and the events are written under that operation, group
 *    by group in a fixed order, each group's events in arrival order;
 *  - permission events are read by a responder thread, which records them
 *    into its group's buffer before it answers FAN_ALLOW: the operation
 *    that caused them is blocked until then, so they always belong to the
 *    current operation (checked: a mismatch prints a LATE line);
 *  - values that differ between runs are mapped: pids to "self"/"other",
 *    event fds to the path relative to D (pseudo files without their inode
 *    number), fsids, file handles and rename cookies to first-seen ordinals
 *    (s1, h1, c1); raw fd numbers are never printed (file slots, dnotify
 *    directories and watched objects are named instead).
 *
 * Two kernel facts shape the design (see the comments where they matter):
 *  - all eventfds, inotify and fanotify fds share one anonymous inode, so a
 *    watch on an eventfd also sees every read of our own notification fds,
 *    and the responder's FAN_ALLOW write() is a MODIFY of that inode that
 *    races with the operation it unblocks.  Permission marks therefore live
 *    in "permission windows", and while a window is open no watch on the
 *    anonymous inode carries MODIFY.  Other processes' eventfds hit the
 *    same inode: on a shared host, use --no-pseudo-watches;
 *  - a group that reads permission events must not report anything else,
 *    or the responder's reads would decide which events the kernel merges.
 *    Content-class groups carry permission masks only.
 *
 * Output: "init K ..." lines (tree and first watches), "op K ..." lines,
 * each followed by its events ("  in0 ...", "  fan2 ...", "  dn a"), and
 * notes ("  . ...").  Summary on stderr:
 *   evdiff: seed S: N ops, events: inotify I, fanotify F (permission P,
 *   fid X), dnotify D
 * Exit 0 on success, 1 on setup failure, 2 on usage error.
 *
 * --inject-drop K leaves the K-th event out of the output (a test that
 * proves a comparison of two runs can fail).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

/* Newer than some libc headers; the kernel refuses what it lacks. */
#ifndef FAN_REPORT_DIR_FID
#define FAN_REPORT_DIR_FID	0x00000400
#endif
#ifndef FAN_REPORT_NAME
#define FAN_REPORT_NAME		0x00000800
#endif
#ifndef FAN_REPORT_TARGET_FID
#define FAN_REPORT_TARGET_FID	0x00001000
#endif
#ifndef FAN_RENAME
#define FAN_RENAME		0x10000000
#endif
#ifndef FAN_FS_ERROR
#define FAN_FS_ERROR		0x00008000
#endif
#ifndef FAN_PRE_ACCESS
#define FAN_PRE_ACCESS		0x00100000
#endif
#ifndef FAN_MARK_FILESYSTEM
#define FAN_MARK_FILESYSTEM	0x00000100
#endif
#ifndef FAN_EVENT_INFO_TYPE_DFID_NAME
#define FAN_EVENT_INFO_TYPE_DFID_NAME	2
#endif
#ifndef FAN_EVENT_INFO_TYPE_DFID
#define FAN_EVENT_INFO_TYPE_DFID	3
#endif
#ifndef FAN_EVENT_INFO_TYPE_OLD_DFID_NAME
#define FAN_EVENT_INFO_TYPE_OLD_DFID_NAME	10
#endif
#ifndef FAN_EVENT_INFO_TYPE_NEW_DFID_NAME
#define FAN_EVENT_INFO_TYPE_NEW_DFID_NAME	12
#endif
#ifndef IN_MASK_CREATE
#define IN_MASK_CREATE		0x10000000
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE	(1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE		(1 << 1)
#endif

#define MAX_IN		3	/* inotify instances */
#define MAX_FAN		6	/* fanotify groups */
#define NSLOTS		6	/* open file descriptors */
#define NPIPES		2
#define NSOCKS		2
#define NEFDS		2
#define NDN		4	/* dnotify directories */
#define MAX_WDS		256	/* remembered wds per inotify instance */
#define EVBUF		65536
#define MAX_FILE	65536	/* writes stay below this offset */

static const char *prog = "evdiff";

/* ---- seeded PRNG (splitmix64): the whole sequence comes from --seed ---- */

static uint64_t rng;

static uint64_t rnd64(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned int rnd(unsigned int n)
{
	return (unsigned int)(rnd64() % n);
}

static int chance(unsigned int pct)
{
	return rnd(100) < pct;
}

/* ---- growable text buffers ---- */

struct sbuf {
	char *p;
	size_t len, cap;
};

/*
 * The sb_* helpers keep errno: a description may be written between a
 * system call and sb_result().
 */
static void sb_grow(struct sbuf *b, size_t need)
{
	int err = errno;

	if (b->len + need + 1 <= b->cap)
		return;
	while (b->len + need + 1 > b->cap)
		b->cap = b->cap ? b->cap * 2 : 256;
	b->p = realloc(b->p, b->cap);
	if (!b->p) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(1);
	}
	errno = err;
}

static void __attribute__((format(printf, 2, 3)))
sb_printf(struct sbuf *b, const char *fmt, ...)
{
	int err = errno, n;
	va_list ap;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	sb_grow(b, n);
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, n + 1, fmt, ap);
	va_end(ap);
	b->len += n;
	errno = err;
}

static void sb_puts(struct sbuf *b, const char *s)
{
	size_t n = strlen(s);

	sb_grow(b, n);
	memcpy(b->p + b->len, s, n + 1);
	b->len += n;
}

/* Names as put_escaped() writes them: one token, split on ' ' later. */
static void sb_escaped(struct sbuf *b, const char *s)
{
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p; p++) {
		if (*p <= 0x20 || *p >= 0x7f || *p == '\\')
			sb_printf(b, "\\x%02x", *p);
		else
			sb_printf(b, "%c", *p);
	}
}

static const char *errname(int e)
{
	static __thread char buf[16];
	const char *n = strerrorname_np(e);

	if (n)
		return n;
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

/* "= N" or "= ENAME" for a system call's result. */
static void sb_result(struct sbuf *b, long ret)
{
	if (ret < 0)
		sb_printf(b, " = %s", errname(errno));
	else
		sb_printf(b, " = %ld", ret);
}

/* ---- flag names ---- */

struct flagname {
	uint64_t bit;
	const char *name;
};

static const struct flagname in_bits[] = {
	{ IN_ACCESS, "ACCESS" }, { IN_MODIFY, "MODIFY" },
	{ IN_ATTRIB, "ATTRIB" }, { IN_CLOSE_WRITE, "CLOSE_WRITE" },
	{ IN_CLOSE_NOWRITE, "CLOSE_NOWRITE" }, { IN_OPEN, "OPEN" },
	{ IN_MOVED_FROM, "MOVED_FROM" }, { IN_MOVED_TO, "MOVED_TO" },
	{ IN_CREATE, "CREATE" }, { IN_DELETE, "DELETE" },
	{ IN_DELETE_SELF, "DELETE_SELF" }, { IN_MOVE_SELF, "MOVE_SELF" },
	{ IN_UNMOUNT, "UNMOUNT" }, { IN_Q_OVERFLOW, "Q_OVERFLOW" },
	{ IN_IGNORED, "IGNORED" }, { IN_ONLYDIR, "ONLYDIR" },
	{ IN_DONT_FOLLOW, "DONT_FOLLOW" }, { IN_EXCL_UNLINK, "EXCL_UNLINK" },
	{ IN_MASK_CREATE, "MASK_CREATE" }, { IN_MASK_ADD, "MASK_ADD" },
	{ IN_ISDIR, "ISDIR" }, { IN_ONESHOT, "ONESHOT" },
};

static const struct flagname fan_bits[] = {
	{ FAN_ACCESS, "ACCESS" }, { FAN_MODIFY, "MODIFY" },
	{ FAN_ATTRIB, "ATTRIB" }, { FAN_CLOSE_WRITE, "CLOSE_WRITE" },
	{ FAN_CLOSE_NOWRITE, "CLOSE_NOWRITE" }, { FAN_OPEN, "OPEN" },
	{ FAN_MOVED_FROM, "MOVED_FROM" }, { FAN_MOVED_TO, "MOVED_TO" },
	{ FAN_CREATE, "CREATE" }, { FAN_DELETE, "DELETE" },
	{ FAN_DELETE_SELF, "DELETE_SELF" }, { FAN_MOVE_SELF, "MOVE_SELF" },
	{ FAN_OPEN_EXEC, "OPEN_EXEC" }, { FAN_Q_OVERFLOW, "Q_OVERFLOW" },
	{ FAN_FS_ERROR, "FS_ERROR" }, { FAN_OPEN_PERM, "OPEN_PERM" },
	{ FAN_ACCESS_PERM, "ACCESS_PERM" },
	{ FAN_OPEN_EXEC_PERM, "OPEN_EXEC_PERM" },
	{ FAN_PRE_ACCESS, "PRE_ACCESS" }, { FAN_EVENT_ON_CHILD, "ON_CHILD" },
	{ FAN_RENAME, "RENAME" }, { FAN_ONDIR, "ONDIR" },
};

static const struct flagname fan_init_bits[] = {
	{ FAN_CLASS_CONTENT, "CONTENT" }, { FAN_CLASS_PRE_CONTENT, "PRE_CONTENT" },
	{ FAN_REPORT_FID, "REPORT_FID" }, { FAN_REPORT_DIR_FID, "REPORT_DIR_FID" },
	{ FAN_REPORT_NAME, "REPORT_NAME" },
	{ FAN_REPORT_TARGET_FID, "REPORT_TARGET_FID" },
};

static const struct flagname fan_mark_bits[] = {
	{ FAN_MARK_DONT_FOLLOW, "DONT_FOLLOW" }, { FAN_MARK_ONLYDIR, "ONLYDIR" },
	{ FAN_MARK_MOUNT, "MOUNT" }, { FAN_MARK_FILESYSTEM, "FILESYSTEM" },
	{ FAN_MARK_IGNORED_MASK, "IGNORED_MASK" },
	{ FAN_MARK_IGNORED_SURV_MODIFY, "IGNORED_SURV_MODIFY" },
};

static const struct flagname open_bits[] = {
	{ O_CREAT, "CREAT" }, { O_EXCL, "EXCL" }, { O_TRUNC, "TRUNC" },
	{ O_APPEND, "APPEND" }, { O_NOFOLLOW, "NOFOLLOW" },
	{ O_DIRECTORY, "DIRECTORY" }, { O_NOATIME, "NOATIME" },
};

static const struct flagname dn_bits[] = {
	{ DN_ACCESS, "ACCESS" }, { DN_MODIFY, "MODIFY" }, { DN_CREATE, "CREATE" },
	{ DN_DELETE, "DELETE" }, { DN_RENAME, "RENAME" }, { DN_ATTRIB, "ATTRIB" },
	{ DN_MULTISHOT, "MULTISHOT" },
};

static void sb_flags(struct sbuf *b, uint64_t v, const struct flagname *t,
		     size_t n, const char *none)
{
	int first = 1;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!(v & t[i].bit))
			continue;
		sb_printf(b, "%s%s", first ? "" : "|", t[i].name);
		v &= ~t[i].bit;
		first = 0;
	}
	if (v)
		sb_printf(b, "%s0x%llx", first ? "" : "|", (unsigned long long)v);
	else if (first)
		sb_puts(b, none);
}

#define SB_FLAGS(b, v, t, none) sb_flags(b, v, t, ARRAY_SIZE(t), none)

/* ---- first-seen ordinals for values that differ between runs ---- */

struct ordmap {
	struct ordent {
		unsigned char *key;
		size_t len;
		uint64_t hash;
		unsigned long ord;
	} *tab;
	size_t cap, used;
};

static uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *c = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n--)
		h = (h ^ *c++) * 0x100000001b3ULL;
	return h;
}

static unsigned long ordinal(struct ordmap *m, const void *key, size_t len)
{
	uint64_t h = hash_bytes(key, len);
	size_t i;

	if ((m->used + 1) * 2 > m->cap) {
		struct ordent *old = m->tab;
		size_t oldcap = m->cap, j;

		m->cap = m->cap ? m->cap * 2 : 256;
		m->tab = calloc(m->cap, sizeof(*m->tab));
		if (!m->tab) {
			fprintf(stderr, "%s: out of memory\n", prog);
			exit(1);
		}
		for (j = 0; j < oldcap; j++) {
			if (!old[j].key)
				continue;
			for (i = old[j].hash & (m->cap - 1); m->tab[i].key;
			     i = (i + 1) & (m->cap - 1))
				;
			m->tab[i] = old[j];
		}
		free(old);
	}
	for (i = h & (m->cap - 1); m->tab[i].key; i = (i + 1) & (m->cap - 1)) {
		if (m->tab[i].hash == h && m->tab[i].len == len &&
		    !memcmp(m->tab[i].key, key, len))
			return m->tab[i].ord;
	}
	m->tab[i].key = malloc(len ? len : 1);
	if (!m->tab[i].key) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(1);
	}
	memcpy(m->tab[i].key, key, len);
	m->tab[i].len = len;
	m->tab[i].hash = h;
	m->tab[i].ord = ++m->used;
	return m->tab[i].ord;
}

static struct ordmap fsid_map, handle_map, cookie_map;

/*
 * The maps are shared with the responder thread.  It only works while the
 * main thread is blocked in a permission check, so this lock never waits;
 * it is there for memory ordering.
 */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- run state ---- */

static const char *dir_arg, *out_arg;
static char droot[PATH_MAX];	/* realpath of D: event fd paths are made relative */
static size_t droot_len;
static int fs_marks, pseudo_watches = 1;
static long nops = 1000, inject_drop;
static uint64_t seed = 1;
static FILE *out;
static pid_t self_pid;
static int dn_sig;
static uid_t my_uid;
static gid_t my_gid;

static long ev_seen;	/* every event, counted before --inject-drop */
static long cnt_in, cnt_fan, cnt_perm, cnt_fid, cnt_dn, cnt_late;

/* The operation being performed; the responder tags its events with it. */
static volatile long cur_op = -1;

struct inot {
	int fd;
	int wds[MAX_WDS];	/* wds returned so far, for removals */
	int nwds;
	int anon_wd;		/* watch on the anonymous inode, or -1 */
	uint32_t anon_mask;	/* its events as last set */
};

struct fang {
	int fd;			/* -1 when fanotify_init refused */
	unsigned int flags;	/* fanotify_init flags */
	int content;		/* permission group: read by the responder */
	int fid;		/* reports file handles */
	int dfid_name;		/* FAN_REPORT_DFID_NAME: may use FAN_RENAME */
	uint64_t anon_mask;	/* events of its mark on the anonymous inode */
	struct sbuf pend;	/* responder's lines: "<op>\t<flags>\t<line>\n" */
};

static struct inot ins[MAX_IN];
static int n_in;
static struct fang fans[MAX_FAN];
static int n_fan;

struct fslot {
	int fd;			/* -1: empty */
	int flags;
	char path[32];
};

static struct fslot slots[NSLOTS];
static int pipes[NPIPES][2];	/* [0] read end, [1] write end, -1: closed */
static int socks[NSOCKS][2];
static int efds[NEFDS];
static int anchor_efd = -1;	/* the anonymous inode, watched through it */

struct dnslot {
	int fd;
	char path[16];
};

static struct dnslot dns[NDN];
static char dn_label[1024][16];	/* si_fd -> directory, by fd number */

static int perm_window;		/* permission marks are in place */
static int stop_pipe[2] = { -1, -1 };

/* ---- the name pool: a few names, so that the operations keep meeting ---- */

static const char *const parents[] = { "", "a/", "b/", "a/c/" };
static const char *const fnames[] = { "f0", "f1", "f2", "f3" };
static const char *const lnames[] = { "l0", "l1" };
static const char *const dirs[] = { "a", "b", "a/c", "b/d", "a/c/e" };
/*
 * Relative and without "..": everything evdiff touches must be inside D
 * (a link can be renamed to the top level), or one run would see what
 * another left behind.
 */
static const char *const link_targets[] = {
	"f0", "f1", "a/f2", "nowhere", "l0", "l1", "a", "c/f3",
};

static void pick_file(char *buf, size_t n)
{
	snprintf(buf, n, "%s%s", parents[rnd(ARRAY_SIZE(parents))],
		 fnames[rnd(ARRAY_SIZE(fnames))]);
}

static void pick_link(char *buf, size_t n)
{
	snprintf(buf, n, "%s%s", parents[rnd(ARRAY_SIZE(parents))],
		 lnames[rnd(ARRAY_SIZE(lnames))]);
}

static void pick_dir(char *buf, size_t n)
{
	snprintf(buf, n, "%s", dirs[rnd(ARRAY_SIZE(dirs))]);
}

/* Mostly files, some directories and links. */
static void pick_any(char *buf, size_t n)
{
	unsigned int r = rnd(10);

	if (r < 7)
		pick_file(buf, n);
	else if (r < 9)
		pick_dir(buf, n);
	else
		pick_link(buf, n);
}

/* ---- event recording ---- */

enum { EV_IN, EV_FAN, EV_DN };
#define EVF_PERM	1
#define EVF_FID		2

/* Writes one line (ending in '\n'); event lines are counted and droppable. */
static void emit(const char *s, size_t n, int event, int kind, int flags)
{
	if (event) {
		if (++ev_seen == inject_drop)
			return;
		if (kind == EV_IN)
			cnt_in++;
		else if (kind == EV_DN)
			cnt_dn++;
		else
			cnt_fan++;
		if (flags & EVF_PERM)
			cnt_perm++;
		if (flags & EVF_FID)
			cnt_fid++;
	}
	fwrite(s, 1, n, out);
}

static void emit_sb(struct sbuf *b, int event, int kind, int flags)
{
	sb_puts(b, "\n");
	emit(b->p, b->len, event, kind, flags);
	b->len = 0;
}

/* Path of an fd relative to D; pseudo files without their inode number. */
static void sb_fdpath(struct sbuf *b, int fd)
{
	char proc[64], path[PATH_MAX + 16];
	ssize_t n;
	char *br;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, path, sizeof(path) - 1);
	if (n < 0) {
		sb_printf(b, "?%s", errname(errno));
		return;
	}
	path[n] = '\0';
	if (!strncmp(path, droot, droot_len) &&
	    (path[droot_len] == '/' || path[droot_len] == '\0' ||
	     path[droot_len] == ' ')) {
		const char *rel = path + droot_len;

		if (*rel == '/')
			rel++;
		if (*rel == '\0' || *rel == ' ')
			sb_puts(b, ".");
		sb_escaped(b, rel);
		return;
	}
	/* "pipe:[1234]", "socket:[1234]": the number differs between runs. */
	br = strstr(path, ":[");
	if (br && (!strncmp(path, "pipe:", 5) || !strncmp(path, "socket:", 7)))
		br[1] = '\0';
	if (path[0] == '/')
		sb_puts(b, "outside:");
	sb_escaped(b, path);
}

static void sb_handle(struct sbuf *b, const struct fanotify_event_info_fid *fid,
		      size_t avail, const char **name)
{
	const struct file_handle *fh = (const void *)fid->handle;
	size_t hlen;

	*name = NULL;
	if (avail < sizeof(*fid) + sizeof(*fh)) {
		sb_puts(b, "short-record");
		return;
	}
	hlen = sizeof(*fh) + fh->handle_bytes;
	if (avail < sizeof(*fid) + hlen) {
		sb_puts(b, "short-handle");
		return;
	}
	sb_printf(b, "s%lu:h%lu", ordinal(&fsid_map, &fid->fsid, sizeof(fid->fsid)),
		  ordinal(&handle_map, fh, hlen));
	if (avail > sizeof(*fid) + hlen)
		*name = (const char *)fid->handle + hlen;
}

/*
 * Formats one fanotify event into b and closes its fd.  Returns EVF_*
 * flags.  Called with the lock held (ordinal maps).
 */
static int format_fan_event(struct sbuf *b, int g,
			    const struct fanotify_event_metadata *m)
{
	const unsigned char *p = (const unsigned char *)m;
	size_t off = m->metadata_len;
	int flags = 0;

	sb_printf(b, "  fan%d ", g);
	SB_FLAGS(b, m->mask, fan_bits, "0");
	if (m->mask & (FAN_OPEN_PERM | FAN_ACCESS_PERM | FAN_OPEN_EXEC_PERM))
		flags |= EVF_PERM;
	if (m->vers != FANOTIFY_METADATA_VERSION)
		sb_printf(b, " vers=%u", m->vers);
	sb_printf(b, " pid=%s", m->pid == self_pid ? "self" : "other");
	if (m->fd >= 0) {
		sb_puts(b, " fd=");
		sb_fdpath(b, m->fd);
		close(m->fd);
	} else if (m->fd != FAN_NOFD) {
		sb_printf(b, " fd=%d", m->fd);
	}
	while (off + sizeof(struct fanotify_event_info_header) <= m->event_len) {
		const struct fanotify_event_info_header *h = (const void *)(p + off);
		const char *name;

		if (h->len < sizeof(*h) || off + h->len > m->event_len) {
			sb_printf(b, " bad-info-len=%u", h->len);
			break;
		}
		switch (h->info_type) {
		case FAN_EVENT_INFO_TYPE_FID:
			sb_puts(b, " fid=");
			break;
		case FAN_EVENT_INFO_TYPE_DFID:
			sb_puts(b, " dfid=");
			break;
		case FAN_EVENT_INFO_TYPE_DFID_NAME:
			sb_puts(b, " dfid_name=");
			break;
		case FAN_EVENT_INFO_TYPE_OLD_DFID_NAME:
			sb_puts(b, " old_dfid_name=");
			break;
		case FAN_EVENT_INFO_TYPE_NEW_DFID_NAME:
			sb_puts(b, " new_dfid_name=");
			break;
		default:
			sb_printf(b, " info%u/%u", h->info_type, h->len);
			off += h->len;
			continue;
		}
		flags |= EVF_FID;
		sb_handle(b, (const void *)h, h->len, &name);
		if (name) {
			sb_puts(b, "/");
			sb_escaped(b, name);
		}
		off += h->len;
	}
	return flags;
}

static void drain_inotify(int i)
{
	static char buf[EVBUF] __attribute__((aligned(8)));
	static struct sbuf b;
	ssize_t len, off;

	len = read(ins[i].fd, buf, sizeof(buf));
	if (len < 0) {
		if (errno != EAGAIN) {
			sb_printf(&b, "  in%d read error %s", i, errname(errno));
			emit_sb(&b, 0, 0, 0);
		}
		return;
	}
	for (off = 0; off < len;) {
		const struct inotify_event *e = (const void *)(buf + off);

		sb_printf(&b, "  in%d wd=%d ", i, e->wd);
		SB_FLAGS(&b, e->mask, in_bits, "0");
		if (e->cookie)
			sb_printf(&b, " cookie=c%lu",
				  ordinal(&cookie_map, &e->cookie, sizeof(e->cookie)));
		if (e->len && e->name[0]) {
			sb_puts(&b, " name=");
			sb_escaped(&b, e->name);
		}
		emit_sb(&b, 1, EV_IN, 0);
		off += sizeof(*e) + e->len;
	}
}

/*
 * One read, then more only while the kernel may have stopped short: a full
 * buffer, or an event whose fd could not be opened (the read fails with
 * that error, or returns what came before it; the event is gone).  Never
 * "until EAGAIN": reading a notification fd is itself an ACCESS of the
 * anonymous inode, which a pseudo watch in the same group reports.
 */
static void drain_fanotify(int g)
{
	static char buf[EVBUF] __attribute__((aligned(8)));
	static struct sbuf b;
	int round;

	for (round = 0; round < 4; round++) {
		const struct fanotify_event_metadata *m;
		ssize_t len = read(fans[g].fd, buf, sizeof(buf));

		if (len < 0) {
			if (errno == EAGAIN)
				return;
			sb_printf(&b, "  fan%d read error %s", g, errname(errno));
			emit_sb(&b, 0, 0, 0);
			continue;
		}
		for (m = (const void *)buf; FAN_EVENT_OK(m, len);
		     m = FAN_EVENT_NEXT(m, len)) {
			int flags = format_fan_event(&b, g, m);

			emit_sb(&b, 1, EV_FAN, flags);
		}
		if (len < EVBUF / 2)
			return;
	}
}

/* The responder's lines for one group, checked against the current op. */
static void drain_pending(int g, long op)
{
	static struct sbuf b;
	struct sbuf *pend = &fans[g].pend;
	char *line, *next, *end;

	if (!pend->len)
		return;
	for (line = pend->p, end = pend->p + pend->len; line < end; line = next) {
		char *tab1 = strchr(line, '\t');
		char *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
		long tag;
		int flags;

		next = strchr(line, '\n') + 1;
		if (!tab2)
			continue;
		tag = strtol(line, NULL, 10);
		flags = atoi(tab1 + 1);
		b.len = 0;
		sb_grow(&b, next - tab2);
		memcpy(b.p, tab2 + 1, next - tab2 - 2);
		b.len = next - tab2 - 2;
		b.p[b.len] = '\0';
		if (tag != op) {
			/* The design says this cannot happen: make it visible. */
			sb_printf(&b, " LATE(op %ld)", tag);
			cnt_late++;
		}
		emit_sb(&b, 1, EV_FAN, flags);
	}
	pend->len = 0;
}

static void drain_dnotify(void)
{
	static const struct timespec zero;
	static struct sbuf b;
	sigset_t set;
	siginfo_t si;
	int i, any = 0;

	for (i = 0; i < NDN; i++)
		any |= dns[i].fd >= 0;
	if (!any)
		return;
	sigemptyset(&set);
	sigaddset(&set, dn_sig);
	while (sigtimedwait(&set, &si, &zero) == dn_sig) {
		const char *label = si.si_fd >= 0 && si.si_fd < (int)ARRAY_SIZE(dn_label) ?
				    dn_label[si.si_fd] : "";

		sb_printf(&b, "  dn %s", label[0] ? label : "?");
		if (si.si_code != POLL_MSG)
			sb_printf(&b, " code=%d", si.si_code);
		emit_sb(&b, 1, EV_DN, 0);
	}
}

/*
 * After every operation: inotify instances, then fanotify groups, then
 * dnotify, always in that order.  Permission groups keep their place among
 * the fanotify groups; their lines were written by the responder.
 */
static void drain(long op)
{
	struct pollfd pfd[MAX_IN + MAX_FAN];
	int fan_at[MAX_FAN];
	int n = 0, i;

	for (i = 0; i < n_in; i++) {
		pfd[n].fd = ins[i].fd;
		pfd[n++].events = POLLIN;
	}
	for (i = 0; i < n_fan; i++) {
		fan_at[i] = -1;
		if (fans[i].fd < 0 || fans[i].content)
			continue;
		fan_at[i] = n;
		pfd[n].fd = fans[i].fd;
		pfd[n++].events = POLLIN;
	}
	if (poll(pfd, n, 0) < 0) {
		fprintf(stderr, "%s: poll: %s\n", prog, strerror(errno));
		exit(1);
	}
	pthread_mutex_lock(&lock);
	for (i = 0; i < n_in; i++)
		if (pfd[i].revents & POLLIN)
			drain_inotify(i);
	for (i = 0; i < n_fan; i++) {
		if (fans[i].content)
			drain_pending(i, op);
		else if (fan_at[i] >= 0 && (pfd[fan_at[i]].revents & POLLIN))
			drain_fanotify(i);
	}
	pthread_mutex_unlock(&lock);
	drain_dnotify();
}

/* ---- the permission responder ---- */

static void *responder(void *arg)
{
	static char buf[EVBUF] __attribute__((aligned(8)));
	struct pollfd pfd[MAX_FAN + 1];
	int gi[MAX_FAN];
	struct sbuf b = { 0 };
	int n = 0, i;

	(void)arg;
	for (i = 0; i < n_fan; i++) {
		if (fans[i].fd < 0 || !fans[i].content)
			continue;
		pfd[n].fd = fans[i].fd;
		pfd[n].events = POLLIN;
		gi[n++] = i;
	}
	pfd[n].fd = stop_pipe[0];
	pfd[n].events = POLLIN;
	for (;;) {
		if (poll(pfd, n + 1, -1) < 0)
			continue;
		if (pfd[n].revents)
			return NULL;
		for (i = 0; i < n; i++) {
			const struct fanotify_event_metadata *m;
			int g = gi[i];
			ssize_t len;

			if (!(pfd[i].revents & POLLIN))
				continue;
			len = read(fans[g].fd, buf, sizeof(buf));
			if (len < 0) {
				if (errno == EAGAIN)
					continue;
				pthread_mutex_lock(&lock);
				sb_printf(&fans[g].pend, "%ld\t0\t  fan%d read error %s\n",
					  cur_op, g, errname(errno));
				pthread_mutex_unlock(&lock);
				continue;
			}
			for (m = (const void *)buf; FAN_EVENT_OK(m, len);
			     m = FAN_EVENT_NEXT(m, len)) {
				struct fanotify_response r = {
					.fd = m->fd, .response = FAN_ALLOW,
				};
				int flags;

				/*
				 * Record (and close the fd) first, answer
				 * last: the operation waits for the answer,
				 * so by the time it returns its events are in
				 * the buffer and it holds no extra reference
				 * to its file.  The kernel matches the answer
				 * by fd number, not by an open fd.
				 */
				pthread_mutex_lock(&lock);
				flags = format_fan_event(&b, g, m);
				sb_printf(&fans[g].pend, "%ld\t%d\t%s\n", cur_op, flags, b.p);
				b.len = 0;
				pthread_mutex_unlock(&lock);
				if (!(flags & EVF_PERM) || r.fd < 0)
					continue;
				if (write(fans[g].fd, &r, sizeof(r)) != sizeof(r)) {
					pthread_mutex_lock(&lock);
					sb_printf(&fans[g].pend,
						  "%ld\t0\t  fan%d response failed %s\n",
						  cur_op, g, errname(errno));
					pthread_mutex_unlock(&lock);
				}
			}
		}
	}
}

/* ---- operations ---- */

static char iobuf[8192];

static void fill_io(size_t n)
{
	size_t i;
	uint64_t v = rnd64();

	for (i = 0; i < n; i++)
		iobuf[i] = 'a' + (char)((v >> (i % 61)) % 26);
}

static const char *slot_name(int s)
{
	static char buf[48];

	snprintf(buf, sizeof(buf), "s%d(%s)", s, slots[s].path);
	return buf;
}

static void op_open(struct sbuf *b, int s)
{
	static const int acc[] = { O_RDONLY, O_WRONLY, O_RDWR, O_RDWR };
	char path[32];
	int flags, fd;

	if (chance(85))
		pick_file(path, sizeof(path));
	else if (chance(60))
		pick_dir(path, sizeof(path));
	else
		pick_link(path, sizeof(path));
	if (chance(4)) {
		flags = O_PATH;
	} else {
		flags = acc[rnd(ARRAY_SIZE(acc))];
		if (chance(50))
			flags |= O_CREAT | (chance(15) ? O_EXCL : 0);
		if (chance(20))
			flags |= O_TRUNC;
		if (chance(15))
			flags |= O_APPEND;
		if (chance(5))
			flags |= O_NOFOLLOW;
		if (chance(5))
			flags |= O_DIRECTORY;
		if (chance(3))
			flags |= O_NOATIME;
	}
	fd = open(path, flags | O_CLOEXEC, 0644);
	sb_printf(b, "open %s ", path);
	if (flags & O_PATH)
		sb_puts(b, "PATH");
	else
		sb_puts(b, (flags & O_ACCMODE) == O_RDONLY ? "RDONLY" :
			   (flags & O_ACCMODE) == O_WRONLY ? "WRONLY" : "RDWR");
	if (flags & ~(O_ACCMODE | O_PATH)) {
		sb_puts(b, "|");
		SB_FLAGS(b, flags & ~(O_ACCMODE | O_PATH), open_bits, "");
	}
	sb_printf(b, " -> s%d", s);
	sb_result(b, fd < 0 ? -1 : 0);
	if (fd >= 0) {
		slots[s].fd = fd;
		slots[s].flags = flags;
		snprintf(slots[s].path, sizeof(slots[s].path), "%s", path);
	}
}

/* MAP_SHARED writes, msync and munmap as one operation: nothing stays mapped. */
static void op_mmap(struct sbuf *b, int s)
{
	struct stat st;
	size_t len, i, n;
	char *p;

	sb_printf(b, "mmap-write %s", slot_name(s));
	if (fstat(slots[s].fd, &st)) {
		sb_result(b, -1);
		return;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
		sb_puts(b, " = skip(not a non-empty file)");
		return;
	}
	len = st.st_size < 262144 ? (size_t)st.st_size : 262144;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, slots[s].fd, 0);
	if (p == MAP_FAILED) {
		sb_result(b, -1);
		return;
	}
	n = 1 + rnd(8);
	for (i = 0; i < n; i++)
		p[rnd(len)] = 'A' + (char)rnd(26);
	sb_printf(b, " len=%zu writes=%zu", len, n);
	if (msync(p, len, chance(50) ? MS_SYNC : MS_ASYNC)) {
		sb_puts(b, " msync");
		sb_result(b, -1);
		munmap(p, len);
		return;
	}
	sb_result(b, munmap(p, len));
}

static void op_fd(struct sbuf *b, int s)
{
	int fd = slots[s].fd;
	unsigned int r = rnd(100);
	long ret;

	if (r < 22) {
		size_t n = 1 + rnd(4096);

		sb_printf(b, "read %s %zu", slot_name(s), n);
		ret = read(fd, iobuf, n);
	} else if (r < 30) {
		size_t n = 1 + rnd(4096);
		off_t off = rnd(MAX_FILE);

		sb_printf(b, "pread %s %zu@%lld", slot_name(s), n, (long long)off);
		ret = pread(fd, iobuf, n, off);
	} else if (r < 50) {
		size_t n = 1 + rnd(512);

		fill_io(n);
		sb_printf(b, "write %s %zu", slot_name(s), n);
		ret = write(fd, iobuf, n);
	} else if (r < 56) {
		size_t n = 1 + rnd(512);
		off_t off = rnd(MAX_FILE - 512);

		fill_io(n);
		sb_printf(b, "pwrite %s %zu@%lld", slot_name(s), n, (long long)off);
		ret = pwrite(fd, iobuf, n, off);
	} else if (r < 61) {
		off_t len = rnd(16384);

		sb_printf(b, "ftruncate %s %lld", slot_name(s), (long long)len);
		ret = ftruncate(fd, len);
	} else if (r < 64) {
		mode_t mode = chance(50) ? 0644 : 0600;

		sb_printf(b, "fchmod %s %o", slot_name(s), mode);
		ret = fchmod(fd, mode);
	} else if (r < 66) {
		sb_printf(b, "fchown %s self", slot_name(s));
		ret = fchown(fd, my_uid, my_gid);
	} else if (r < 68) {
		sb_printf(b, "futimens %s now", slot_name(s));
		ret = futimens(fd, NULL);
	} else if (r < 70) {
		sb_printf(b, "fsetxattr %s trusted.evdiff", slot_name(s));
		ret = fsetxattr(fd, "trusted.evdiff", "v", 1, 0);
	} else if (r < 73) {
		off_t off = rnd(16384), len = 1 + rnd(8192);

		sb_printf(b, "fallocate %s %lld@%lld", slot_name(s), (long long)len,
			  (long long)off);
		ret = fallocate(fd, chance(30) ? FALLOC_FL_KEEP_SIZE : 0, off, len);
	} else if (r < 78) {
		op_mmap(b, s);
		return;
	} else {
		sb_printf(b, "close %s", slot_name(s));
		ret = close(fd);
		slots[s].fd = -1;
	}
	sb_result(b, ret);
}

static void op_path(struct sbuf *b)
{
	char p1[32], p2[32];
	unsigned int r = rnd(100);
	long ret;

	if (r < 14) {
		static const unsigned int rflags[] = {
			0, 0, 0, 0, 0, 0, RENAME_NOREPLACE, RENAME_EXCHANGE,
			RENAME_EXCHANGE,
		};
		unsigned int fl = rflags[rnd(ARRAY_SIZE(rflags))];

		r = rnd(10);
		if (r < 7) {
			pick_file(p1, sizeof(p1));
			pick_file(p2, sizeof(p2));
		} else if (r < 9) {
			pick_dir(p1, sizeof(p1));
			pick_dir(p2, sizeof(p2));
		} else {
			pick_any(p1, sizeof(p1));
			pick_any(p2, sizeof(p2));
		}
		sb_printf(b, "rename%s %s -> %s",
			  fl == RENAME_NOREPLACE ? "(NOREPLACE)" :
			  fl == RENAME_EXCHANGE ? "(EXCHANGE)" : "", p1, p2);
		ret = syscall(SYS_renameat2, AT_FDCWD, p1, AT_FDCWD, p2, fl);
	} else if (r < 20) {
		pick_file(p1, sizeof(p1));
		if (chance(80))
			pick_file(p2, sizeof(p2));
		else
			pick_link(p2, sizeof(p2));
		sb_printf(b, "link %s -> %s", p1, p2);
		ret = link(p1, p2);
	} else if (r < 25) {
		const char *t = link_targets[rnd(ARRAY_SIZE(link_targets))];

		pick_link(p1, sizeof(p1));
		sb_printf(b, "symlink %s -> %s", p1, t);
		ret = symlink(t, p1);
	} else if (r < 37) {
		/* Sometimes anything: a directory that became a file. */
		r = rnd(10);
		if (r < 8)
			pick_file(p1, sizeof(p1));
		else if (r < 9)
			pick_link(p1, sizeof(p1));
		else
			pick_any(p1, sizeof(p1));
		sb_printf(b, "unlink %s", p1);
		ret = unlink(p1);
	} else if (r < 43) {
		mode_t mode = chance(50) ? 0755 : 0644;

		pick_any(p1, sizeof(p1));
		sb_printf(b, "chmod %s %o", p1, mode);
		ret = chmod(p1, mode);
	} else if (r < 47) {
		int nofollow = chance(30);

		pick_any(p1, sizeof(p1));
		sb_printf(b, "%schown %s self", nofollow ? "l" : "", p1);
		ret = fchownat(AT_FDCWD, p1, my_uid, my_gid,
			       nofollow ? AT_SYMLINK_NOFOLLOW : 0);
	} else if (r < 52) {
		int nofollow = chance(20);
		struct timespec ts[2] = {
			{ .tv_sec = 1000000 + rnd(1000) }, { .tv_sec = 2000000 },
		};

		pick_any(p1, sizeof(p1));
		sb_printf(b, "utimens%s %s %lld", nofollow ? "(NOFOLLOW)" : "", p1,
			  (long long)ts[0].tv_sec);
		ret = utimensat(AT_FDCWD, p1, ts, nofollow ? AT_SYMLINK_NOFOLLOW : 0);
	} else if (r < 57) {
		int fl = chance(20) ? XATTR_CREATE : chance(20) ? XATTR_REPLACE : 0;

		pick_any(p1, sizeof(p1));
		if (chance(25)) {
			sb_printf(b, "removexattr %s trusted.evdiff", p1);
			ret = removexattr(p1, "trusted.evdiff");
		} else {
			sb_printf(b, "setxattr %s trusted.evdiff%s", p1,
				  fl == XATTR_CREATE ? " CREATE" :
				  fl == XATTR_REPLACE ? " REPLACE" : "");
			ret = setxattr(p1, "trusted.evdiff", "x", 1, fl);
		}
	} else if (r < 69) {
		pick_dir(p1, sizeof(p1));
		sb_printf(b, "mkdir %s", p1);
		ret = mkdir(p1, 0755);
	} else if (r < 74) {
		pick_dir(p1, sizeof(p1));
		sb_printf(b, "rmdir %s", p1);
		ret = rmdir(p1);
	} else if (r < 82) {
		off_t len = rnd(16384);

		pick_file(p1, sizeof(p1));
		sb_printf(b, "truncate %s %lld", p1, (long long)len);
		ret = truncate(p1, len);
	} else if (r < 90) {
		/* open, getdents, close: ACCESS and CLOSE on a directory */
		static char dbuf[32768] __attribute__((aligned(8)));
		long n, entries = 0, pos;
		int fd;

		if (chance(25))
			snprintf(p1, sizeof(p1), ".");
		else
			pick_dir(p1, sizeof(p1));
		sb_printf(b, "listdir %s", p1);
		fd = open(p1, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			sb_result(b, -1);
			return;
		}
		/* The count, not the order: ext4's hash order differs. */
		while ((n = syscall(SYS_getdents64, fd, dbuf, sizeof(dbuf))) > 0) {
			for (pos = 0; pos < n;
			     pos += ((struct dirent64 *)(dbuf + pos))->d_reclen)
				entries++;
		}
		if (n < 0)
			sb_puts(b, " getdents");
		ret = n < 0 ? -1 : entries;
		if (n < 0)
			sb_result(b, ret);
		close(fd);
		if (n < 0)
			return;
	} else {
		/* open and close at once: a file nobody keeps */
		int fl = chance(50) ? O_RDONLY : O_WRONLY | O_CREAT;
		int fd;

		pick_file(p1, sizeof(p1));
		sb_printf(b, "touch %s %s", p1, fl == O_RDONLY ? "RDONLY" : "WRONLY|CREAT");
		fd = open(p1, fl | O_CLOEXEC, 0644);
		ret = fd < 0 ? -1 : 0;
		if (fd >= 0)
			close(fd);
	}
	sb_result(b, ret);
}

/* Nonblocking reads and writes of pipes, socket pairs and eventfds. */
static void op_pseudo(struct sbuf *b)
{
	unsigned int r = rnd(3), k, e;
	long ret;

	if (r == 0) {
		k = rnd(NPIPES);
		if (pipes[k][0] < 0 && pipes[k][1] < 0) {
			sb_printf(b, "pipe p%u", k);
			ret = pipe2(pipes[k], O_NONBLOCK | O_CLOEXEC);
			if (ret)
				pipes[k][0] = pipes[k][1] = -1;
		} else if ((r = rnd(10)) < 4) {
			size_t n = 1 + rnd(256);

			fill_io(n);
			sb_printf(b, "write p%u %zu", k, n);
			ret = write(pipes[k][1], iobuf, n);
		} else if (r < 8) {
			size_t n = 1 + rnd(512);

			sb_printf(b, "read p%u %zu", k, n);
			ret = read(pipes[k][0], iobuf, n);
		} else {
			e = r == 8 ? 0 : 1;
			sb_printf(b, "close p%u.%s", k, e ? "w" : "r");
			ret = close(pipes[k][e]);
			pipes[k][e] = -1;
		}
	} else if (r == 1) {
		k = rnd(NSOCKS);
		if (socks[k][0] < 0 && socks[k][1] < 0) {
			sb_printf(b, "socketpair u%u", k);
			ret = socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
					 0, socks[k]);
			if (ret)
				socks[k][0] = socks[k][1] = -1;
		} else if ((r = rnd(10)) < 4) {
			size_t n = 1 + rnd(256);

			e = rnd(2);
			fill_io(n);
			sb_printf(b, "write u%u.%u %zu", k, e, n);
			ret = write(socks[k][e], iobuf, n);
		} else if (r < 9) {
			size_t n = 1 + rnd(512);

			e = rnd(2);
			sb_printf(b, "read u%u.%u %zu", k, e, n);
			ret = read(socks[k][e], iobuf, n);
		} else {
			e = rnd(2);
			sb_printf(b, "close u%u.%u", k, e);
			ret = close(socks[k][e]);
			socks[k][e] = -1;
		}
	} else {
		k = rnd(NEFDS);
		if (efds[k] < 0) {
			sb_printf(b, "eventfd e%u", k);
			ret = efds[k] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
			ret = ret < 0 ? -1 : 0;
		} else if ((r = rnd(10)) < 5) {
			uint64_t v = 1 + rnd(100);

			sb_printf(b, "write e%u %llu", k, (unsigned long long)v);
			ret = write(efds[k], &v, sizeof(v));
		} else if (r < 9) {
			uint64_t v;

			sb_printf(b, "read e%u", k);
			ret = read(efds[k], &v, sizeof(v));
			if (ret == sizeof(v))
				sb_printf(b, " -> %llu", (unsigned long long)v);
		} else {
			sb_printf(b, "close e%u", k);
			ret = close(efds[k]);
			efds[k] = -1;
		}
	}
	sb_result(b, ret);
}

/* ---- watches ---- */

enum tkind { T_PATH, T_DIR, T_PIPE, T_SOCK, T_ANON };

struct target {
	enum tkind kind;
	char path[48];		/* what the system call is given */
	char label[48];		/* what the output says */
};

/*
 * A watch target: D, a directory, a file or link, or a pseudo file through
 * /proc/self/fd/N (the inode of a pipe, a socket, or the anonymous inode of
 * every eventfd).  Returns 0 when the pseudo file it drew is closed.
 */
static int pick_target(struct target *t, int pseudo_ok)
{
	unsigned int r = rnd(100);
	int fd = -1, k;

	if (r < 15) {
		t->kind = T_DIR;
		snprintf(t->path, sizeof(t->path), ".");
	} else if (r < 40) {
		t->kind = T_DIR;
		pick_dir(t->path, sizeof(t->path));
	} else if (r < 70 || !pseudo_ok) {
		t->kind = T_PATH;
		if (chance(85))
			pick_file(t->path, sizeof(t->path));
		else
			pick_link(t->path, sizeof(t->path));
	} else if (r < 80 || !pseudo_watches) {
		k = rnd(NPIPES);
		t->kind = T_PIPE;
		fd = pipes[k][rnd(2)];
		if (fd < 0)
			fd = pipes[k][0] >= 0 ? pipes[k][0] : pipes[k][1];
		snprintf(t->label, sizeof(t->label), "pipe:p%d", k);
	} else if (r < 90) {
		unsigned int e = rnd(2);

		k = rnd(NSOCKS);
		t->kind = T_SOCK;
		fd = socks[k][e];
		snprintf(t->label, sizeof(t->label), "socket:u%d.%u", k, e);
	} else {
		t->kind = T_ANON;
		fd = anchor_efd;
		snprintf(t->label, sizeof(t->label), "anon_inode");
	}
	if (t->kind == T_PATH || t->kind == T_DIR) {
		snprintf(t->label, sizeof(t->label), "%s", t->path);
		return 1;
	}
	if (fd < 0)
		return 0;
	snprintf(t->path, sizeof(t->path), "/proc/self/fd/%d", fd);
	return 1;
}

static const char *anon_path(void)
{
	static char buf[48];

	snprintf(buf, sizeof(buf), "/proc/self/fd/%d", anchor_efd);
	return buf;
}

static void inotify_add(struct sbuf *b, int i, const struct target *t)
{
	uint32_t mask = 0, flags = 0;
	int wd;

	if (chance(20)) {
		mask = IN_ALL_EVENTS;
	} else {
		while (!mask)
			mask = (uint32_t)rnd64() & IN_ALL_EVENTS;
	}
	if (t->kind == T_ANON) {
		/* No ONESHOT/MASK_ADD: the window rules track this mask. */
		if (perm_window)
			mask &= ~IN_MODIFY;
		if (!mask)
			mask = IN_ACCESS;
	} else {
		if (chance(8))
			flags |= IN_ONESHOT;
		if (chance(15))
			flags |= IN_EXCL_UNLINK;
		if (chance(6))
			flags |= IN_ONLYDIR;
		if (chance(t->kind == T_PATH ? 20 : 3))
			flags |= IN_DONT_FOLLOW;
		if (chance(10))
			flags |= IN_MASK_ADD;
		if (chance(4))
			flags |= IN_MASK_CREATE;
	}
	sb_printf(b, "inotify-add in%d %s ", i, t->label);
	SB_FLAGS(b, mask | flags, in_bits, "0");
	wd = inotify_add_watch(ins[i].fd, t->path, mask | flags);
	if (wd < 0) {
		sb_result(b, -1);
		return;
	}
	sb_printf(b, " = wd %d", wd);
	if (ins[i].nwds < MAX_WDS)
		ins[i].wds[ins[i].nwds++] = wd;
	if (t->kind == T_ANON) {
		ins[i].anon_wd = wd;
		ins[i].anon_mask = mask;
	}
}

static void inotify_rm(struct sbuf *b, int i)
{
	int wd, k;

	if (!ins[i].nwds) {
		sb_printf(b, "inotify-rm in%d none = skip", i);
		return;
	}
	k = rnd(ins[i].nwds);
	wd = ins[i].wds[k];
	ins[i].wds[k] = ins[i].wds[--ins[i].nwds];
	sb_printf(b, "inotify-rm in%d wd %d", i, wd);
	sb_result(b, inotify_rm_watch(ins[i].fd, wd));
	if (wd == ins[i].anon_wd) {
		ins[i].anon_wd = -1;
		ins[i].anon_mask = 0;
	}
}

/* Events a notification group may ask for, by what it reports. */
static uint64_t fan_notif_mask(const struct fang *f, enum tkind kind, int mount)
{
	static const uint64_t plain[] = {
		FAN_ACCESS, FAN_MODIFY, FAN_CLOSE_WRITE, FAN_CLOSE_NOWRITE, FAN_OPEN,
	};
	static const uint64_t dirent[] = {
		FAN_ATTRIB, FAN_CREATE, FAN_DELETE, FAN_DELETE_SELF, FAN_MOVED_FROM,
		FAN_MOVED_TO, FAN_MOVE_SELF,
	};
	uint64_t mask = 0;
	size_t i;

	while (!mask) {
		for (i = 0; i < ARRAY_SIZE(plain); i++)
			if (chance(45))
				mask |= plain[i];
		/* Mount marks cannot carry directory entry events. */
		if (f->fid && !mount)
			for (i = 0; i < ARRAY_SIZE(dirent); i++)
				if (chance(50))
					mask |= dirent[i];
	}
	if (f->dfid_name && !mount && chance(20))
		mask |= FAN_RENAME;
	if (kind == T_DIR || chance(10))
		mask |= chance(50) ? FAN_ONDIR : 0;
	if (kind == T_DIR && chance(60))
		mask |= FAN_EVENT_ON_CHILD;
	if (chance(2))
		mask |= FAN_OPEN_EXEC;
	return mask;
}

static uint64_t fan_perm_mask(enum tkind kind)
{
	uint64_t mask = 0;

	while (!mask) {
		if (chance(60))
			mask |= FAN_OPEN_PERM;
		if (chance(60))
			mask |= FAN_ACCESS_PERM;
	}
	if (kind == T_DIR && chance(60))
		mask |= FAN_EVENT_ON_CHILD;
	if (kind == T_DIR && chance(30))
		mask |= FAN_ONDIR;
	return mask;
}

/* "fan-mark fan1 add inode|ONLYDIR a/c CREATE|ONDIR" */
static void sb_mark(struct sbuf *b, int g, const char *what, unsigned int flags,
		    uint64_t mask, const char *label)
{
	unsigned int rest = flags & ~(FAN_MARK_ADD | FAN_MARK_REMOVE | FAN_MARK_FLUSH |
				      FAN_MARK_MOUNT | FAN_MARK_FILESYSTEM);

	sb_printf(b, "fan-mark fan%d %s %s", g, what,
		  flags & FAN_MARK_MOUNT ? "mount" :
		  flags & FAN_MARK_FILESYSTEM ? "filesystem" : "inode");
	if (rest) {
		sb_puts(b, "|");
		SB_FLAGS(b, rest, fan_mark_bits, "");
	}
	sb_printf(b, " %s ", label);
	SB_FLAGS(b, mask, fan_bits, "0");
}

/*
 * fanotify_mark add: inode, mount or filesystem mark (the last two on D
 * only, with --fs-marks), sometimes an ignore mask.
 */
static void fan_add(struct sbuf *b, int g, const struct target *t, int perm)
{
	struct fang *f = &fans[g];
	unsigned int flags = FAN_MARK_ADD;
	const char *path = t->path, *label = t->label;
	enum tkind kind = t->kind;
	uint64_t mask;
	int mount = 0;

	if (fs_marks && chance(perm ? 30 : 20)) {
		flags |= chance(50) ? FAN_MARK_MOUNT : FAN_MARK_FILESYSTEM;
		mount = (flags & FAN_MARK_MOUNT) != 0;
		path = ".";
		label = ".";
		kind = T_DIR;
	}
	mask = perm ? fan_perm_mask(kind) : fan_notif_mask(f, kind, mount);
	if (t->kind == T_ANON && !(flags & (FAN_MARK_MOUNT | FAN_MARK_FILESYSTEM))) {
		if (perm_window)
			mask &= ~(uint64_t)FAN_MODIFY;
		if (!(mask & ~(uint64_t)(FAN_ONDIR | FAN_EVENT_ON_CHILD)))
			mask |= FAN_ACCESS;
	} else if (!perm && chance(15)) {
		flags |= FAN_MARK_IGNORED_MASK;
		if (chance(50))
			flags |= FAN_MARK_IGNORED_SURV_MODIFY;
		mask &= ~(uint64_t)(FAN_EVENT_ON_CHILD | FAN_RENAME);
	}
	if (kind == T_DIR && chance(5))
		flags |= FAN_MARK_ONLYDIR;
	if (kind == T_PATH && chance(15))
		flags |= FAN_MARK_DONT_FOLLOW;
	sb_mark(b, g, "add", flags, mask, label);
	if (fanotify_mark(f->fd, flags, mask, AT_FDCWD, path)) {
		sb_result(b, -1);
		return;
	}
	sb_result(b, 0);
	if (t->kind == T_ANON && !(flags & (FAN_MARK_MOUNT | FAN_MARK_FILESYSTEM |
					    FAN_MARK_IGNORED_MASK)))
		f->anon_mask |= mask;
}

static void fan_remove(struct sbuf *b, int g, const struct target *t)
{
	struct fang *f = &fans[g];
	unsigned int flags = FAN_MARK_REMOVE;
	const char *path = t->path, *label = t->label;
	uint64_t mask;

	if (fs_marks && chance(20)) {
		flags |= chance(50) ? FAN_MARK_MOUNT : FAN_MARK_FILESYSTEM;
		path = ".";
		label = ".";
	}
	mask = f->content ? fan_perm_mask(T_DIR) : fan_notif_mask(f, T_DIR, 0);
	if (!f->content && chance(15))
		flags |= FAN_MARK_IGNORED_MASK;
	sb_mark(b, g, "remove", flags, mask, label);
	if (fanotify_mark(f->fd, flags, mask, AT_FDCWD, path)) {
		sb_result(b, -1);
		return;
	}
	sb_result(b, 0);
	if (t->kind == T_ANON && !(flags & (FAN_MARK_MOUNT | FAN_MARK_FILESYSTEM |
					    FAN_MARK_IGNORED_MASK)))
		f->anon_mask &= ~mask;
}

/* dnotify on D or a directory: F_SETSIG to a blocked realtime signal. */
static void dn_op(struct sbuf *b)
{
	int k = rnd(NDN), fd;
	unsigned long mask = 0;

	if (dns[k].fd >= 0 && chance(40)) {
		sb_printf(b, "dnotify-close d%d(%s)", k, dns[k].path);
		sb_result(b, close(dns[k].fd));
		dns[k].fd = -1;
		return;
	}
	while (!(mask & ~DN_MULTISHOT)) {
		mask = rnd64() & (DN_ACCESS | DN_MODIFY | DN_CREATE | DN_DELETE |
				  DN_RENAME | DN_ATTRIB);
		if (chance(85))
			mask |= DN_MULTISHOT;
	}
	if (dns[k].fd < 0) {
		if (chance(30))
			snprintf(dns[k].path, sizeof(dns[k].path), ".");
		else
			pick_dir(dns[k].path, sizeof(dns[k].path));
		sb_printf(b, "dnotify d%d(%s) ", k, dns[k].path);
		SB_FLAGS(b, mask, dn_bits, "0");
		fd = open(dns[k].path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			sb_puts(b, " open");
			sb_result(b, -1);
			return;
		}
		if (fd >= (int)ARRAY_SIZE(dn_label)) {
			close(fd);
			sb_puts(b, " = skip(fd too high)");
			return;
		}
		if (fcntl(fd, F_SETSIG, dn_sig)) {
			sb_puts(b, " F_SETSIG");
			sb_result(b, -1);
			close(fd);
			return;
		}
		dns[k].fd = fd;
		snprintf(dn_label[fd], sizeof(dn_label[fd]), "%s", dns[k].path);
	} else {
		sb_printf(b, "dnotify d%d(%s) ", k, dns[k].path);
		SB_FLAGS(b, mask, dn_bits, "0");
	}
	sb_result(b, fcntl(dns[k].fd, F_NOTIFY, mask));
}

/*
 * Permission windows.  Opening one first takes MODIFY off every watch on
 * the anonymous inode: the responder's FAN_ALLOW write() is a MODIFY of
 * that inode, queued after the blocked operation has been woken, so its
 * place among that operation's events would be a race.  Closing one
 * flushes the permission marks.  Notes go to b, one line each.
 */
static void perm_open(struct sbuf *b)
{
	struct target t;
	int i, g, n;

	perm_window = 1;
	for (i = 0; i < n_in; i++) {
		struct inot *in = &ins[i];
		uint32_t mask = in->anon_mask & ~IN_MODIFY;

		if (in->anon_wd < 0 || !(in->anon_mask & IN_MODIFY))
			continue;
		if (mask) {
			sb_printf(b, "\n  . in%d anon_inode drop MODIFY", i);
			sb_result(b, inotify_add_watch(in->fd, anon_path(), mask));
			in->anon_mask = mask;
		} else {
			sb_printf(b, "\n  . in%d anon_inode rm wd %d", i, in->anon_wd);
			sb_result(b, inotify_rm_watch(in->fd, in->anon_wd));
			in->anon_wd = -1;
			in->anon_mask = 0;
		}
	}
	for (g = 0; g < n_fan; g++) {
		struct fang *f = &fans[g];

		if (f->fd < 0 || !(f->anon_mask & FAN_MODIFY))
			continue;
		sb_printf(b, "\n  . fan%d anon_inode drop MODIFY", g);
		sb_result(b, fanotify_mark(f->fd, FAN_MARK_REMOVE, FAN_MODIFY,
					   AT_FDCWD, anon_path()));
		f->anon_mask &= ~(uint64_t)FAN_MODIFY;
	}
	for (g = 0; g < n_fan; g++) {
		if (fans[g].fd < 0 || !fans[g].content)
			continue;
		for (n = 1 + rnd(3); n > 0; n--) {
			/* No permission marks on sockets or the anonymous inode. */
			int open;

			do
				open = pick_target(&t, 1);
			while (t.kind == T_SOCK || t.kind == T_ANON);
			sb_puts(b, "\n  . ");
			if (!open)
				sb_printf(b, "fan-mark fan%d add %s = skip(closed)", g, t.label);
			else
				fan_add(b, g, &t, 1);
		}
	}
}

static void perm_close(struct sbuf *b)
{
	static const unsigned int kinds[] = {
		0, FAN_MARK_MOUNT, FAN_MARK_FILESYSTEM,
	};
	int g;
	size_t k;

	perm_window = 0;
	for (g = 0; g < n_fan; g++) {
		if (fans[g].fd < 0 || !fans[g].content)
			continue;
		for (k = 0; k < (fs_marks ? ARRAY_SIZE(kinds) : 1); k++) {
			sb_printf(b, "\n  . fan-mark fan%d flush %s", g,
				  kinds[k] == FAN_MARK_MOUNT ? "mount" :
				  kinds[k] == FAN_MARK_FILESYSTEM ? "filesystem" : "inode");
			sb_result(b, fanotify_mark(fans[g].fd, FAN_MARK_FLUSH | kinds[k],
						   0, AT_FDCWD, "."));
		}
	}
}

static void op_watch(struct sbuf *b)
{
	unsigned int r = rnd(100);
	struct target t;
	int g;

	if (r < 30) {
		int i = rnd(n_in);

		if (!pick_target(&t, 1)) {
			sb_printf(b, "inotify-add in%d %s = skip(closed)", i, t.label);
			return;
		}
		inotify_add(b, i, &t);
	} else if (r < 45) {
		inotify_rm(b, rnd(n_in));
	} else if (r < 85) {
		g = rnd(n_fan);
		if (fans[g].fd < 0) {
			sb_printf(b, "fan-mark fan%d = skip(no group)", g);
			return;
		}
		/* Permission marks only inside a window, never on pseudo files
		 * other than pipes. */
		if (fans[g].content && !perm_window) {
			sb_printf(b, "fan-mark fan%d = skip(window closed)", g);
			return;
		}
		if (!pick_target(&t, 1) ||
		    (fans[g].content && (t.kind == T_SOCK || t.kind == T_ANON))) {
			sb_printf(b, "fan-mark fan%d %s = skip(%s)", g, t.label,
				  fans[g].content ? "not for permission" : "closed");
			return;
		}
		if (r < 72)
			fan_add(b, g, &t, fans[g].content);
		else
			fan_remove(b, g, &t);
	} else {
		dn_op(b);
	}
}

/* One operation of the sequence, described into b. */
static void do_op(struct sbuf *b)
{
	unsigned int r = rnd(1000);
	int s;

	if (r < 4) {
		sb_printf(b, "perm-window %s", perm_window ? "close" : "open");
		if (perm_window)
			perm_close(b);
		else
			perm_open(b);
	} else if (r < 35) {
		op_watch(b);
	} else if (r < 380) {
		s = rnd(NSLOTS);
		if (slots[s].fd < 0)
			op_open(b, s);
		else
			op_fd(b, s);
	} else if (r < 850) {
		op_path(b);
	} else {
		op_pseudo(b);
	}
}

/* ---- setup ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s --seed S --ops N --dir D [--fs-marks] [--no-pseudo-watches]\n"
		"              [--out FILE] [--inject-drop K]\n"
		"Performs N seeded-random file operations in D under inotify, fanotify\n"
		"and dnotify watches and writes every operation and event, normalized so\n"
		"that two runs with the same seed on the same kernel are byte-identical.\n"
		"  --seed S              PRNG seed (default 1)\n"
		"  --ops N               operations after setup (default 1000)\n"
		"  --dir D               an empty directory to work in\n"
		"  --fs-marks            also fanotify mount and filesystem marks on D\n"
		"                        (D must be a mount point used by nothing else)\n"
		"  --no-pseudo-watches   no watches on sockets and eventfds (pipes stay)\n"
		"  --out FILE            output file (default stdout)\n"
		"  --inject-drop K       leave out the K-th event (tests the comparison)\n"
		"Summary on stderr: evdiff: seed S: N ops, events: inotify I, fanotify F\n"
		"(permission P, fid X), dnotify D\n", prog);
}

static int parse_num(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	if (!*s || *s == '-')
		return -1;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -1 : 0;
}

static void parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "ops", required_argument, NULL, 'n' },
		{ "dir", required_argument, NULL, 'd' },
		{ "out", required_argument, NULL, 'o' },
		{ "fs-marks", no_argument, NULL, 'F' },
		{ "no-pseudo-watches", no_argument, NULL, 'P' },
		{ "inject-drop", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (parse_num(optarg, &seed))
				goto bad;
			break;
		case 'n':
			if (parse_num(optarg, &v) || v > 1000000000)
				goto bad;
			nops = (long)v;
			break;
		case 'I':
			if (parse_num(optarg, &v) || !v || v > LONG_MAX)
				goto bad;
			inject_drop = (long)v;
			break;
		case 'd':
			dir_arg = optarg;
			break;
		case 'o':
			out_arg = optarg;
			break;
		case 'F':
			fs_marks = 1;
			break;
		case 'P':
			pseudo_watches = 0;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind != argc || !dir_arg) {
		fprintf(stderr, "%s: %s\n", prog, optind != argc ?
			"unexpected argument" : "--dir is required");
		usage(stderr);
		exit(2);
	}
	return;
bad:
	fprintf(stderr, "%s: bad number for --%s: '%s'\n", prog,
		c == 's' ? "seed" : c == 'n' ? "ops" : "inject-drop", optarg);
	exit(2);
}

static void init_line(struct sbuf *b, long k)
{
	b->len = 0;
	sb_printf(b, "init %ld ", k);
}

/* fanotify_init; a refusal is a line of output, not an error. */
static void fan_init(struct sbuf *b, unsigned int flags)
{
	struct fang *f = &fans[n_fan];

	f->flags = flags;
	f->content = (flags & FAN_CLASS_CONTENT) != 0;
	f->fid = (flags & (FAN_REPORT_FID | FAN_REPORT_DIR_FID)) != 0;
	f->dfid_name = (flags & FAN_REPORT_NAME) != 0;
	sb_printf(b, "fanotify-init fan%d ", n_fan);
	SB_FLAGS(b, flags, fan_init_bits, "NOTIF");
	f->fd = fanotify_init(flags | FAN_CLOEXEC | FAN_NONBLOCK,
			      O_RDONLY | O_NONBLOCK | O_LARGEFILE | O_CLOEXEC);
	sb_result(b, f->fd < 0 ? -1 : 0);
	n_fan++;
}

static int setup(struct sbuf *b, pthread_t *thr)
{
	static const char *const tree_dirs[] = { "a", "b", "a/c", "b/d" };
	static const char *const tree_files[] = {
		"f0", "f1", "a/f1", "a/f2", "b/f2", "b/f3", "a/c/f0", "a/c/f3",
	};
	long k = 0;
	size_t i;
	int g, n, fd;

	for (i = 0; i < NSLOTS; i++)
		slots[i].fd = -1;
	for (i = 0; i < NPIPES; i++)
		pipes[i][0] = pipes[i][1] = -1;
	for (i = 0; i < NSOCKS; i++)
		socks[i][0] = socks[i][1] = -1;
	for (i = 0; i < NEFDS; i++)
		efds[i] = -1;
	for (i = 0; i < NDN; i++)
		dns[i].fd = -1;

	/* The tree, before anything watches. */
	for (i = 0; i < ARRAY_SIZE(tree_dirs); i++) {
		init_line(b, k++);
		sb_printf(b, "mkdir %s", tree_dirs[i]);
		sb_result(b, mkdir(tree_dirs[i], 0755));
		emit_sb(b, 0, 0, 0);
	}
	for (i = 0; i < ARRAY_SIZE(tree_files); i++) {
		init_line(b, k++);
		sb_printf(b, "create %s 100", tree_files[i]);
		fd = open(tree_files[i], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, iobuf, 100) != 100 || close(fd)) {
			fprintf(stderr, "%s: %s/%s: %s\n", prog, dir_arg, tree_files[i],
				strerror(errno));
			return -1;
		}
		sb_result(b, 0);
		emit_sb(b, 0, 0, 0);
	}
	init_line(b, k++);
	sb_puts(b, "symlink l0 -> f0");
	sb_result(b, symlink("f0", "l0"));
	emit_sb(b, 0, 0, 0);
	init_line(b, k++);
	sb_puts(b, "symlink a/l1 -> f1");
	sb_result(b, symlink("f1", "a/l1"));
	emit_sb(b, 0, 0, 0);

	/* Groups: inotify instances, then fanotify, each kind present. */
	n_in = 2 + rnd(MAX_IN - 1);
	for (i = 0; i < (size_t)n_in; i++) {
		ins[i].fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (ins[i].fd < 0) {
			fprintf(stderr, "%s: inotify_init1: %s\n", prog, strerror(errno));
			return -1;
		}
		ins[i].anon_wd = -1;
	}
	init_line(b, k++);
	fan_init(b, FAN_CLASS_NOTIF);
	emit_sb(b, 0, 0, 0);
	init_line(b, k++);
	fan_init(b, FAN_CLASS_NOTIF | FAN_REPORT_FID);
	emit_sb(b, 0, 0, 0);
	init_line(b, k++);
	fan_init(b, FAN_CLASS_NOTIF | FAN_REPORT_DIR_FID | FAN_REPORT_NAME |
		 (chance(50) ? FAN_REPORT_FID : 0));
	emit_sb(b, 0, 0, 0);
	init_line(b, k++);
	fan_init(b, FAN_CLASS_CONTENT);
	emit_sb(b, 0, 0, 0);
	for (n = rnd(3); n > 0; n--) {
		static const unsigned int extra[] = {
			FAN_CLASS_NOTIF, FAN_CLASS_CONTENT,
			FAN_CLASS_CONTENT | FAN_REPORT_FID,
			FAN_CLASS_NOTIF | FAN_REPORT_DIR_FID,
			FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_REPORT_DIR_FID |
				FAN_REPORT_NAME | FAN_REPORT_TARGET_FID,
		};

		init_line(b, k++);
		fan_init(b, extra[rnd(ARRAY_SIZE(extra))]);
		emit_sb(b, 0, 0, 0);
	}

	if (pseudo_watches) {
		/* Never read or written: only a name for the anonymous inode. */
		anchor_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (anchor_efd < 0) {
			fprintf(stderr, "%s: eventfd: %s\n", prog, strerror(errno));
			return -1;
		}
	}
	if (pipe2(stop_pipe, O_CLOEXEC)) {
		fprintf(stderr, "%s: pipe: %s\n", prog, strerror(errno));
		return -1;
	}
	/* Its set of groups is final now. */
	if (pthread_create(thr, NULL, responder, NULL)) {
		fprintf(stderr, "%s: pthread_create failed\n", prog);
		return -1;
	}

	/* First watches, then the sequence adds and removes more. */
	for (i = 0; i < (size_t)n_in; i++) {
		for (n = 2 + rnd(3); n > 0; n--) {
			struct target t;

			init_line(b, k++);
			if (pick_target(&t, 0))
				inotify_add(b, i, &t);
			emit_sb(b, 0, 0, 0);
			drain(-1);
		}
	}
	for (g = 0; g < n_fan; g++) {
		if (fans[g].fd < 0 || fans[g].content)
			continue;
		for (n = 2 + rnd(3); n > 0; n--) {
			struct target t;

			init_line(b, k++);
			if (pick_target(&t, 0))
				fan_add(b, g, &t, 0);
			emit_sb(b, 0, 0, 0);
			drain(-1);
		}
	}
	for (n = 1 + rnd(2); n > 0; n--) {
		init_line(b, k++);
		dn_op(b);
		emit_sb(b, 0, 0, 0);
		drain(-1);
	}
	/* Some runs start inside a permission window. */
	if (chance(60)) {
		init_line(b, k++);
		sb_puts(b, "perm-window open");
		perm_open(b);
		emit_sb(b, 0, 0, 0);
		drain(-1);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static char outbuf[1 << 20];
	struct sbuf b = { 0 };
	pthread_t thr;
	sigset_t set;
	long op;
	int i;

	parse_args(argc, argv);
	rng = seed;
	self_pid = getpid();
	my_uid = getuid();
	my_gid = getgid();
	dn_sig = SIGRTMIN + 1;
	signal(SIGPIPE, SIG_IGN);
	/* Blocked in every thread: dnotify's signals wait for sigtimedwait. */
	sigemptyset(&set);
	sigaddset(&set, dn_sig);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL)) {
		fprintf(stderr, "%s: sigprocmask failed\n", prog);
		return 1;
	}

	if (!realpath(dir_arg, droot) || chdir(droot)) {
		fprintf(stderr, "%s: %s: %s\n", prog, dir_arg, strerror(errno));
		return 1;
	}
	droot_len = strlen(droot);
	if (droot_len == 1)
		droot_len = 0;	/* D is "/": every path is inside */
	out = out_arg ? fopen(out_arg, "we") : stdout;
	if (!out) {
		fprintf(stderr, "%s: %s: %s\n", prog, out_arg, strerror(errno));
		return 1;
	}
	setvbuf(out, outbuf, _IOFBF, sizeof(outbuf));
	fprintf(out, "evdiff seed %llu ops %ld%s%s\n", (unsigned long long)seed, nops,
		fs_marks ? " fs-marks" : "", pseudo_watches ? "" : " no-pseudo-watches");

	fill_io(sizeof(iobuf));
	if (setup(&b, &thr))
		return 1;

	for (op = 0; op < nops; op++) {
		cur_op = op;
		b.len = 0;
		sb_printf(&b, "op %ld ", op);
		do_op(&b);
		emit_sb(&b, 0, 0, 0);
		drain(op);
	}
	cur_op = nops;
	fprintf(out, "end\n");
	drain(nops);

	/* Stop the responder; nothing can be waiting for it now. */
	if (write(stop_pipe[1], "x", 1) == 1)
		pthread_join(thr, NULL);
	for (i = 0; i < n_fan; i++)
		free(fans[i].pend.p);
	if (fflush(out) || ferror(out) || (out != stdout && fclose(out))) {
		fprintf(stderr, "%s: writing output: %s\n", prog, strerror(errno));
		return 1;
	}
	fprintf(stderr, "evdiff: seed %llu: %ld ops, events: inotify %ld, fanotify %ld "
		"(permission %ld, fid %ld), dnotify %ld\n", (unsigned long long)seed,
		nops, cnt_in, cnt_fan, cnt_perm, cnt_fid, cnt_dn);
	if (cnt_late) {
		fprintf(stderr, "%s: %ld permission events recorded under a later "
			"operation (LATE lines)\n", prog, cnt_late);
		return 1;
	}
	return 0;
}
