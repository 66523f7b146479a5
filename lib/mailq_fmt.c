/* mailq's output formats (docs/man/mailq.1): the Postfix listing that monitoring parses
 * (check_mailq reads its last line), -v with every attempt, --json one object per message,
 * and -s one line of counts. Addresses and replies come from the spool decoded, so they may
 * hold any byte: the text formats show control bytes as '?', JSON escapes them. */
#include "mailq.h"
#include "util.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Postfix's long-queue-id layout (postqueue's showq_compat): id, size, arrival, address. */
#define MQ_HEAD "%-17s %8s %-19s %s\n"
#define MQ_SENDER "%-17s %8lld %19.19s %s\n"

void mq_out_init(struct mq_out *o, FILE *f, long long now)
{
	memset(o, 0, sizeof *o);
	o->f = f;
	o->now = now;
}

/* s with control bytes as '?', cut to fit out (the spool's cleaner with another mark). */
static const char *safe(const char *s, char *out, size_t size)
{
	return spool_clean_as(out, size, s, '?');
}

/* Both layouts written by hand: strftime would pull 4 KiB of libc in. */
static void when(long long t, char out[32])
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!civil_time(&tt, &tm) || str_asctime(out, 32, &tm) < 0)
		str_lcpy(out, "-", 32);
}

static void iso(long long t, char out[32])
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!civil_time(&tt, &tm) || str_fmt(out, 32, "%04d-%02d-%02d %02d:%02d:%02d", tm.tm_year + 1900,
	                                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec) < 0)
		str_lcpy(out, "-", 32);
}

static int done(char tag)
{
	return tag == RT_DELIVERED || tag == RT_REPORTED;
}

/* A recipient's state by its spool tag (str_bykey: the tags are the letters of spool.h) */
static const char *state_name(char tag)
{
	_Static_assert(RT_NEW == 'N' && RT_DEFERRED == 'Q' && RT_TRANSIT == 'T' && RT_DELIVERED == 'D' &&
	               RT_FAILED == 'F' && RT_REPORTED == 'X' && RT_SUCCESS == 'S', "spool.h's tags");
	return str_bykey("Nnew\0Qdeferred\0Tin-transit\0Ddelivered\0Ffailed\0Xreported\0Sdelivered-notice-owed\0\0unknown",
	                 (unsigned char)tag);
}

/* The last attempt of recipient i, or NULL: a backward walk over the attempts (no array, no
 * malloc for it). */
/* noinline: one copy, not one per caller (docs/size.md) */
__attribute__((noinline)) static const struct spool_attempt *last_att(const struct spool_msg *m, size_t i)
{
	for (size_t k = m->natt; k-- > 0;)
		if (m->att[k].rcpt == (int)i)
			return &m->att[k];
	return NULL;
}

/* 1 when a recipient of m has that tag (RT_TRANSIT: in transit; RT_DEFERRED: deferred). */
static int any_tag(const struct spool_msg *m, char tag)
{
	for (size_t i = 0; i < m->nrcpt; i++)
		if (m->rcpt[i].tag == tag)
			return 1;
	return 0;
}

/* The reason shown for a recipient: "ENH REMOTE: TEXT" of its last attempt. */
static void reason(const struct spool_attempt *a, char *out, size_t size)
{
	char r[300], t[SPOOL_TEXT_MAX + 1];
	out[0] = 0;
	if (!a)
		return;
	int enh = strcmp(a->enh, "-") != 0;
	snprintf(out, size, "%s%s%s%s%s", enh ? a->enh : "", enh ? " " : "", a->remote ? safe(a->remote, r, sizeof r) : "",
	         a->remote ? ": " : "", safe(a->text, t, sizeof t));
}

static void damaged_line(struct mq_out *o, const struct mq_item *it)
{
	char id[SPOOL_ID_MAX + 1], why[sizeof it->damage];
	snprintf(id, sizeof id, "%s?", it->id);
	fprintf(o->f, MQ_HEAD, id, "-", "-", "(damaged)");
	fprintf(o->f, "%*s(%s)\n", 0, "", safe(it->damage, why, sizeof why));
}

void mq_postfix_msg(struct mq_out *o, const struct mq_item *it)
{
	const struct spool_msg *m = it->m;
	if (o->count)
		putc('\n', o->f);
	else
		fprintf(o->f, MQ_HEAD, "----Queue ID-----", "--Size--", "---Arrival Time----", "--Sender/Recipient------");
	o->count++;
	if (!m) {
		damaged_line(o, it);
		return;
	}
	o->bytes += (unsigned long long)(m->size > 0 ? m->size : 0);
	char id[SPOOL_ID_MAX + 2], at[32], addr[SPOOL_ADDR_MAX + 1];
	snprintf(id, sizeof id, "%s%s", it->id, it->held ? "!" : any_tag(m, RT_TRANSIT) ? "*" : "");
	when(m->arrival, at);
	fprintf(o->f, MQ_SENDER, id, m->size, at, *m->sender ? safe(m->sender, addr, sizeof addr) : "MAILER-DAEMON");
	char prev[SPOOL_TEXT_MAX + 300], why[sizeof prev];
	prev[0] = 0; /* one byte, not the whole buffer zeroed */
	for (size_t i = 0; i < m->nrcpt; i++) {
		const struct spool_rcpt *r = &m->rcpt[i];
		if (!o->verbose && done(r->tag))
			continue;
		reason(last_att(m, i), why, sizeof why);
		/* as Postfix: a reason line when it differs from the previous recipient's */
		if (strcmp(why, prev) != 0) {
			int pad = 76 - (int)strlen(why[0] ? why : "reason unavailable");
			fprintf(o->f, "%*s(%s)\n", pad > 0 ? pad : 0, "", why[0] ? why : "reason unavailable");
			str_lcpy(prev, why, sizeof prev);
		}
		fprintf(o->f, MQ_HEAD, "", "", "", safe(r->addr, addr, sizeof addr));
		if (!o->verbose)
			continue;
		char nx[32];
		iso(r->next, nx);
		fprintf(o->f, "%47sstate %s, %u tries, %s %s, via %s/%s\n", "", state_name(r->tag), r->tries,
		        r->tag == RT_DEFERRED || r->tag == RT_NEW ? "next" : "since", r->next ? nx : "now", r->channel, r->host);
		for (size_t k = 0; k < m->natt; k++) {
			const struct spool_attempt *x = &m->att[k];
			if (x->rcpt != (int)i)
				continue;
			char t[32], rem[300], txt[SPOOL_TEXT_MAX + 1];
			iso(x->time, t);
			fprintf(o->f, "%47s%s %s %s %s %s: %s\n", "", t, x->code, x->action, x->enh,
			        x->remote ? safe(x->remote, rem, sizeof rem) : "-", safe(x->text, txt, sizeof txt));
		}
	}
}

void mq_postfix_end(struct mq_out *o)
{
	fprintf(o->f, o->count ? "\n-- %llu Kbytes in %lu Request%s.\n" : "Mail queue is empty\n", o->bytes / 1024, o->count,
	        o->count == 1 ? "" : "s");
}

/* Length of the UTF-8 sequence at s (RFC 3629: no overlongs, no surrogates, at most U+10FFFF),
 * 0 when the bytes there are not one. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	size_t n;
	unsigned min;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, min = 0x10000;
	else
		return 0;
	unsigned v = c & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	return n;
}

void mq_json_str(FILE *f, const char *s)
{
	putc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
		size_t n;
		if (*p == '"' || *p == '\\') {
			putc('\\', f);
			putc(*p++, f);
		} else if (*p >= 0x20 && *p < 0x7f) {
			putc(*p++, f);
		} else if (*p >= 0x80 && (n = utf8_len(p))) {
			fwrite(p, 1, n, f);
			p += n;
		} else {
			/* a control byte, or a byte that is not UTF-8: the code point of the same value */
			fprintf(f, "\\u%04x", *p++);
		}
	}
	putc('"', f);
}

static void json_opt(FILE *f, const char *key, const char *v)
{
	fprintf(f, ",\"%s\":", key);
	if (v)
		mq_json_str(f, v);
	else
		fputs("null", f);
}

void mq_json_msg(struct mq_out *o, const struct mq_item *it)
{
	FILE *f = o->f;
	const struct spool_msg *m = it->m;
	o->count++;
	fprintf(f, "{\"id\":\"%s\",\"queue\":\"%s\"", it->id, it->where == MQ_INCOMING ? "incoming" : "queue");
	if (!m) {
		json_opt(f, "damaged", it->damage);
		fputs("}\n", f);
		return;
	}
	fprintf(f, ",\"size\":%lld,\"arrival\":%lld,\"sender\":", m->size, m->arrival);
	mq_json_str(f, m->sender);
	fprintf(f, ",\"held\":%s,\"in_transit\":%s,\"recipients\":[", it->held ? "true" : "false",
	        any_tag(m, RT_TRANSIT) ? "true" : "false");
	for (size_t i = 0; i < m->nrcpt; i++) {
		const struct spool_rcpt *r = &m->rcpt[i];
		const struct spool_attempt *a = last_att(m, i);
		fputs(i ? ",{\"address\":" : "{\"address\":", f);
		mq_json_str(f, r->addr);
		fprintf(f, ",\"channel\":\"%s\",\"host\":", r->channel);
		mq_json_str(f, r->host);
		fprintf(f, ",\"state\":\"%s\",\"tries\":%u", state_name(r->tag), r->tries);
		fprintf(f, r->tag == RT_DEFERRED || r->tag == RT_NEW ? ",\"next_attempt\":%lld" : ",\"next_attempt\":null",
		        r->next);
		json_opt(f, "enhanced", a && strcmp(a->enh, "-") ? a->enh : NULL);
		json_opt(f, "remote", a ? a->remote : NULL);
		json_opt(f, "text", a ? a->text : NULL);
		putc('}', f);
	}
	fputs("]}\n", f);
}

void mq_summary_add(struct mq_out *o, const struct mq_item *it)
{
	const struct spool_msg *m = it->m;
	o->count++;
	if (!m) {
		o->damaged++;
		return;
	}
	o->bytes += (unsigned long long)(m->size > 0 ? m->size : 0);
	if (!o->oldest || m->arrival < o->oldest)
		o->oldest = m->arrival;
	o->deferred += (unsigned long)any_tag(m, RT_DEFERRED);
	o->held += (unsigned long)!!it->held;
	o->transit += (unsigned long)any_tag(m, RT_TRANSIT);
	for (size_t k = 0; k < m->natt; k++) {
		const struct spool_attempt *a = &m->att[k];
		if (str_starts(a->code, "ok") || a->time < o->last_err_time)
			continue;
		char why[sizeof o->last_err - 40];
		reason(a, why, sizeof why);
		o->last_err_time = a->time;
		snprintf(o->last_err, sizeof o->last_err, "%s %s", it->id, why);
	}
}

void mq_summary_print(struct mq_out *o)
{
	fprintf(o->f, "queued=%lu deferred=%lu held=%lu in_transit=%lu damaged=%lu kbytes=%llu oldest=%lld last_error=%s\n",
	        o->count, o->deferred, o->held, o->transit, o->damaged, o->bytes / 1024,
	        o->oldest && o->now > o->oldest ? o->now - o->oldest : 0, o->last_err[0] ? o->last_err : "-");
}
