// SPDX-License-Identifier: GPL-2.0
/*
 * percs-run: start the N ranks of a parallel job on the emulated HFIs.
 *
 * The launcher creates the job, places each rank on an HFI, forks and
 * execs the ranks with their rank, size, HFI and a socket to the launcher
 * in the environment, and answers the socket protocol of lib/msg/pmi.h:
 * it collects every rank's window address and hands each rank the table,
 * then holds the ranks that finalized until all have.  It forwards
 * signals, optionally prefixes the ranks' output lines with their rank,
 * and when a rank fails it says which rank failed and how, tells the
 * others (so their calls return an error instead of waiting for it) and
 * kills those still running after the grace period.  See percs-run(1).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "percs.h"
#include "pmi.h"
#include "placement.h"

#define RUN_MAX_RANKS	4096
#define RUN_LINE_MAX	4096
/* Default --grace: seconds the ranks get to end after a rank died. */
#define RUN_GRACE_DEF	10
#define RUN_GRACE_MAX	3600

/* The two output streams of a rank when --tag-output is on. */
struct run_out {
	int fd;			/* read end, -1 once closed */
	FILE *to;		/* stdout or stderr */
	size_t len;
	char buf[RUN_LINE_MAX];
};

struct run_rank {
	pid_t pid;		/* 0 once reaped */
	int sock;		/* PMI socket, -1 once closed */
	bool hello, left;
	struct percs_addr addr;
	size_t got;		/* bytes of the current message read */
	unsigned char msg[sizeof(struct pmi_hello)];
	struct run_out out[2];
};

/* --bind: whether each rank gets a CPU of its own. */
enum run_bind { BIND_NONE, BIND_CORE };

struct run {
	unsigned int n;
	bool tag_output;
	enum run_bind bind;
	cpu_set_t cpus;		/* the launcher's allowed CPUs */
	char **argv;
	struct run_rank *ranks;
	struct run_place *place;
	int job_fd;		/* the job every rank's window joins */
	unsigned int hellos, lefts, alive;
	unsigned int gone;	/* ranks that ended without leaving */
	bool go_sent;
	int failed;		/* first failing rank, -1 none */
	unsigned int grace;	/* --grace, seconds */
	uint64_t deadline;	/* after a death: when to kill the rest, or 0 */
	int unjoined;		/* a rank that exited 0 without a hello, or -1 */
	int exit_code;
	bool killing;
	int sigfd;
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: percs-run -n N [--placement spread|packed|map FILE] [--tag-output]\n"
"                 [--bind core|none] [--grace SECONDS] [--] PROGRAM [ARG...]\n"
"Start N ranks of PROGRAM as one job on the emulated PERCS HFIs.\n"
"\n"
"  -n, --np N             ranks, 1..%d\n"
"  --placement spread     one rank per hub, over all supernodes in turn (default)\n"
"  --placement packed     every rank on hub 0, alternating its two HFIs\n"
"  --placement map FILE   rank i on the i-th \"HUB UNIT\" line of FILE\n"
"  --tag-output           prefix each output line with \"[RANK] \"\n"
"  --bind core|none       rank i on the i-th allowed CPU, or anywhere (default)\n"
"  --grace SECONDS        after a rank died, how long the others get to see\n"
"                         the error and end before they are killed (default %d)\n"
"  -h, --help             this text\n"
"\n"
"Exit status: 0 when every rank exited 0 after finalizing; the first\n"
"failing rank's exit status, 128 + its signal, or its abort code; 2 for\n"
"bad arguments; 1 when the job could not start.\n"
"See percs-run(1) for the environment each rank gets.\n", RUN_MAX_RANKS,
	RUN_GRACE_DEF);
}

static int bad_arg(const char *fmt, const char *what)
{
	fprintf(stderr, "percs-run: ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, "\nTry 'percs-run --help'.\n");
	return 2;
}

static int parse_args(struct run *r, int argc, char **argv,
		      enum run_policy *policy, const char **map)
{
	static const struct option opts[] = {
		{ "np", required_argument, NULL, 'n' },
		{ "placement", required_argument, NULL, 'p' },
		{ "tag-output", no_argument, NULL, 't' },
		{ "bind", required_argument, NULL, 'b' },
		{ "grace", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool have_n = false;
	char *end;
	long v;
	int c;

	*policy = RUN_SPREAD;
	*map = NULL;
	opterr = 0;
	/* "+": options end at the program's name. */
	while ((c = getopt_long(argc, argv, "+n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 1 ||
			    v > RUN_MAX_RANKS)
				return bad_arg("-n wants a number of ranks from 1 to 4096, not '%s'",
					       optarg);
			r->n = (unsigned int)v;
			have_n = true;
			break;
		case 'p':
			if (!strcmp(optarg, "spread")) {
				*policy = RUN_SPREAD;
			} else if (!strcmp(optarg, "packed")) {
				*policy = RUN_PACKED;
			} else if (!strcmp(optarg, "map")) {
				if (optind >= argc)
					return bad_arg("%s", "--placement map needs a FILE");
				*policy = RUN_MAP;
				*map = argv[optind++];
			} else {
				return bad_arg("unknown placement '%s' (spread, packed or map FILE)",
					       optarg);
			}
			break;
		case 't':
			r->tag_output = true;
			break;
		case 'b':
			if (!strcmp(optarg, "core"))
				r->bind = BIND_CORE;
			else if (!strcmp(optarg, "none"))
				r->bind = BIND_NONE;
			else
				return bad_arg("unknown binding '%s' (core or none)",
					       optarg);
			break;
		case 'g':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 0 ||
			    v > RUN_GRACE_MAX)
				return bad_arg("--grace wants seconds from 0 to 3600, not '%s'",
					       optarg);
			r->grace = (unsigned int)v;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case ':':
			return bad_arg("option '%s' needs a value",
				       argv[optind - 1]);
		default:
			if (optopt == 'n')
				return bad_arg("%s", "option -n needs a value");
			return bad_arg("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (!have_n)
		return bad_arg("%s", "the number of ranks is missing (-n N)");
	if (optind >= argc)
		return bad_arg("%s", "the program to run is missing");
	r->argv = argv + optind;
	return 0;
}

/* The job: a kernel object; the ranks join it through the inherited fd. */
static int job_create(struct run *r)
{
	struct percs_hfi *hfi;
	int ret = percs_hfi_open(0, 0, &hfi);

	if (!ret) {
		ret = percs_job_create(hfi);
		percs_hfi_close(hfi);
	}
	if (ret < 0) {
		fprintf(stderr, "percs-run: cannot create the job: %s\n",
			strerror(-ret));
		return 1;
	}
	r->job_fd = ret;
	return 0;
}

static void setenv_uint(const char *name, unsigned long v)
{
	char s[24];

	snprintf(s, sizeof(s), "%lu", v);
	setenv(name, s, 1);
}

/*
 * Rank @i on the i-th allowed CPU (--bind core).  Not the default: the
 * module's deferred work (RDMA completions, unpinning) runs in per-CPU
 * kernel workers, which a pinned rank busy-polling its CPU delays to the
 * next timer tick, most likely what made a 2 KiB rendezvous take 4 ms
 * bound against 34 us unbound (one run each, 2-CPU VM).
 */
static void bind_rank(const struct run *r, unsigned int i)
{
	unsigned int seen = 0, want = i % (unsigned int)CPU_COUNT(&r->cpus);
	cpu_set_t one;
	int cpu;

	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &r->cpus) || seen++ != want)
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		sched_setaffinity(0, sizeof(one), &one);
		return;
	}
}

/* In the child: become rank @i and exec the program. */
static void child_exec(struct run *r, unsigned int i, int sock, int out[2],
		       const sigset_t *old)
{
	int fd;

	sigprocmask(SIG_SETMASK, old, NULL);
	if (r->bind == BIND_CORE)
		bind_rank(r, i);
	/* Standard input is rank 0's, as with mpirun. */
	if (i != 0) {
		fd = open("/dev/null", O_RDONLY);
		if (fd < 0 || dup2(fd, STDIN_FILENO) < 0)
			_exit(127);
		close(fd);
	}
	if (r->tag_output) {
		if (dup2(out[0], STDOUT_FILENO) < 0 ||
		    dup2(out[1], STDERR_FILENO) < 0)
			_exit(127);
	}
	/* dup() clears FD_CLOEXEC: the socket survives the exec. */
	fd = dup(sock);
	if (fd < 0)
		_exit(127);
	setenv_uint(PMI_ENV_FD, (unsigned long)fd);
	setenv_uint(PMI_ENV_RANK, i);
	setenv_uint(PMI_ENV_SIZE, r->n);
	setenv_uint(PMI_ENV_HUB, r->place[i].hub);
	setenv_uint(PMI_ENV_UNIT, r->place[i].unit);
	/* The job fd is O_CLOEXEC in the launcher: keep it across exec. */
	if (fcntl(r->job_fd, F_SETFD, 0))
		_exit(127);
	setenv_uint(PMI_ENV_JOB_FD, (unsigned long)r->job_fd);
	execvp(r->argv[0], r->argv);
	fprintf(stderr, "percs-run: cannot run '%s': %s\n", r->argv[0],
		strerror(errno));
	_exit(127);
}

static int start_ranks(struct run *r, const sigset_t *old)
{
	unsigned int i;

	for (i = 0; i < r->n; i++) {
		struct run_rank *k = &r->ranks[i];
		int sv[2], o[2] = { -1, -1 }, e[2] = { -1, -1 };
		int outw[2];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
			return -errno;
		if (r->tag_output && (pipe2(o, O_CLOEXEC) || pipe2(e, O_CLOEXEC)))
			return -errno;
		outw[0] = o[1];
		outw[1] = e[1];
		fflush(NULL);
		k->pid = fork();
		if (k->pid < 0)
			return -errno;
		if (k->pid == 0)
			child_exec(r, i, sv[1], outw, old);
		close(sv[1]);
		k->sock = sv[0];
		fcntl(k->sock, F_SETFL, O_NONBLOCK);
		if (r->tag_output) {
			close(o[1]);
			close(e[1]);
			k->out[0] = (struct run_out){ .fd = o[0], .to = stdout };
			k->out[1] = (struct run_out){ .fd = e[0], .to = stderr };
		}
		r->alive++;
	}
	return 0;
}

static void kill_all(struct run *r, int sig)
{
	unsigned int i;

	for (i = 0; i < r->n; i++)
		if (r->ranks[i].pid > 0)
			kill(r->ranks[i].pid, sig);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The first failure decides the exit code; the others are killed. */
static void fail(struct run *r, unsigned int i, int code, const char *why)
{
	if (r->failed < 0) {
		r->failed = (int)i;
		r->exit_code = code;
		fprintf(stderr, "percs-run: rank %u (pid %d) %s; %s\n", i,
			(int)r->ranks[i].pid, why,
			r->n > 1 ? "killing the other ranks" : "job failed");
	}
	if (!r->killing) {
		r->killing = true;
		kill_all(r, SIGKILL);
	}
}

static void send_all(struct run *r, const void *buf, size_t len);

/* Every rank has left or ended: those waiting may go. */
static void maybe_go(struct run *r)
{
	struct pmi_cmd go = { .magic = PMI_MAGIC, .op = PMI_GO };

	if (r->go_sent || !r->lefts || r->lefts + r->gone < r->n)
		return;
	r->go_sent = true;
	send_all(r, &go, sizeof(go));
}

/*
 * Rank @i died or exited without leaving, after every rank had the
 * table.  The others may be waiting for it: tell them, so that their
 * calls return an error (lib/msg/failure.c), and give them the grace
 * period to end on their own before they are killed.  The first failure
 * still decides the exit code.
 */
static void rank_died(struct run *r, unsigned int i, int code,
		      const char *why)
{
	struct pmi_cmd dead = { .magic = PMI_MAGIC, .op = PMI_DEAD,
				.code = (int32_t)i };

	if (r->killing || r->hellos < r->n || r->n == 1) {
		fail(r, i, code, why);
		return;
	}
	if (r->failed < 0) {
		r->failed = (int)i;
		r->exit_code = code;
		fprintf(stderr, "percs-run: rank %u (pid %d) %s; telling the other ranks, killing them in %u s\n",
			i, (int)r->ranks[i].pid, why, r->grace);
	}
	if (!r->deadline)
		r->deadline = now_ms() + 1000ULL * r->grace;
	send_all(r, &dead, sizeof(dead));
}

/* The grace period is over: kill what still runs. */
static void grace_over(struct run *r)
{
	r->deadline = 0;
	if (r->killing || !r->alive)
		return;
	fprintf(stderr, "percs-run: %u rank(s) still running %u s after rank %d failed; killing them\n",
		r->alive, r->grace, r->failed);
	r->killing = true;
	kill_all(r, SIGKILL);
}

static void close_sock(struct run_rank *k)
{
	if (k->sock >= 0)
		close(k->sock);
	k->sock = -1;
}

static void send_all(struct run *r, const void *buf, size_t len)
{
	unsigned int i;

	for (i = 0; i < r->n; i++) {
		struct run_rank *k = &r->ranks[i];
		const unsigned char *p = buf;
		size_t left = len;

		if (k->sock < 0)
			continue;
		/* Blocking for the table: ranks read it at once. */
		fcntl(k->sock, F_SETFL, 0);
		while (left) {
			/* A rank that just died is not worth a SIGPIPE. */
			ssize_t n = send(k->sock, p, left, MSG_NOSIGNAL);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			p += n;
			left -= (size_t)n;
		}
		fcntl(k->sock, F_SETFL, O_NONBLOCK);
	}
}

static void pmi_message(struct run *r, unsigned int i)
{
	struct run_rank *k = &r->ranks[i];

	if (!k->hello) {
		struct pmi_hello h;

		memcpy(&h, k->msg, sizeof(h));
		if (h.magic != PMI_MAGIC || h.rank != i) {
			fail(r, i, 1, "sent a malformed hello");
			return;
		}
		k->hello = true;
		k->addr = h.addr;
		if (r->unjoined >= 0) {
			/* The table can never be complete: it would hang. */
			fail(r, (unsigned int)r->unjoined, 1,
			     "exited before joining the job");
			return;
		}
		if (++r->hellos == r->n) {
			struct percs_addr *t = calloc(r->n, sizeof(*t));
			unsigned int j;

			if (!t) {
				fail(r, i, 1, "cannot be answered: out of memory");
				return;
			}
			for (j = 0; j < r->n; j++)
				t[j] = r->ranks[j].addr;
			send_all(r, t, sizeof(*t) * r->n);
			free(t);
		}
		return;
	}
	{
		struct pmi_cmd c;

		memcpy(&c, k->msg, sizeof(c));
		if (c.magic != PMI_MAGIC) {
			fail(r, i, 1, "sent a malformed request");
		} else if (c.op == PMI_ABORT) {
			char why[64];

			snprintf(why, sizeof(why), "called abort with code %d",
				 c.code);
			fail(r, i, c.code & 0xff, why);
		} else if (c.op == PMI_LEAVE && !k->left) {
			k->left = true;
			r->lefts++;
			maybe_go(r);
		}
	}
}

static void pmi_read(struct run *r, unsigned int i)
{
	struct run_rank *k = &r->ranks[i];
	size_t want = k->hello ? sizeof(struct pmi_cmd) :
				 sizeof(struct pmi_hello);
	ssize_t n = read(k->sock, k->msg + k->got, want - k->got);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		close_sock(k);	/* the rank closed it or exited */
		return;
	}
	k->got += (size_t)n;
	if (k->got == want) {
		k->got = 0;
		pmi_message(r, i);
	}
}

/* Copy a rank's output, "[RANK] " before each line. */
static void out_read(struct run *r, unsigned int i, struct run_out *o)
{
	ssize_t n = read(o->fd, o->buf + o->len, sizeof(o->buf) - o->len);
	size_t start = 0, j;

	(void)r;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0)
		o->len += (size_t)n;
	for (j = 0; j < o->len; j++) {
		if (o->buf[j] != '\n')
			continue;
		fprintf(o->to, "[%u] %.*s\n", i, (int)(j - start),
			o->buf + start);
		start = j + 1;
	}
	/* A line longer than the buffer, or the last one without newline. */
	if (start == 0 && (o->len == sizeof(o->buf) || n <= 0) && o->len) {
		fprintf(o->to, "[%u] %.*s\n", i, (int)o->len, o->buf);
		start = o->len;
	}
	memmove(o->buf, o->buf + start, o->len - start);
	o->len -= start;
	fflush(o->to);
	if (n <= 0) {
		close(o->fd);
		o->fd = -1;
	}
}

static int rank_of(struct run *r, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < r->n; i++)
		if (r->ranks[i].pid == pid)
			return (int)i;
	return -1;
}

static void reap(struct run *r)
{
	char why[96];
	int st;
	pid_t pid;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		int i = rank_of(r, pid);
		struct run_rank *k;

		if (i < 0)
			continue;
		k = &r->ranks[i];
		r->alive--;
		close_sock(k);	/* nothing more is sent to it */
		if (k->hello && !k->left) {
			r->gone++;
			maybe_go(r);
		}
		if (r->killing) {
			/* One of the ranks we killed. */
		} else if (WIFSIGNALED(st)) {
			snprintf(why, sizeof(why), "was killed by signal %d (%s)",
				 WTERMSIG(st), strsignal(WTERMSIG(st)));
			rank_died(r, (unsigned int)i, 128 + WTERMSIG(st), why);
		} else if (WEXITSTATUS(st)) {
			snprintf(why, sizeof(why), "exited with status %d",
				 WEXITSTATUS(st));
			rank_died(r, (unsigned int)i, WEXITSTATUS(st), why);
		} else if (k->hello && !k->left) {
			rank_died(r, (unsigned int)i, 1,
				  "exited without finalizing");
		} else if (!k->hello && r->hellos) {
			fail(r, (unsigned int)i, 1, "exited before joining the job");
		} else if (!k->hello && r->unjoined < 0) {
			/* Fine unless another rank joins later. */
			r->unjoined = i;
		}
		k->pid = 0;
		close_sock(k);
	}
}

static void on_signal(struct run *r)
{
	struct signalfd_siginfo si;

	while (read(r->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			reap(r);
		else
			kill_all(r, (int)si.ssi_signo);	/* propagate */
	}
}

static int loop(struct run *r)
{
	unsigned int cap = 1 + 3 * r->n, i, nfds;
	struct pollfd *pf = calloc(cap, sizeof(*pf));
	int (*who)[2] = calloc(cap, sizeof(*who));

	if (!pf || !who)
		return -ENOMEM;
	for (;;) {
		bool outputs = false;
		int timeout = -1;

		nfds = 0;
		pf[nfds++] = (struct pollfd){ .fd = r->sigfd, .events = POLLIN };
		for (i = 0; i < r->n; i++) {
			struct run_rank *k = &r->ranks[i];
			int s;

			if (k->sock >= 0) {
				who[nfds][0] = (int)i;
				who[nfds][1] = -1;
				pf[nfds++] = (struct pollfd){ .fd = k->sock,
							      .events = POLLIN };
			}
			for (s = 0; s < 2; s++) {
				if (k->out[s].fd < 0)
					continue;
				outputs = true;
				who[nfds][0] = (int)i;
				who[nfds][1] = s;
				pf[nfds++] = (struct pollfd){ .fd = k->out[s].fd,
							      .events = POLLIN };
			}
		}
		if (!r->alive && !outputs)
			break;
		if (r->deadline) {
			uint64_t t = now_ms();

			if (t >= r->deadline)
				grace_over(r);
			else
				timeout = (int)(r->deadline - t);
		}
		if (poll(pf, nfds, timeout) < 0 && errno != EINTR)
			return -errno;
		if (pf[0].revents)
			on_signal(r);
		for (i = 1; i < nfds; i++) {
			struct run_rank *k = &r->ranks[who[i][0]];

			if (!pf[i].revents)
				continue;
			if (who[i][1] < 0 && k->sock == pf[i].fd)
				pmi_read(r, (unsigned int)who[i][0]);
			else if (who[i][1] >= 0 && k->out[who[i][1]].fd == pf[i].fd)
				out_read(r, (unsigned int)who[i][0],
					 &k->out[who[i][1]]);
		}
	}
	free(pf);
	free(who);
	return 0;
}

int main(int argc, char **argv)
{
	static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT,
					 SIGUSR1, SIGUSR2 };
	struct run r = { .failed = -1, .unjoined = -1, .sigfd = -1,
			 .grace = RUN_GRACE_DEF };
	enum run_policy policy;
	const char *map;
	sigset_t mask, old;
	unsigned int i;
	int ret;

	ret = parse_args(&r, argc, argv, &policy, &map);
	if (ret)
		return ret;
	r.ranks = calloc(r.n, sizeof(*r.ranks));
	r.place = calloc(r.n, sizeof(*r.place));
	if (!r.ranks || !r.place) {
		fprintf(stderr, "percs-run: out of memory\n");
		return 1;
	}
	for (i = 0; i < r.n; i++)
		r.ranks[i].sock = r.ranks[i].out[0].fd = r.ranks[i].out[1].fd = -1;
	ret = run_place(policy, map, r.n, r.place);
	if (ret)
		return ret;	/* run_place() said why */
	if (sched_getaffinity(0, sizeof(r.cpus), &r.cpus) || !CPU_COUNT(&r.cpus))
		r.bind = BIND_NONE;
	ret = job_create(&r);
	if (ret)
		return ret;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&mask, forwarded[i]);
	sigprocmask(SIG_BLOCK, &mask, &old);
	r.sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (r.sigfd < 0) {
		fprintf(stderr, "percs-run: signalfd: %s\n", strerror(errno));
		return 1;
	}
	ret = start_ranks(&r, &old);
	if (ret) {
		fprintf(stderr, "percs-run: cannot start the ranks: %s\n",
			strerror(-ret));
		kill_all(&r, SIGKILL);
		r.killing = true;
		r.exit_code = 1;
	}
	ret = loop(&r);
	if (ret) {
		fprintf(stderr, "percs-run: %s\n", strerror(-ret));
		kill_all(&r, SIGKILL);
		return 1;
	}
	return r.exit_code;
}
