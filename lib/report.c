/*
 * report.c - apcconv's summary line and --stats=json object.
 */
#include <inttypes.h>
#include <string.h>
#include <sys/resource.h>

#include "json.h"
#include "report.h"
#include "util.h"

void apc_report_formats(FILE *f)
{
	const struct apc_format *const *fm = apc_format_list();

	fprintf(f, "%-10s %-33s %s\n", "FORMAT", "READS", "DESCRIPTION");
	for (; *fm; fm++)
		fprintf(f, "%-10s %-33s %s\n", (*fm)->name, (*fm)->reads, (*fm)->description);
}

static void report_span(FILE *f, const struct apc_conv_result *r)
{
	uint64_t span = r->have_ts ? r->last_ts - r->first_ts : 0;
	fprintf(f, "span %" PRIu64 ".%09" PRIu64 " s", span / 1000000000u, span % 1000000000u);
}

void apc_report_line(FILE *f, const char *prog, const char *input, const struct apc_conv_result *r,
		     double seconds)
{
	const struct apc_model *m = &r->model;
	/* "-" as the error messages name it */
	const char *in = apc_input_name(input);
	const char *out = !r->output[0] ? "nothing written" : strcmp(r->output, "-") ? r->output : "<stdout>";

	fprintf(f, "%s: %s (%s) -> %s: %" PRIu64 " bytes in, %" PRIu64 " events, %" PRIu64
		   " frames, %" PRIu64 " bytes written, ",
		prog, in, r->format ? r->format->name : r->kind[0] ? r->kind : "?", out,
		r->bytes_in,
		m->events_read, r->wstats.frames, r->wstats.bytes);
	report_span(f, r);
	fprintf(f, ", %.2f s", seconds);
	if (r->events_cut || r->perf_cut)
		fprintf(f, "; outside --begin/--end: %" PRIu64, r->events_cut);
	if (r->perf_cut)
		fprintf(f, " and %" PRIu64 " perf record%s", r->perf_cut, r->perf_cut == 1 ? "" : "s");
	if (r->wstats.reordered)
		fprintf(f, "; moved forward to keep per-core order: %" PRIu64, r->wstats.reordered);
	for (size_t i = 0; i < m->nunmapped; i++)
		fprintf(f, "%s %s: %" PRIu64, i ? "," : "; not mapped:", m->unmapped[i].what,
			m->unmapped[i].count);
	if (m->more_damage_total)
		fprintf(f, "; problems: %" PRIu64, m->more_damage_total + 1);
	fputc('\n', f);
}

void apc_report_more_damage(FILE *f, const char *prog, const struct apc_conv_result *r)
{
	const struct apc_model *m = &r->model;
	char buf[1024];

	for (size_t i = 0; i < m->nmore_damage; i++)
		fprintf(f, "%s: %s\n", prog, apc_err_format(&m->more_damage[i], buf, sizeof buf));
	if (m->more_damage_total > m->nmore_damage)
		fprintf(f, "%s: %" PRIu64 " more damaged streams not shown\n", prog,
			m->more_damage_total - m->nmore_damage);
}

/* The process's CPU time (every thread's, those ended too) and peak RSS
 * so far. */
static void report_usage(double *user, double *sys, long *maxrss_kib)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		memset(&ru, 0, sizeof ru);
	*user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	*sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	*maxrss_kib = ru.ru_maxrss; /* KiB on Linux */
}

void apc_report_resources(FILE *f, const char *prog, const struct apc_conv_result *r, double seconds)
{
	double user, sys;
	long rss;

	report_usage(&user, &sys, &rss);
	fprintf(f, "%s:   %.2f s wall, %.2f s user, %.2f s system (%.2f CPUs busy), peak RSS %.1f MiB; threads: read-ahead %s, write-behind %s\n",
		prog, seconds, user, sys, seconds > 0 ? (user + sys) / seconds : 0.0,
		(double)rss / 1024.0, r->read_ahead ? "yes" : "no", r->wstats.write_thread ? "yes" : "no");
}

void apc_report_kinds(FILE *f, const char *prog, const struct apc_conv_result *r)
{
	const struct apc_model *m = &r->model;

	for (size_t i = 0; i < m->nkinds; i++)
		fprintf(f, "%s:   %-40s %12" PRIu64 "  -> %s\n", prog, m->kinds[i].what, m->kinds[i].count,
			m->kinds[i].became);
}

void apc_report_json(FILE *f, const char *input, const struct apc_conv_result *r, double seconds,
		     int status, const struct apc_err *err)
{
	const struct apc_model *m = &r->model;
	int first = 1;
	double user, sys;
	long rss;

	fputs("{\"input\":", f);
	apc_json_cstr(f, input);
	fputs(",\"format\":", f);
	apc_json_cstr(f, r->format ? r->format->name : NULL);
	fputs(",\"output\":", f);
	apc_json_cstr(f, r->output[0] ? r->output : NULL);
	fprintf(f, ",\"status\":%d,\"ok\":%s", status, status == 0 ? "true" : "false");
	/* a refusal or I/O error: the message, as on standard error */
	if (status == 2 && err && err->status < 0) {
		char buf[1024];
		fputs(",\"error\":", f);
		apc_json_cstr(f, apc_err_format(err, buf, sizeof buf));
	}
	fprintf(f, ",\"bytes_in\":%" PRIu64 ",\"records_read\":%" PRIu64 ",\"events\":%" PRIu64,
		r->bytes_in, m->records_read, m->events_read);
	fputs(",\"events_by_type\":{", f);
	for (int t = 1; t < APC_EV_TYPE_COUNT; t++) {
		if (!m->ev_count[t])
			continue;
		fprintf(f, "%s\"%s\":%" PRIu64, first ? "" : ",", apc_ev_type_name(t), m->ev_count[t]);
		first = 0;
	}
	fprintf(f, "},\"counters\":%zu", m->ncounters);
	fprintf(f, ",\"frames\":%" PRIu64 ",\"bytes_written\":%" PRIu64 ",\"messages\":%" PRIu64,
		r->wstats.frames, r->wstats.bytes, r->wstats.messages);
	fprintf(f, ",\"reordered\":%" PRIu64 ",\"outside_window\":%" PRIu64, r->wstats.reordered,
		r->events_cut);
	fprintf(f, ",\"perf_records_outside_window\":%" PRIu64, r->perf_cut);
	fprintf(f, ",\"first_ts\":%" PRIu64 ",\"last_ts\":%" PRIu64 ",\"seconds\":%.3f",
		r->have_ts ? r->first_ts : 0, r->have_ts ? r->last_ts : 0, seconds);
	report_usage(&user, &sys, &rss);
	fprintf(f, ",\"cpu_user_s\":%.3f,\"cpu_system_s\":%.3f,\"max_rss_kib\":%ld", user, sys, rss);
	fprintf(f, ",\"threads\":{\"reader\":%s,\"writer\":%s}", r->read_ahead ? "true" : "false",
		r->wstats.write_thread ? "true" : "false");
	fputs(",\"not_mapped\":{", f);
	for (size_t i = 0; i < m->nunmapped; i++) {
		if (i)
			fputc(',', f);
		apc_json_cstr(f, m->unmapped[i].what);
		fprintf(f, ":%" PRIu64, m->unmapped[i].count);
	}
	fputc('}', f);
	fputs(",\"records_by_kind\":[", f);
	for (size_t i = 0; i < m->nkinds; i++) {
		fputs(i ? ",{\"kind\":" : "{\"kind\":", f);
		apc_json_cstr(f, m->kinds[i].what);
		fputs(",\"became\":", f);
		apc_json_cstr(f, m->kinds[i].became);
		fprintf(f, ",\"count\":%" PRIu64 "}", m->kinds[i].count);
	}
	fputc(']', f);
	if (r->data_err.status < 0) {
		char buf[1024];
		fputs(",\"damage\":", f);
		apc_json_cstr(f, apc_err_format(&r->data_err, buf, sizeof buf));
		/* the damage of other streams, as apcconv lists it, and the
		 * count of all (past those listed) */
		fputs(",\"more_damage\":[", f);
		for (size_t i = 0; i < m->nmore_damage; i++) {
			if (i)
				fputc(',', f);
			apc_json_cstr(f, apc_err_format(&m->more_damage[i], buf, sizeof buf));
		}
		fprintf(f, "],\"problems\":%" PRIu64, m->more_damage_total + 1);
	}
	fputs("}\n", f);
}
