// SPDX-License-Identifier: GPL-2.0
/*
 * auditdiff: the audit records of the same calls, knob off and on.
 *
 * usage: auditdiff KNOBFILE FILE...
 *
 * Takes the audit daemon's place on the audit netlink socket (no auditd
 * runs in the lab's guests), enables audit, and adds one rule: every
 * newfstatat, statx, access, faccessat and faccessat2 of its child's
 * process.  The child, forked after audit is enabled so that it has an
 * audit context, makes the same calls twice, the knob at 0 then at 1:
 * newfstatat(fd, "", AT_EMPTY_PATH), statx(fd, "", AT_EMPTY_PATH) and
 * access() of each FILE (and of a missing name).  The parent collects
 * every record of the child's events, drops the "audit(time:serial): "
 * stamp, and compares the two halves record by record.  The rule is deleted
 * before exit; audit stays enabled (see the end of main()).
 *
 * Output: one line per differing record, then
 *   auditdiff: events=E records=R path_records=P mismatches=M
 * (per pass).  Exit 0 iff M == 0 and every pass has the same records, 1
 * otherwise, 2 on usage error or when audit is not available.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "oldcalls.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The rule matches this program's own system call table: audit numbers
 * the calls per architecture (linux/audit.h, AUDIT_ARCH_*).
 */
#if defined(__aarch64__)
#define AUDIT_ARCH_SELF		0xc00000b7	/* AUDIT_ARCH_AARCH64 */
#else
#define AUDIT_ARCH_SELF		0xc000003e	/* AUDIT_ARCH_X86_64 */
#endif

static int nl;

static void die(const char *what)
{
	fprintf(stderr, "auditdiff: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* Sends one request and waits for its acknowledgement. */
static void request(int type, const void *data, size_t len)
{
	struct {
		struct nlmsghdr h;
		char data[8192];
	} m;
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	char buf[8192];
	struct nlmsghdr *r;
	ssize_t n;

	memset(&m, 0, sizeof(m));
	m.h.nlmsg_len = NLMSG_LENGTH(len);
	m.h.nlmsg_type = type;
	m.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	m.h.nlmsg_seq = type;
	memcpy(m.data, data, len);
	if (sendto(nl, &m, m.h.nlmsg_len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		die("sendto");
	for (;;) {
		n = recv(nl, buf, sizeof(buf), 0);
		if (n < 0)
			die("recv");
		for (r = (struct nlmsghdr *)buf; NLMSG_OK(r, (size_t)n); r = NLMSG_NEXT(r, n)) {
			if (r->nlmsg_type == NLMSG_ERROR && r->nlmsg_seq == (unsigned int)type) {
				struct nlmsgerr *e = NLMSG_DATA(r);

				if (e->error) {
					errno = -e->error;
					die(__func__);
				}
				return;
			}
		}
	}
}

static struct audit_rule_data *rule(size_t *len)
{
	static const int calls[] = {
		SYS_newfstatat, SYS_statx, SYS_faccessat, SYS_faccessat2,
#ifdef SYS_access
		SYS_access,
#endif
	};
	struct audit_rule_data *r;
	size_t i;

	*len = sizeof(*r);
	r = calloc(1, *len);
	if (!r)
		die("calloc");
	r->flags = AUDIT_FILTER_EXIT;
	r->action = AUDIT_ALWAYS;
	for (i = 0; i < ARRAY_SIZE(calls); i++)
		r->mask[AUDIT_WORD(calls[i])] |= AUDIT_BIT(calls[i]);
	r->field_count = 2;
	r->fields[0] = AUDIT_ARCH;
	r->fieldflags[0] = AUDIT_EQUAL;
	r->values[0] = AUDIT_ARCH_SELF;
	r->fields[1] = AUDIT_PPID;
	r->fieldflags[1] = AUDIT_EQUAL;
	r->values[1] = getpid();
	return r;
}

static void set_status(int enabled, int pid)
{
	struct audit_status s;

	memset(&s, 0, sizeof(s));
	s.mask = AUDIT_STATUS_ENABLED | AUDIT_STATUS_PID | AUDIT_STATUS_BACKLOG_LIMIT;
	s.enabled = enabled;
	s.pid = pid;
	s.backlog_limit = 65536;
	request(AUDIT_SET, &s, sizeof(s));
}

static void child(const char *knob, char **files, int nfiles)
{
	char buf[4096];
	int kfd, pass, i, fd;

	kfd = open(knob, O_WRONLY);
	if (kfd < 0)
		_exit(3);
	for (pass = 0; pass < 2; pass++) {
		if (pwrite(kfd, pass ? "1" : "0", 1, 0) != 1)
			_exit(3);
		for (i = 0; i < nfiles; i++) {
			fd = open(files[i], O_RDONLY | O_NONBLOCK);
			if (fd < 0)
				fd = open(files[i], O_PATH);
			syscall(SYS_newfstatat, fd, "", buf, AT_EMPTY_PATH);
			syscall(SYS_statx, fd, "", AT_EMPTY_PATH, 0x7ff, buf);
			sc_access(files[i], R_OK);
			syscall(SYS_faccessat, AT_FDCWD, files[i], W_OK);
			syscall(SYS_faccessat2, fd, "", X_OK, AT_EMPTY_PATH);
			close(fd);
		}
		sc_access("/nonexistent/auditdiff", F_OK);
	}
	pwrite(kfd, "0", 1, 0);
	_exit(0);
}

static char **recs;
static int nrecs;

int main(int argc, char **argv)
{
	struct sockaddr_nl me = { .nl_family = AF_NETLINK };
	struct audit_rule_data *r;
	int status, i, half, mismatches = 0, paths = 0, events = 0, want;
	time_t done = 0;
	char buf[16384], mine[32];
	unsigned long serial, ours = 0;
	struct pollfd pfd;
	size_t rlen;
	pid_t pid;
	ssize_t n;

	if (argc < 3) {
		fprintf(stderr, "usage: auditdiff KNOBFILE FILE...\n");
		return 2;
	}
	nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
	if (nl < 0 || bind(nl, (struct sockaddr *)&me, sizeof(me)))
		die("audit netlink socket");
	set_status(1, getpid());
	r = rule(&rlen);
	request(AUDIT_ADD_RULE, r, rlen);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0)
		child(argv[1], argv + 2, argc - 2);
	pfd.fd = nl;
	pfd.events = POLLIN;
	/*
	 * Records arrive until the child has exited and kauditd is drained:
	 * every call's event (5 per file and the missing name, per pass),
	 * then a second with nothing more, 60 s at most.
	 */
	want = 2 * (5 * (argc - 2) + 1);
	for (;;) {
		if (!done && waitpid(pid, &status, WNOHANG) == pid)
			done = time(NULL);
		if (poll(&pfd, 1, done ? 1000 : 200) <= 0) {
			if (done && (events >= want || time(NULL) - done > 60))
				break;
			continue;
		}
		n = recv(nl, buf, sizeof(buf) - 1, 0);
		if (n < (ssize_t)NLMSG_HDRLEN)
			continue;
		{
			struct nlmsghdr *h = (struct nlmsghdr *)buf;
			char *text = NLMSG_DATA(h), *p;
			/* Audit's nlmsg_len counts the text alone: take what came. */
			size_t tl = n - NLMSG_HDRLEN;

			/* The events' own records, not the rule and status changes. */
			if (h->nlmsg_type != AUDIT_SYSCALL && h->nlmsg_type != AUDIT_PATH &&
			    h->nlmsg_type != AUDIT_CWD && h->nlmsg_type != AUDIT_PROCTITLE)
				continue;
			text[tl] = 0;
			p = strstr(text, "): ");
			if (!p || sscanf(text, "audit(%*[0-9.]:%lu)", &serial) != 1)
				continue;
			p += 3;
			/*
			 * The child's events only: with audit already on, this
			 * process's own AUDIT_SET and rule changes log their
			 * sendto() too.  An event's SYSCALL record comes first.
			 */
			if (h->nlmsg_type == AUDIT_SYSCALL) {
				snprintf(mine, sizeof(mine), " pid=%d ", pid);
				ours = strstr(p, mine) ? serial : 0;
				if (!ours)
					continue;
				events++;
			} else if (serial != ours) {
				continue;
			}
			if (h->nlmsg_type == AUDIT_PATH)
				paths++;
			recs = realloc(recs, (nrecs + 1) * sizeof(*recs));
			if (!recs || asprintf(&recs[nrecs], "%d %s", h->nlmsg_type, p) < 0)
				die("realloc");
			nrecs++;
		}
	}
	request(AUDIT_DEL_RULE, r, rlen);
	/*
	 * Audit stays enabled, with no rule: a task forked while it was on
	 * has an audit context whose dummy flag only a system call entry
	 * with audit enabled updates, so with audit off it would look
	 * audited for good (to stock and to the fast paths alike).
	 */
	set_status(1, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "auditdiff: the child failed\n");
		return 2;
	}
	half = nrecs / 2;
	if (nrecs % 2 || !half) {
		printf("auditdiff: the passes differ in length: %d records\n", nrecs);
		mismatches++;
	} else {
		for (i = 0; i < half; i++) {
			if (strcmp(recs[i], recs[half + i])) {
				printf("MISMATCH A: %.300s\n         B: %.300s\n", recs[i],
				       recs[half + i]);
				mismatches++;
			}
		}
	}
	if (getenv("AUDITDIFF_DUMP"))
		for (i = 0; i < nrecs; i++)
			fprintf(stderr, "%d: %s\n", i, recs[i]);
	printf("auditdiff: events=%d records=%d path_records=%d mismatches=%d\n",
	       events / 2, half, paths / 2, mismatches);
	return mismatches ? 1 : 0;
}
