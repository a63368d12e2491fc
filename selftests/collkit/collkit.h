/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collkit: what the CAU test programs (coll.c, mcast.c) share: a reference
 * of every operator in C arithmetic, raw windows, trees and collective
 * descriptors composed in the send FIFO, results read raw from the
 * receive FIFO, input generators, a pool of windows one per hub, and
 * multi-process jobs.  Linked into each of those programs (selftests.mk).
 */
#ifndef PERCS_SELFTESTS_COLLKIT_H
#define PERCS_SELFTESTS_COLLKIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"

#define NEED_HUBS	16		/* NAME.modparams: topology=4x4 */
#define MAXM		16		/* members of one tree here */
#define PAY		PERCS_CAU_PAYLOAD
#define EXT		PERCS_COLL_EXT_SIZE
#define RES_LEN		(EXT + PAY)	/* a delivered result's length */
#define INFL		PERCS_CAU_MAX_INFLIGHT
#define ROOT		PERCS_CAU_ROOT
#define WAIT_MS		10000		/* deadline of one result, no faults */
#define FAULT_MS	30000		/* ... with drop/dup/reorder */
/* Members of the binary tree the fault-injection tests run on. */
#define FLT_N		8
#define QUIET_MS	30		/* "nothing more arrives" */

struct mem {
	struct percs_window *w;
	struct percs_addr a;
	int fd;
	unsigned int hub;
};

/* A tree driven by this process: its members are windows of a pool. */
struct tree {
	const char *name;
	unsigned int n;
	uint32_t parent[MAXM];
	uint32_t flags;
	struct mem *m[MAXM];
	uint32_t id;
	unsigned int root;
	uint64_t seq;		/* operations started on it so far */
	uint32_t key;
};

/*
 * A descriptor as composed in the send FIFO: the header, then @len bytes
 * of body (the extension and the elements).
 */
struct desc {
	struct percs_pkt_hdr h;
	union {
		struct percs_coll_ext e;
		uint8_t body[EXT + 2 * PAY];
	};
	size_t len;
};

struct res {
	struct percs_pkt_hdr h;
	struct percs_coll_ext e;
	uint8_t data[PAY];
	int len;
};

/* What one member should receive. */
struct want {
	uint32_t tree;
	unsigned int coll, op, type, count;
	uint64_t seq;
	int status;
	uint32_t tag;
	struct percs_addr src;
	uint32_t key;
	const uint8_t *data;	/* PAY bytes */
	bool fields;		/* check coll/op/type/count */
};

struct fconst {
	uint64_t qnan, qnan2, snan, inf, ninf, nzero, big;
};

struct pool {
	struct mem m[NEED_HUBS];
	unsigned int n;
	uint32_t key;
};

struct job {
	unsigned int n;
	uint32_t key, flags, rx;
	uint32_t poll;		/* a bit per member: poll-mode window */
	uint32_t parent[MAXM];
	unsigned int hub[MAXM];
	int (*body)(struct job *j, unsigned int idx, struct mem *m);
	void *arg;
	/* filled by the children */
	long stat;		/* a figure a member reports to the test */
	struct percs_addr addr[MAXM];
	uint32_t tree;
	int bar[8];
	int fail;
};

/** struct mc_stats - a tree's multicast counters in percs/cau */
struct mc_stats {
	unsigned long long posted, delivered, resent, refused;
};

/* What a test program's fixture saves and puts back. */
struct collkit_saved {
	long hold, depth;
};

/* The 6.1 harness runs the test after a SKIP in the setup. */
#define SKIPPED() do {							\
	if (_metadata->skip)						\
		return;							\
} while (0)

/* The fixture: NULL when the system can run the tests, else why not. */
const char *collkit_setup(struct collkit_saved *s);
/*
 * Put back what collkit_setup() saved, close what a failed test left open,
 * and wait for the live counters to drain.  Return: 0, or -1 with @l
 * logged.
 */
int collkit_teardown(const struct collkit_saved *s, struct pt_live *l);

extern struct percs_window *open_w[64];
extern unsigned int nr_open_w;
extern const struct fconst fc32;
extern const struct fconst fc64;

uint64_t mix(uint64_t a, uint64_t b, uint64_t c);
bool type_float(unsigned int type);
unsigned int esize(unsigned int type);
unsigned int maxcount(unsigned int type);
bool op_valid(unsigned int op, unsigned int type);
const char *op_name(unsigned int op);
const char *type_name(unsigned int type);
const char *coll_name(unsigned int coll);
uint64_t ld(const uint8_t *p, unsigned int size);
void st(uint8_t *p, unsigned int size, uint64_t v);
float f32_of(uint64_t b);
uint64_t bits_f32(float f);
double f64_of(uint64_t b);
uint64_t bits_f64(double d);
bool fbits_nan(unsigned int type, uint64_t b);
uint64_t fminmax(unsigned int type, bool max, uint64_t a, uint64_t b);
uint64_t ref_elem(unsigned int op, unsigned int type, uint64_t a,
		  uint64_t b);
void ref_combine(unsigned int op, unsigned int type, unsigned int count,
		 uint8_t *acc, const uint8_t *in);
void ref_subtree(unsigned int n, const uint32_t *parent,
		 unsigned int node, unsigned int op, unsigned int type,
		 unsigned int count, uint8_t (*in)[PAY], uint8_t *acc);
unsigned int root_of(unsigned int n, const uint32_t *parent);
void ref_result(unsigned int n, const uint32_t *parent,
		unsigned int coll, unsigned int op, unsigned int type,
		unsigned int count, uint8_t (*in)[PAY], uint8_t *want);
int data_diff(unsigned int op, unsigned int type, unsigned int count,
	      const uint8_t *got, const uint8_t *want);
void open_w_del(struct percs_window *w);
void open_w_close_all(void);
int mem_open_flags(struct mem *m, unsigned int hub, unsigned int unit,
		   uint32_t key, uint32_t rx, uint32_t wflags);
int mem_open(struct mem *m, unsigned int hub, unsigned int unit,
	     uint32_t key, uint32_t rx);
void mem_close(struct mem *m);
int cau_create(int fd, uint32_t flags, const struct percs_addr *a,
	       const uint32_t *parent, unsigned int n, uint32_t *tree);
int cau_tree_op(int fd, unsigned long ioc, uint32_t tree);
int tree_setup(struct tree *t);
void desc_make(struct desc *d, uint32_t tree, unsigned int coll,
	       unsigned int op, unsigned int type, unsigned int count,
	       const void *data, uint32_t tag);
int desc_post(struct percs_window *w, const struct desc *d);
int post(struct percs_window *w, uint32_t tree, unsigned int coll,
	 unsigned int op, unsigned int type, unsigned int count,
	 const void *data, uint32_t tag);
int res_recv(struct percs_window *w, struct res *r, int ms);
bool res_none(struct percs_window *w, int ms);
int cqe_wait(struct percs_window *w, struct percs_cqe *c, int ms);
int res_check(const struct res *r, const struct want *x, char *why,
	      size_t cap);
uint64_t small_float(unsigned int type, uint64_t r);
uint64_t rand_float(unsigned int type, uint64_t r, uint64_t r2);
void gen_input(unsigned int type, unsigned int count, unsigned int m,
	       unsigned int n, bool ordered, uint64_t seed, uint8_t *out);
int pool_open_poll(struct pool *p, unsigned int n, uint32_t rx,
		   uint32_t poll);
int pool_open(struct pool *p, unsigned int n, uint32_t rx);
void pool_close(struct pool *p);
int tree_end_check(struct tree *t);
int job_barrier(struct job *j, unsigned int k);
bool job_failed(struct job *j);
int job_child(int idx, void *arg);
struct job *job_new(unsigned int n, uint32_t flags,
		    const uint32_t *parent, const unsigned int *hub,
		    int (*body)(struct job *, unsigned int, struct mem *),
		    void *arg);
void mc_make(unsigned int o, uint64_t k, unsigned int *type,
	     unsigned int *count, uint8_t *data);
uint32_t mc_tag(unsigned int o, uint64_t k);
void mc_desc(struct desc *d, uint32_t tree, unsigned int o, uint64_t k,
	     bool notify);
int mc_post(struct percs_window *w, uint32_t tree, unsigned int o,
	    uint64_t k);
int mc_try(struct percs_window *w, uint32_t tree, unsigned int o,
	   uint64_t k);
int mc_check(const struct res *r, uint32_t tree, uint32_t key,
	     const struct percs_addr *a, unsigned int n, unsigned int me,
	     uint64_t *next, char *why, size_t cap);
int mc_stats(uint32_t tree, struct mc_stats *s);

#endif /* PERCS_SELFTESTS_COLLKIT_H */
