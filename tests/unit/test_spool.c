/* Unit tests of the spool format and operations (docs/spool.md): ids, envelope
 * round trip, in-place status updates, attempt records, corrupt and truncated files, the
 * enqueue/pick-up/index/removal sequence on a real directory. */
#include "spool.h"
#include "unit.h"
#include "util.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static struct spool_msg sample(void)
{
	static struct spool_rcpt r[2];
	struct spool_msg m;
	memset(&m, 0, sizeof m);
	memset(r, 0, sizeof r);
	str_lcpy(m.id, "T4G2KQ80A1F3Z7K", sizeof m.id);
	m.arrival = 1795246800;
	m.uid = 1000;
	str_lcpy(m.user, "alice", sizeof m.user);
	m.sender = (char *)"alice@router.lan";
	m.ret = 'H';
	m.envid = (char *)"env id+1";
	str_lcpy(r[0].channel, "local", sizeof r[0].channel);
	str_lcpy(r[0].host, "-", sizeof r[0].host);
	r[0].addr = (char *)"root";
	r[0].priv = 0;
	r[0].notify = NOTIFY_FAILURE | NOTIFY_DELAY;
	r[0].orcpt = (char *)"rfc822;root@router.lan";
	str_lcpy(r[1].channel, "smtp", sizeof r[1].channel);
	str_lcpy(r[1].host, "example.com", sizeof r[1].host);
	r[1].addr = (char *)"\"john doe\"@example.com";
	r[1].priv = -1;
	m.rcpt = r;
	m.nrcpt = 2;
	return m;
}

TEST(ids_are_valid_sortable_and_carry_time)
{
	char a[SPOOL_ID_MAX], b[SPOOL_ID_MAX];
	spool_id_make(a, 1795246800, 1, 12345);
	spool_id_make(b, 1795246800, 2, 7);
	CHECK(spool_id_valid(a));
	CHECK(spool_id_valid(b));
	CHECK(strcmp(a, b) < 0);
	CHECK_INT(spool_id_time(a), 1795246800);
	CHECK(!spool_id_valid("../../etc/x"));
	CHECK(!spool_id_valid("abc"));
	CHECK(!spool_id_valid("T4G2KQ80A1F3z7K"));
	CHECK(!spool_id_valid(""));
	struct spool sp;
	memset(&sp, 0, sizeof sp);
	strcpy(sp.dir, "/s");
	char p[256];
	CHECK_INT(spool_path_ctl(&sp, a, p, sizeof p), 0);
	char want[256];
	snprintf(want, sizeof want, "/s/queue/%c/%s.c", a[strlen(a) - 1], a);
	CHECK_STR(p, want);
	CHECK_INT(spool_path_ctl(&sp, "../x", p, sizeof p), -1);
	CHECK_INT(spool_path_due(&sp, a, 1795246800, p, sizeof p), 0);
	snprintf(want, sizeof want, "/s/due/179524/%s.1795246800", a);
	CHECK_STR(p, want);
}

TEST(envelope_round_trip)
{
	struct spool_msg m = sample(), p;
	struct buf b;
	size_t oo, oz, ob;
	buf_init(&b, 1 << 20);
	CHECK_INT(spool_env_format(&m, &b, &oo, &oz, &ob), 0);
	CHECK(str_starts(b.p, "@ spoolbox 1\ni T4G2KQ80A1F3Z7K\n"));
	CHECK(strstr(b.p, "\nr N 0000000000 0000 0000000000 smtp example.com \"john+20doe\"@example.com -1\n") != NULL);
	char err[128];
	CHECK_INT(spool_msg_parse(b.p, b.len, 1, &p, err, sizeof err), 0);
	CHECK_STR(p.id, m.id);
	CHECK_INT(p.body_off, (long long)b.len);
	CHECK_STR(p.sender, "alice@router.lan");
	CHECK_STR(p.envid, "env id+1");
	CHECK_INT(p.ret, 'H');
	CHECK_STR(p.user, "alice");
	CHECK_INT(p.nrcpt, 2);
	CHECK_STR(p.rcpt[0].addr, "root");
	CHECK_STR(p.rcpt[0].orcpt, "rfc822;root@router.lan");
	CHECK_INT(p.rcpt[0].notify, NOTIFY_FAILURE | NOTIFY_DELAY);
	CHECK_STR(p.rcpt[1].addr, "\"john doe\"@example.com");
	CHECK_INT(p.rcpt[1].priv, -1);
	CHECK_INT(p.rcpt[1].tag, RT_NEW);
	CHECK(strncmp(b.p + p.rcpt[1].off, "r N ", 4) == 0);
	spool_msg_free(&p);
	/* null sender */
	m.sender = (char *)"";
	buf_reset(&b);
	CHECK_INT(spool_env_format(&m, &b, &oo, &oz, &ob), 0);
	CHECK(strstr(b.p, "\ns <>\n") != NULL);
	CHECK_INT(spool_msg_parse(b.p, b.len, 1, &p, err, sizeof err), 0);
	CHECK_STR(p.sender, "");
	spool_msg_free(&p);
	/* refuses what would break the format */
	m.rcpt[1].host[0] = 0;
	CHECK_INT(spool_env_format(&m, &b, &oo, &oz, &ob), -1);
	buf_free(&b);
}

static int parse_err(const char *text, char *err, size_t size)
{
	struct spool_msg p;
	int r = spool_msg_parse(text, strlen(text), 0, &p, err, size);
	if (r == 0)
		spool_msg_free(&p);
	return r;
}

TEST(corrupt_control_files_rejected_with_reason)
{
	char err[160];
	const char *good = "@ spoolbox 1\ni T4G2KQ80A1F3Z7K\nt 1\no 0000000000000100\nz 0000000000000000\nb 7\n"
	                   "u 0 root\ns <>\nr N 0000000000 0000 0000000000 local - root 0\n.\n";
	CHECK_INT(parse_err(good, err, sizeof err), 0);
	/* version 2: a file that may hold S (a success notice owed; docs/spool.md 4.1) */
	const char *v2 = "@ spoolbox 2\ni T4G2KQ80A1F3Z7K\nt 1\no 0000000000000100\nz 0000000000000000\nb 7\n"
	                 "u 0 root\ns a@b.example\nr S 0000000000 0001 0000000005 local - root 0\nN S\n.\n";
	CHECK_INT(parse_err(v2, err, sizeof err), 0);
	CHECK_INT(parse_err("", err, sizeof err), -1);
	CHECK_INT(parse_err("@ spoolbox 3\n", err, sizeof err), -1);
	CHECK_STR(err, "line 1: format version newer than this program knows");
	CHECK_INT(parse_err("hello\n", err, sizeof err), -1);
	CHECK_STR(err, "line 1: not a spoolbox control file (bad version line)");
	char trunc[512];
	snprintf(trunc, sizeof trunc, "%.*s", (int)(strlen(good) - 3), good);
	CHECK_INT(parse_err(trunc, err, sizeof err), -1);
	CHECK(strstr(err, "truncated") != NULL);
	char bad[512];
	snprintf(bad, sizeof bad, "%s", good);
	char *st = strstr(bad, "r N ");
	st[2] = 'Z';
	CHECK_INT(parse_err(bad, err, sizeof err), -1);
	CHECK_STR(err, "line 9: recipient record: bad status field");
	snprintf(bad, sizeof bad, "%sA 5 1 ok delivered 2.0.0 - x\n", good);
	CHECK_INT(parse_err(bad, err, sizeof err), -1);
	CHECK_STR(err, "line 11: attempt record: bad recipient number");
	snprintf(bad, sizeof bad, "%sQ what\n", good);
	CHECK_INT(parse_err(bad, err, sizeof err), -1);
	/* a torn final append is ignored, not fatal */
	snprintf(bad, sizeof bad, "%sA 0 1 ok delivered 2.0.0 - fine\nA 0 2 def", good);
	struct spool_msg p;
	CHECK_INT(spool_msg_parse(bad, strlen(bad), 0, &p, err, sizeof err), 0);
	CHECK_INT(p.natt, 1);
	CHECK_STR(p.att[0].text, "fine");
	spool_msg_free(&p);
	/* no recipients */
	const char *norcpt = "@ spoolbox 1\ni T4G2KQ80A1F3Z7K\nt 1\ns <>\n.\n";
	CHECK_INT(parse_err(norcpt, err, sizeof err), -1);
	CHECK_STR(err, "line 0: no recipients");
}

static void make_spool(struct spool *sp)
{
	char dir[512];
	snprintf(dir, sizeof dir, "%s/spool", unit_tmpdir());
	CHECK_INT(spool_open(sp, dir, 1, -1), 0);
}

/* Queues the sample message through enqueue and pick-up; its id and due time come back. */
static void queue_sample(struct spool *sp, char id[SPOOL_ID_MAX], long long *t)
{
	struct spool_msg m = sample();
	m.arrival = 0;
	struct spool_writer w;
	CHECK_INT(spool_writer_begin(sp, &w, &m), 0);
	CHECK_INT(spool_writer_write(&w, "x\n", 2), 0);
	strcpy(id, w.id);
	CHECK_INT(spool_writer_commit(&w), 0);
	CHECK_INT(spool_pickup_prepare(sp, id, t, NULL), 0);
	CHECK_INT(spool_pickup_finish(sp, id), 0);
}

static int collect_one(void *ctx, const char *id, long long t)
{
	char *out = ctx;
	strcpy(out, id);
	(void)t;
	return 0;
}

static long long seen_t;
static int collect_t(void *ctx, const char *id, long long t)
{
	(void)ctx;
	(void)id;
	seen_t = t;
	return 0;
}

TEST(enqueue_pickup_update_remove)
{
	struct spool sp;
	make_spool(&sp);
	struct spool_msg m = sample();
	m.arrival = 0;
	struct spool_writer w;
	CHECK_INT(spool_writer_begin(&sp, &w, &m), 0);
	const char body[] = "Subject: hi\n\n\xc3\xa9t\xc3\xa9\n";
	CHECK_INT(spool_writer_write(&w, body, sizeof body - 1), 0);
	char id[SPOOL_ID_MAX];
	strcpy(id, w.id);
	/* invisible before commit */
	char seen[SPOOL_ID_MAX] = "";
	CHECK_INT(spool_incoming_each(&sp, collect_one, seen), 0);
	CHECK_STR(seen, "");
	CHECK_INT(spool_writer_commit(&w), 0);
	CHECK_INT(spool_incoming_each(&sp, collect_one, seen), 0);
	CHECK_STR(seen, id);
	long long arrival;
	struct spool_msg env;
	memset(&env, 0, sizeof env);
	CHECK_INT(spool_pickup_prepare(&sp, id, &arrival, &env), 0);
	CHECK_INT(spool_sync_dirty(&sp), 0);
	CHECK_INT(spool_pickup_finish(&sp, id), 0);
	CHECK_INT(spool_sync_dirty(&sp), 0);
	seen_t = 0;
	CHECK_INT(spool_due_each(&sp, arrival, collect_t, NULL), 0);
	CHECK_INT(seen_t, arrival);

	struct spool_msg c;
	int fd;
	char err[256], path[SPOOL_PATH_MAX];
	CHECK_INT(spool_ctl_load(&sp, id, 0, &c, &fd, err, sizeof err), 0);
	/* the envelope handed on by pick-up is what the control file says (issue 9 point 7) */
	CHECK_STR(env.id, c.id);
	CHECK_INT(env.arrival, c.arrival);
	CHECK_STR(env.sender, c.sender);
	CHECK_INT(env.nrcpt, c.nrcpt);
	for (size_t i = 0; i < c.nrcpt && i < env.nrcpt; i++) {
		CHECK_INT(env.rcpt[i].off, c.rcpt[i].off);
		CHECK_INT(env.rcpt[i].tag, c.rcpt[i].tag);
		CHECK_STR(env.rcpt[i].channel, c.rcpt[i].channel);
		CHECK_STR(env.rcpt[i].host, c.rcpt[i].host);
	}
	spool_msg_free(&env);
	CHECK_INT(c.size, (long long)sizeof body - 1);
	CHECK_INT(c.body8, 1);
	spool_path_ctl(&sp, id, path, sizeof path);
	c.rcpt[1].tag = RT_TRANSIT;
	c.rcpt[1].pid = 4242;
	c.rcpt[1].next = 1795246801;
	CHECK_INT(spool_rcpt_update(fd, &c.rcpt[1], path), 0);
	struct spool_attempt a = {1, 1795246802, "deferred", "delayed", "4.4.1", (char *)"mx.example.com[192.0.2.1]",
	                          (char *)"451 try\r\nagain"};
	CHECK_INT(spool_attempt_append(fd, &a, path), 0);
	c.rcpt[1].tag = RT_DEFERRED;
	c.rcpt[1].pid = 0;
	c.rcpt[1].tries = 1;
	CHECK_INT(spool_rcpt_update(fd, &c.rcpt[1], path), 0);
	close(fd);
	spool_msg_free(&c);
	CHECK_INT(spool_ctl_load(&sp, id, 1, &c, &fd, err, sizeof err), 0);
	close(fd);
	CHECK_INT(c.rcpt[1].tag, RT_DEFERRED);
	CHECK_INT(c.rcpt[1].tries, 1);
	CHECK_INT(c.rcpt[1].next, 1795246801);
	CHECK_INT(c.rcpt[0].tag, RT_NEW);
	CHECK_INT(c.natt, 1);
	CHECK_STR(c.att[0].text, "451 try  again");
	CHECK_STR(c.att[0].remote, "mx.example.com[192.0.2.1]");
	CHECK_STR(c.att[0].enh, "4.4.1");
	spool_msg_free(&c);

	/* the message part is exactly what was written */
	int mfd = spool_msg_open(&sp, id, (off_t)0);
	CHECK(mfd >= 0);
	close(mfd);
	CHECK_INT(spool_ctl_load(&sp, id, 1, &c, &fd, err, sizeof err), 0);
	close(fd);
	mfd = spool_msg_open(&sp, id, c.body_off);
	char got[64] = {0};
	CHECK_INT(read(mfd, got, sizeof got), (long long)sizeof body - 1);
	CHECK(memcmp(got, body, sizeof body - 1) == 0);
	close(mfd);
	spool_msg_free(&c);

	/* reschedule into a later bucket, then remove */
	CHECK_INT(spool_due_move(&sp, id, arrival, arrival + 3 * SPOOL_BUCKET), 0);
	seen_t = 0;
	CHECK_INT(spool_due_each(&sp, arrival, collect_t, NULL), 0);
	CHECK_INT(seen_t, 0);
	CHECK_INT(spool_due_next_bucket(&sp, arrival), ((arrival + 3 * SPOOL_BUCKET) / SPOOL_BUCKET) * SPOOL_BUCKET);
	CHECK_INT(spool_remove(&sp, id, arrival + 3 * SPOOL_BUCKET), 0);
	struct stat st;
	CHECK(stat(path, &st) < 0);
	spool_path_msg(&sp, id, path, sizeof path);
	CHECK(stat(path, &st) < 0);
	CHECK_INT(spool_due_each(&sp, arrival + 4 * SPOOL_BUCKET, collect_t, NULL), 0);
}

TEST(append_repairs_torn_tail)
{
	char path[512];
	snprintf(path, sizeof path, "%s/ctl", unit_tmpdir());
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(write(fd, "x\nA 0 1 ok deliv", 16) == 16);
	/* the torn record is not kept as a line of its own (a malformed line would make the next
	 * load rebuild the file): the new record replaces it, and the rest of it goes */
	CHECK_INT(spool_record_append(fd, "W 5", path), 0);
	char buf[64] = {0};
	CHECK(pread(fd, buf, sizeof buf, 0) > 0);
	CHECK_STR(buf, "x\nW 5\n");
	struct stat st;
	CHECK(fstat(fd, &st) == 0 && st.st_size == 6);
	/* a torn record shorter than the new one */
	CHECK(pwrite(fd, "A", 1, 6) == 1);
	CHECK_INT(spool_record_append(fd, "A 0 2 ok delivered 2.0.0 - fine", path), 0);
	memset(buf, 0, sizeof buf);
	CHECK(pread(fd, buf, sizeof buf, 0) > 0);
	CHECK_STR(buf, "x\nW 5\nA 0 2 ok delivered 2.0.0 - fine\n");
	close(fd);
}

TEST(writer_abort_leaves_nothing)
{
	struct spool sp;
	make_spool(&sp);
	struct spool_msg m = sample();
	struct spool_writer w;
	CHECK_INT(spool_writer_begin(&sp, &w, &m), 0);
	char tmp[SPOOL_PATH_MAX];
	strcpy(tmp, w.tmppath);
	spool_writer_abort(&w);
	struct stat st;
	CHECK(stat(tmp, &st) < 0);
	char seen[SPOOL_ID_MAX] = "";
	spool_incoming_each(&sp, collect_one, seen);
	CHECK_STR(seen, "");
}

TEST(trigger_reaches_reader)
{
	struct spool sp;
	make_spool(&sp);
	/* no reader: silently nothing */
	CHECK_INT(spool_trigger_send(&sp, "Q"), -1);
	int fd = spool_trigger_open(&sp);
	CHECK(fd >= 0);
	spool_trigger_pull(&sp);
	CHECK_INT(spool_trigger_send(&sp, "Rexample.com"), 0);
	char buf[64] = {0};
	CHECK_INT(spool_trigger_drain(fd, buf, sizeof buf), 14);
	CHECK_STR(buf, "\nRexample.com\n");
	close(fd);
}

TEST(clean_removes_only_leftovers)
{
	struct spool sp;
	make_spool(&sp);
	/* a complete queued message stays */
	char keep[SPOOL_ID_MAX], gone[SPOOL_ID_MAX], path[SPOOL_PATH_MAX];
	long long t, t2;
	queue_sample(&sp, keep, &t);
	/* a second one interrupted in R2: due link and .c gone, .d left */
	queue_sample(&sp, gone, &t2);
	spool_path_ctl(&sp, gone, path, sizeof path);
	CHECK_INT(unlink(path), 0);
	/* an old and a fresh temporary file */
	char old[SPOOL_PATH_MAX], fresh[SPOOL_PATH_MAX];
	snprintf(old, sizeof old, "%s/tmp/1.2.3", sp.dir);
	snprintf(fresh, sizeof fresh, "%s/tmp/4.5.6", sp.dir);
	close(open(old, O_CREAT | O_WRONLY, 0600));
	close(open(fresh, O_CREAT | O_WRONLY, 0600));
	struct timespec ts[2] = {{1000, 0}, {1000, 0}};
	utimensat(AT_FDCWD, old, ts, 0);
	struct spool_clean_counts c;
	CHECK_INT(spool_clean(&sp, time(NULL), SPOOL_TMP_MAX_AGE, &c), 0);
	CHECK_INT(c.tmp, 1);
	CHECK_INT(c.orphan_msg, 1);
	CHECK_INT(c.stale_due, 1);
	struct stat st;
	CHECK(stat(old, &st) < 0);
	CHECK(stat(fresh, &st) == 0);
	spool_path_msg(&sp, gone, path, sizeof path);
	CHECK(stat(path, &st) < 0);
	spool_path_msg(&sp, keep, path, sizeof path);
	CHECK(stat(path, &st) == 0);
	spool_path_due(&sp, keep, t, path, sizeof path);
	CHECK(stat(path, &st) == 0);
}

TEST(due_index_survives_bucket_removed_behind_its_back)
{
	struct spool sp;
	make_spool(&sp);
	char id[SPOOL_ID_MAX], dir[SPOOL_PATH_MAX];
	long long t;
	queue_sample(&sp, id, &t);
	long long later = t + 5 * SPOOL_BUCKET;
	/* the bucket is made and remembered, emptied, then removed by someone else (cleaner) */
	CHECK_INT(spool_due_move(&sp, id, t, later), 0);
	CHECK_INT(spool_due_move(&sp, id, later, t), 0);
	snprintf(dir, sizeof dir, "%s/due/%lld", sp.dir, later / SPOOL_BUCKET);
	CHECK_INT(rmdir(dir), 0);
	CHECK_INT(spool_due_move(&sp, id, t, later), 0);
	seen_t = 0;
	CHECK_INT(spool_due_each(&sp, later, collect_t, NULL), 0);
	CHECK_INT(seen_t, later);
}

TEST(message_file_mode_ignores_umask)
{
	struct spool sp;
	make_spool(&sp);
	struct spool_msg m = sample();
	m.arrival = 0;
	struct spool_writer w;
	mode_t old = umask(077);
	CHECK_INT(spool_writer_begin(&sp, &w, &m), 0);
	umask(old);
	char id[SPOOL_ID_MAX], path[SPOOL_PATH_MAX];
	strcpy(id, w.id);
	CHECK_INT(spool_writer_commit(&w), 0);
	spool_path_incoming(&sp, id, path, sizeof path);
	struct stat st;
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_mode & 07777, 0640);
}
