/*
 * test_ltt.c - the LTT reader: the tolerant eventdefs parser on every
 * historical core.xml, the type language on annotated bytes, the one
 * real trace (smp_example) against its reference listing, and
 * generated traces (tools/lttgen.c, included here) against their
 * ground truth.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input.h"
#include "ltt.h"
#include "t.h"

int lttgen_main(int argc, char **argv);
#define main lttgen_main
#include "../../tools/lttgen.c"
#undef main

/* ---- helpers ----------------------------------------------------------- */

static long file_read(void *ctx, void *buf, size_t n, struct apc_err *err)
{
	(void)err;
	return (long)fread(buf, 1, n, ctx);
}

/* Load every eventdefs/ *.xml of a trace dir and compile for ILP32. */
static int load_defs(const char *dir, struct apc_ltt_defs *d, struct apc_ltt_arch *a)
{
	char p[4096];
	struct dirent *de;
	DIR *dd;
	struct apc_err err;

	snprintf(p, sizeof p, "%s/eventdefs", dir);
	dd = opendir(p);
	if (!dd)
		return -1;
	apc_err_clear(&err);
	while ((de = readdir(dd))) {
		size_t len;
		char *b;
		if (!strstr(de->d_name, ".xml"))
			continue;
		snprintf(p, sizeof p, "%s/eventdefs/%s", dir, de->d_name);
		b = t_read_file(p, &len);
		if (!b || apc_ltt_defs_add(d, b, len, p, &err)) {
			free(b);
			closedir(dd);
			return -1;
		}
		free(b);
	}
	closedir(dd);
	apc_ltt_arch_set(a, "ILP32");
	return apc_ltt_defs_compile(d, a, &err);
}

/* Run the generator (tools/lttgen.c) with the arguments fmt makes,
 * split at spaces: its exit status. */
static int lttgen(const char *fmt, ...)
{
	char cmd[1400], *argv[32];
	int argc = 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	for (char *t = strtok(cmd, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	return lttgen_main(argc, argv);
}

/* A generated trace's definitions, with facility "extra" at the base its
 * control/facilities gives it (40, put by hand here), and their ids. */
static void load_gen_ids(const char *dir, struct apc_ltt_defs *d, struct apc_ltt_arch *a,
			 struct apc_ltt_ids *ids)
{
	struct apc_err err;

	T_EQ_INT(load_defs(dir, d, a), 0);
	for (size_t i = 0; i < d->nfacs; i++)
		if (!strcmp(d->facs[i].name, "extra")) {
			d->facs[i].base = GEN_EXTRA_BASE;
			d->facs[i].has_base = 1;
		}
	apc_err_clear(&err);
	T_EQ_INT(apc_ltt_ids_build(ids, d, &err), APC_OK);
}

/* Remove a test's temporary folder and what is in it. */
static void rm_rf(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		T_FAIL("cannot remove %s", dir);
}

/* Each file of the historical eventdefs in the shared test data at sd
 * whose name holds `part`, read whole and given to one(); how many, or
 * -1 (the test failed) when the folder cannot be read. */
static int each_history(const char *sd, const char *part,
			void (*one)(const char *name, const char *path, const char *b, size_t len))
{
	char dir[4096];
	DIR *dd;
	struct dirent *de;
	int files = 0;

	snprintf(dir, sizeof dir, "%s/ltt/eventdefs-history", sd);
	if (!(dd = opendir(dir))) {
		T_FAIL("cannot read %s", dir);
		return -1;
	}
	while ((de = readdir(dd))) {
		char p[8192];
		size_t len;
		char *b;

		if (de->d_name[0] == '.' || !strstr(de->d_name, part))
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
		b = t_read_file(p, &len);
		T_ASSERT(b != NULL);
		if (b)
			one(de->d_name, p, b, len);
		free(b);
		files++;
	}
	closedir(dd);
	return files;
}

static const struct apc_ltt_evdef *find_ev(const struct apc_ltt_defs *d, const char *fac,
					   const char *ev)
{
	for (size_t i = 0; i < d->nfacs; i++)
		if (!strcmp(d->facs[i].name, fac))
			for (size_t k = 0; k < d->facs[i].nevents; k++)
				if (!strcmp(d->facs[i].events[k].name, ev))
					return &d->facs[i].events[k];
	return NULL;
}

/* ---- parser and type language ------------------------------------------ */

static void xml_tolerant(void)
{
	static const char src[] =
		"<?xml version=\"1.0\"?><!-- c <x> -->\n"
		"<facility name=f per_trace>\n"
		"  <event name=e size=4/> text &lt;1&gt;\n"
		"  <field name=time><typeref name=timespec></event>\n" /* spec's typo */
		"  <x a='q' b = \"r s\"/>\n"
		"</facility></nothing>";
	struct apc_ltt_xnode *root;
	struct apc_err err;

	apc_err_clear(&err);
	T_EQ_INT(apc_ltt_xml_parse(src, sizeof src - 1, "t", &root, &err), APC_OK);
	const struct apc_ltt_xnode *f = apc_ltt_xml_child(root, "facility");
	T_ASSERT(f != NULL);
	if (!f) {
		apc_ltt_xml_free(root);
		return;
	}
	T_EQ_STR(apc_ltt_xml_attr(f, "name"), "f");
	T_EQ_STR(apc_ltt_xml_attr(f, "per_trace"), "");
	T_EQ_STR(apc_ltt_xml_attr(apc_ltt_xml_child(f, "event"), "size"), "4");
	T_EQ_STR(f->text, "text <1>");
	const struct apc_ltt_xnode *fl = apc_ltt_xml_child(f, "field");
	T_ASSERT(fl && apc_ltt_xml_child(fl, "typeref"));
	/* </event> closed nothing open, so <x> is still inside the field */
	T_ASSERT(apc_ltt_xml_child(fl, "x") != NULL);
	T_EQ_STR(apc_ltt_xml_attr(apc_ltt_xml_child(fl, "x"), "b"), "r s");
	/* Odd but whole: not cut short. */
	T_ASSERT(root->cut_msg == NULL && f->cut == APC_LTT_CUT_NONE);
	apc_ltt_xml_free(root);

	/* Entities: the five decoded anywhere in a run, anything else (and a
	 * cut one at the end) kept as written. */
	static const char ent[] = "<a x=\"&amp;&amp;b&\" y='&quot;&apos;'>t&lt;&zz;&gt<b/>"
				  "&amp;\n</a>";
	T_EQ_INT(apc_ltt_xml_parse(ent, sizeof ent - 1, "t", &root, &err), APC_OK);
	f = apc_ltt_xml_child(root, "a");
	T_ASSERT(f != NULL);
	if (f) {
		T_EQ_STR(apc_ltt_xml_attr(f, "x"), "&&b&");
		T_EQ_STR(apc_ltt_xml_attr(f, "y"), "\"'");
		T_EQ_STR(f->text, "t<&zz;&gt &");
	}
	apc_ltt_xml_free(root);

	/* Nesting beyond the limit is refused, not a stack overflow. */
	char deep[70 * 3 + 1];
	for (int i = 0; i < 70; i++)
		memcpy(deep + i * 3, "<a>", 3);
	T_EQ_INT(apc_ltt_xml_parse(deep, 210, "t", &root, &err), APC_EDATA);
}

/* One historical eventdefs file parses and compiles, with the event
 * sizes each core.xml is known to give. */
static void history_file_compiles(const char *name, const char *p, const char *b, size_t len)
{
	struct apc_ltt_defs d = {0};
	struct apc_ltt_arch a = {0};
	struct apc_err err;

	apc_err_clear(&err);
	apc_ltt_arch_set(&a, "ILP32");
	/* LTTng files are parsed and compiled too (pointer, size_t,
	 * long are in the type language here). */
	int st = apc_ltt_defs_add(&d, b, len, p, &err);
	if (!st)
		st = apc_ltt_defs_compile(&d, &a, &err);
	if (st)
		T_FAIL("%s: %s", name, err.msg);
	T_ASSERT(d.nfacs >= 1 && d.facs[0].nevents >= 1);
	if (strstr(name, "core.xml.")) {
		const struct apc_ltt_evdef *e = find_ev(&d, "core", "syscall_entry");
		T_ASSERT(e && e->fixed == 5);
		e = find_ev(&d, "core", "file_system");
		T_ASSERT(e && e->fixed == -1);
		e = find_ev(&d, "core", "soft_irq");
		T_ASSERT(e && e->fixed == 5 && e->type);
		if (!strstr(name, "2003")) {
			e = find_ev(&d, "core", "block_start");
			T_ASSERT(e && e->fixed == 20);
			e = find_ev(&d, "core", "time_heartbeat");
			T_ASSERT(e && e->fixed == 16);
		}
	}
	if (strstr(name, "lttng-2005-09_process")) {
		apc_ltt_defs_free(&d);
		apc_ltt_arch_set(&a, "LP64");
		apc_ltt_defs_add(&d, b, len, p, &err);
		T_EQ_INT(apc_ltt_defs_compile(&d, &a, &err), APC_OK);
		const struct apc_ltt_evdef *e = find_ev(&d, "process", "kernel_thread");
		T_ASSERT(e && e->fixed == 12); /* u32 + 64-bit pointer */
	}
	apc_ltt_defs_free(&d);
}

static void eventdefs_history(void)
{
	const char *sd = t_shared_testdata();

	if (!sd)
		T_SKIP("../shared/testdata absent");
	T_EQ_INT(each_history(sd, "", history_file_compiles), 12);
}

/*
 * A buffer that ends too soon is told apart from the tolerated quirks:
 * the elements it cuts are marked, and the root says what is cut and
 * where (its length).
 */
static void xml_cut(void)
{
	static const struct { const char *src, *msg; } cuts[] = {
		{"<facility name=core><event name=a></event><event name=\"pro",
		 "cut short inside the start tag of <event>, in its attribute name=\"pro\" "
		 "(the file ends before </facility>)"},
		{"<facility name=core><event name=a></event>\n",
		 "cut short inside <facility name=\"core\"> (the file ends before </facility>)"},
		{"<facility name=core><event name=a><struct><field name=x><uint siz",
		 "cut short inside the start tag of <uint>, in an attribute name (\"siz\"), in "
		 "<field name=\"x\"> of <event name=\"a\"> (the file ends before </facility>)"},
		{"<facility name=core><type name=t><struct><description>ab",
		 "cut short inside <description> in <type name=\"t\"> (the file ends before </facility>)"},
		{"<facility name=core><event name=a></event></facil",
		 "cut short inside the end tag \"</facil\" (the file ends before </facility>)"},
		{"<facility name=core></facility><!-- tra", "cut short inside a comment \"<!-- tra\""},
		{"<?xml version", "cut short inside a processing instruction \"<?xml version\""},
		{"<facility name=core></facility><", "cut short inside a tag \"<\""},
		{"<system ltt_block_size=\"819",
		 "cut short inside the start tag of <system>, in its attribute ltt_block_size=\"819\" "
		 "(the file ends before </system>)"},
	};
	struct apc_ltt_xnode *root;
	struct apc_err err;

	apc_err_clear(&err);
	for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
		size_t len = strlen(cuts[i].src);
		T_EQ_INT(apc_ltt_xml_parse(cuts[i].src, len, "t", &root, &err), APC_OK);
		if (!root)
			continue;
		T_ASSERT(root->cut_msg != NULL);
		if (root->cut_msg)
			T_EQ_STR(root->cut_msg, cuts[i].msg);
		T_EQ_INT(root->cut_off, (int64_t)len);
		apc_ltt_xml_free(root);
	}
	/* Which elements are cut: the open ones, and the one whose tag is;
	 * an element closed by its parent's close tag is whole. */
	static const char src[] = "<facility name=core><event name=a><struct></event>"
				  "<event name=b><uint size=4/></event><event name=\"c";
	T_EQ_INT(apc_ltt_xml_parse(src, sizeof src - 1, "t", &root, &err), APC_OK);
	const struct apc_ltt_xnode *f = apc_ltt_xml_child(root, "facility");
	T_ASSERT(f && f->nkids == 3);
	if (f && f->nkids == 3) {
		T_EQ_INT(f->cut, APC_LTT_CUT_OPEN);
		T_EQ_INT(f->kids[0]->cut, APC_LTT_CUT_NONE);
		T_EQ_INT(f->kids[0]->kids[0]->cut, APC_LTT_CUT_NONE);
		T_EQ_INT(f->kids[1]->cut, APC_LTT_CUT_NONE);
		T_EQ_INT(f->kids[2]->cut, APC_LTT_CUT_TAG);
		T_EQ_STR(apc_ltt_xml_attr(f->kids[2], "name"), "c");
	}
	apc_ltt_xml_free(root);
}

/*
 * An eventdefs file cut short: APC_EDATA at its length, named, with
 * what was whole before the cut added (d->cut).  An event cut is left
 * out; one that needs a type the cut took is lost (undefined, keeping
 * its id); the ids before the cut are as in the whole file, builtins
 * numbered as in it even when the cut took block_start.
 */
static void defs_cut(void)
{
	static const char src[] =
		"<facility name=core>\n"
		"<event name=facility_load><struct><field name=name><string/></field></struct></event>\n"
		"<event name=a><typeref name=t/></event>\n"
		"<event name=b><uint size=2/></event>\n"
		"<event name=c><struct><field name=x><uint size=4/></field><field name=y><ui";
	struct apc_ltt_defs d = {0};
	struct apc_ltt_arch a = {0};
	struct apc_ltt_ids ids;
	struct apc_err err;

	apc_err_clear(&err);
	apc_ltt_arch_set(&a, "ILP32");
	T_EQ_INT(apc_ltt_defs_add(&d, src, sizeof src - 1, "x/eventdefs/core.xml", &err), APC_EDATA);
	T_EQ_INT(d.cut, 1);
	T_EQ_STR(err.file, "x/eventdefs/core.xml");
	T_EQ_INT(err.offset, (int64_t)(sizeof src - 1));
	T_EQ_STR(err.msg, "cut short inside the start tag of <ui>, in <field name=\"y\"> of "
			  "<event name=\"c\"> (the file ends before </facility>)");
	T_ASSERT(d.nfacs == 1 && d.facs[0].cut && d.facs[0].nevents == 3);
	T_ASSERT(find_ev(&d, "core", "c") == NULL);
	apc_err_clear(&err);
	T_EQ_INT(apc_ltt_defs_compile(&d, &a, &err), APC_OK);
	const struct apc_ltt_evdef *ea = find_ev(&d, "core", "a"), *eb = find_ev(&d, "core", "b");
	T_ASSERT(ea && ea->lost && eb && !eb->lost && eb->fixed == 2);
	T_EQ_INT(apc_ltt_ids_build(&ids, &d, &err), APC_OK);
	/* facility_load at 0 as in the whole file: a at 1 (undefined), b at 2 */
	T_ASSERT(ids.n >= 20 && ids.ev[0] == find_ev(&d, "core", "facility_load"));
	T_ASSERT(ids.ev[1] == NULL && ids.fac[1] == NULL && ids.ev[2] == eb);
	/* the builtins the cut took come from the builtin facility */
	T_ASSERT(ids.ev[APC_LTT_ID_BLOCK_START] && ids.ev[APC_LTT_ID_BLOCK_START]->fixed == 20);
	apc_ltt_ids_free(&ids);
	apc_ltt_defs_free(&d);

	/* The same undefined typeref in a whole file is an error of it,
	 * named at the file and the typeref's offset. */
	static const char whole[] = "<facility name=core>\n<event name=a><typeref name=t/></event>\n"
				    "<event name=b><uint size=3/></event>\n</facility>\n";
	apc_err_clear(&err);
	T_EQ_INT(apc_ltt_defs_add(&d, whole, sizeof whole - 1, "w.xml", &err), APC_OK);
	T_EQ_INT(d.cut, 0);
	T_EQ_INT(apc_ltt_defs_compile(&d, &a, &err), APC_EDATA);
	T_EQ_STR(err.file, "w.xml");
	T_EQ_INT(err.offset, (int64_t)(strstr(whole, "<typeref") - whole));
	T_EQ_STR(err.msg, "facility 'core': typeref to undefined type 't'");
	apc_ltt_defs_free(&d);
	static const char badsz[] = "<facility name=core>\n<event name=b><uint size=3/></event>\n"
				    "</facility>\n";
	apc_err_clear(&err);
	T_EQ_INT(apc_ltt_defs_add(&d, badsz, sizeof badsz - 1, "w.xml", &err), APC_OK);
	T_EQ_INT(apc_ltt_defs_compile(&d, &a, &err), APC_EDATA);
	T_EQ_STR(err.file, "w.xml");
	T_EQ_INT(err.offset, (int64_t)(strstr(badsz, "<uint") - badsz));
	T_EQ_STR(err.msg, "facility 'core': bad size '3'");
	apc_ltt_defs_free(&d);
	/* A type used from another facility's file: its own file is named. */
	static const char user[] = "<facility name=other>\n<event name=u><typeref name=t/></event>\n"
				   "</facility>\n";
	static const char owner[] = "<facility name=core>\n<type name=t><uint size=3/></type>\n"
				    "</facility>\n";
	apc_err_clear(&err);
	T_EQ_INT(apc_ltt_defs_add(&d, user, sizeof user - 1, "u.xml", &err), APC_OK);
	T_EQ_INT(apc_ltt_defs_add(&d, owner, sizeof owner - 1, "o.xml", &err), APC_OK);
	T_EQ_INT(apc_ltt_defs_compile(&d, &a, &err), APC_EDATA);
	T_EQ_STR(err.file, "o.xml");
	T_EQ_INT(err.offset, (int64_t)(strstr(owner, "<uint") - owner));
	T_EQ_STR(err.msg, "facility 'core': bad size '3'");
	apc_ltt_defs_free(&d);
}

/*
 * Every cut of each historical core.xml: damage at the cut (or whole,
 * when only the blank space after </facility> is lost), and every
 * event kept has the id and payload size it has in the whole file.
 */
static void history_cut_one(const char *name, const char *p, const char *b, size_t len)
{
	struct apc_ltt_defs whole = {0};
	struct apc_ltt_arch a = {0};
	struct apc_ltt_ids wids;
	struct apc_err err;
	const char *endf = strstr(b, "</facility>");

	(void)p;
	if (!strstr(name, "core.xml.") || !endf)
		return;
	apc_err_clear(&err);
	apc_ltt_arch_set(&a, "ILP32");
	T_EQ_INT(apc_ltt_defs_add(&whole, b, len, "w", &err), APC_OK);
	T_EQ_INT(apc_ltt_defs_compile(&whole, &a, &err), APC_OK);
	T_EQ_INT(apc_ltt_ids_build(&wids, &whole, &err), APC_OK);
	size_t end = (size_t)(endf - b) + strlen("</facility>"), bad = 0;
	for (size_t n = 1; n < len && bad < 5; n++) { /* 0: no facility at all */
		struct apc_ltt_defs d = {0};
		struct apc_ltt_ids ids;
		int st = apc_ltt_defs_add(&d, b, n, "c", &err);
		if (n >= end ? st != APC_OK : st != APC_EDATA || !d.cut || err.offset != (int64_t)n ||
							strncmp(err.msg, "cut short inside ", 17)) {
			T_FAIL("%s cut at %zu: status %d, %s", name, n, st, err.msg);
			bad++;
		}
		apc_err_clear(&err);
		if (apc_ltt_defs_compile(&d, &a, &err) || apc_ltt_ids_build(&ids, &d, &err)) {
			T_FAIL("%s cut at %zu: %s", name, n, err.msg);
			bad++;
			apc_ltt_defs_free(&d);
			continue;
		}
		for (uint32_t id = 0; id < ids.n; id++) {
			const struct apc_ltt_evdef *e = ids.ev[id], *w = apc_ltt_ids_ev(&wids, id);
			if (!e || ids.fac[id] == NULL || !strcmp(ids.fac[id]->name, "builtin"))
				continue;
			if (!w || strcmp(e->name, w->name) || e->fixed != w->fixed) {
				T_FAIL("%s cut at %zu: id %u is %s (%lld bytes), whole %s", name, n, id,
				       e->name, (long long)e->fixed, w ? w->name : "-");
				bad++;
			}
		}
		apc_ltt_ids_free(&ids);
		apc_ltt_defs_free(&d);
	}
	apc_ltt_ids_free(&wids);
	apc_ltt_defs_free(&whole);
}

static void eventdefs_history_cut(void)
{
	const char *sd = t_shared_testdata();

	if (!sd)
		T_SKIP("../shared/testdata absent");
	T_EQ_INT(each_history(sd, "core.xml.", history_cut_one), 3);
}

static void type_language(void)
{
	static const char src[] =
		"<facility name=t>\n"
		" <event name=all><struct>\n"
		"  <field name=a><int size=short/></field>\n"
		"  <field name=b><uint size=long/></field>\n"
		"  <field name=c><enum size=1>ZERO ONE TWO</enum></field>\n"
		"  <field name=s><string/></field>\n"
		"  <field name=q><sequence lengthsize=1><typeref name=p/></sequence></field>\n"
		"  <field name=u><union typecodesize=1><field name=x><float size=4/></field>\n"
		"    <field name=y><string/></field></union></field>\n"
		"  <field name=z><array size=2><uint size=medium/></array></field>\n"
		"  <field name=last><uint size=2/></field>\n"
		" </struct></event>\n"
		" <type name=p><struct><field name=m><uint size=1/></field><field name=n><string/></field></struct></type>\n"
		" <event name=fixed><array size=3><typeref name=fx/></array></event>\n"
		" <type name=fx><union typecodesize=short><field name=a><int size=4/></field>\n"
		"   <field name=b><array size=2><uint size=2/></array></field></union></type>\n"
		" <event name=empty></event>\n"
		"</facility>\n";
	/* a=-2 (2), b (4, ILP32 long), c=2, s="hi", q: 2 x {m, n}, u tag 1 "z",
	 * z two u32, last 0x0102 -- little endian */
	static const uint8_t le[] = {
		0xfe, 0xff,             /* a */
		0x78, 0x56, 0x34, 0x12, /* b */
		0x02,                   /* c */
		'h', 'i', 0,            /* s */
		0x02, 0x07, 'x', 0, 0x08, 0, /* q: 2 elements */
		0x01, 'z', 0,           /* u: tag 1 = string */
		1, 0, 0, 0, 2, 0, 0, 0, /* z */
		0x02, 0x01};            /* last */
	struct apc_ltt_defs d = {0};
	struct apc_ltt_arch a = {0};
	struct apc_err err;
	uint64_t v;
	const char *s;
	size_t n;

	apc_err_clear(&err);
	apc_ltt_arch_set(&a, "ILP32");
	T_EQ_INT(apc_ltt_defs_add(&d, src, sizeof src - 1, "t.xml", &err), APC_OK);
	T_EQ_INT(apc_ltt_defs_compile(&d, &a, &err), APC_OK);
	const struct apc_ltt_evdef *all = find_ev(&d, "t", "all"), *fx = find_ev(&d, "t", "fixed");
	T_ASSERT(all && fx);
	if (!all || !fx)
		goto out;
	T_EQ_INT(all->fixed, -1);
	T_EQ_INT(fx->fixed, 3 * (2 + 4)); /* union with equal-size members is fixed */
	T_EQ_INT(find_ev(&d, "t", "empty")->fixed, 0);
	T_EQ_INT(apc_ltt_payload_len(all, le, sizeof le, 0), (int64_t)sizeof le);
	T_EQ_INT(apc_ltt_field_u64(all, le, sizeof le, 0, "last", &v), 0);
	T_EQ_U64(v, 0x0102);
	T_EQ_INT(apc_ltt_field_u64(all, le, sizeof le, 0, "b", &v), 0);
	T_EQ_U64(v, 0x12345678);
	T_EQ_INT(apc_ltt_field_str(all, le, sizeof le, 0, "s", &s, &n), 0);
	T_ASSERT(n == 2 && !memcmp(s, "hi", 2));
	/* Every truncation is caught. */
	for (size_t k = 0; k < sizeof le; k++)
		if (apc_ltt_payload_len(all, le, k, 0) >= 0)
			T_FAIL("truncated to %zu bytes accepted", k);
	/* A bad union tag and a huge sequence length are refused. */
	uint8_t bad[sizeof le];
	memcpy(bad, le, sizeof le);
	bad[16] = 5;
	T_EQ_INT(apc_ltt_payload_len(all, bad, sizeof bad, 0), -1);
	memcpy(bad, le, sizeof le);
	bad[10] = 0xff;
	T_EQ_INT(apc_ltt_payload_len(all, bad, sizeof bad, 0), -1);
	/* Big endian reads the same bytes the other way round. */
	T_EQ_INT(apc_ltt_field_u64(all, le, sizeof le, 1, "last", &v), 0);
	T_EQ_U64(v, 0x0201);
	/* LP64: long is 8 bytes, so the same payload no longer fits exactly. */
	apc_ltt_arch_set(&a, "LP64");
	T_EQ_INT(apc_ltt_defs_compile(&d, &a, &err), APC_OK);
	T_ASSERT(apc_ltt_payload_len(all, le, sizeof le, 0) != (int64_t)sizeof le);
out:
	apc_ltt_defs_free(&d);

	/* Undefined and recursive typerefs are errors at compile time. */
	static const char undef[] = "<facility name=u><event name=e><typeref name=nope/></event></facility>";
	static const char rec[] = "<facility name=r><event name=e><typeref name=a/></event>"
				  "<type name=a><struct><field name=x><typeref name=a/></field></struct></type></facility>";
	apc_ltt_arch_set(&a, "ILP32");
	T_EQ_INT(apc_ltt_defs_add(&d, undef, sizeof undef - 1, "u", &err), APC_OK);
	T_EQ_INT(apc_ltt_defs_compile(&d, &a, &err), APC_EDATA);
	apc_ltt_defs_free(&d);
	T_EQ_INT(apc_ltt_defs_add(&d, rec, sizeof rec - 1, "r", &err), APC_OK);
	T_EQ_INT(apc_ltt_defs_compile(&d, &a, &err), APC_EDATA);
	apc_ltt_defs_free(&d);
	T_EQ_INT(apc_ltt_defs_add(&d, "<x/>", 4, "n", &err), APC_EDATA);
	apc_ltt_defs_free(&d);
}

/* ---- the real trace ----------------------------------------------------- */

struct ref_ev {
	uint64_t off, hdr32, cyc, t;
	unsigned id;
};

struct ref_cpu {
	uint64_t trailer, end_at, total;
	uint64_t bs[4], be[4]; /* s, sub, cycles, id */
	struct ref_ev ev[64];
	size_t nev;
	char counts[2048];
};

/* Parse smp_example.reference.txt (the 2004 reader's listing). */
static int parse_reference(const char *path, struct ref_cpu cpu[2])
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int c = -1;

	if (!f)
		return -1;
	memset(cpu, 0, 2 * sizeof *cpu);
	while (fgets(line, sizeof line, f)) {
		unsigned long long a, b, s, ns, frac;
		if (sscanf(line, "cpu/%d:", &c) == 1 && c >= 0 && c < 2) {
			const char *p = strstr(line, "trailer_u32=");
			sscanf(p, "trailer_u32=%llu block_end_at=%llu", &a, &b);
			cpu[c].trailer = a;
			cpu[c].end_at = b;
			p = strstr(line, "block_start=(");
			sscanf(p, "block_start=(%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",%" SCNu64, &cpu[c].bs[0],
			       &cpu[c].bs[1], &cpu[c].bs[2], &cpu[c].bs[3]);
			p = strstr(line, "block_end=(");
			sscanf(p, "block_end=(%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",%" SCNu64, &cpu[c].be[0],
			       &cpu[c].be[1], &cpu[c].be[2], &cpu[c].be[3]);
		} else if (c >= 0 && c < 2 && strstr(line, "off=") && cpu[c].nev < 64) {
			struct ref_ev *e = &cpu[c].ev[cpu[c].nev];
			char name[64];
			unsigned id;
			if (sscanf(line, " off= %llu id= %u %63s hdr32=%llx cyc=%llu t=%llu.%llu", &a, &id,
				   name, &b, &s, &ns, &frac) == 7) {
				e->off = a;
				e->id = id;
				e->hdr32 = b;
				e->cyc = s;
				e->t = ns * 1000000000ull + frac;
				cpu[c].nev++;
			}
		} else if (c >= 0 && c < 2 && strstr(line, "total events=")) {
			sscanf(strstr(line, "total events="), "total events=%" SCNu64, &cpu[c].total);
			const char *p = strstr(line, "counts={");
			snprintf(cpu[c].counts, sizeof cpu[c].counts, "%s", p ? p + 8 : "");
		}
	}
	fclose(f);
	return 0;
}

/* The count the reference lists for event `name`, or -1. */
static int64_t ref_count(const struct ref_cpu *c, const char *name)
{
	char key[80];
	const char *p;

	snprintf(key, sizeof key, "'%s': ", name);
	p = strstr(c->counts, key);
	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

static void smp_example_walk(void)
{
	const char *sd = t_shared_testdata();
	char dir[4096], p[4200];
	struct ref_cpu ref[2];
	struct apc_ltt_defs d = {0};
	struct apc_ltt_arch a = {0};
	struct apc_ltt_ids tab, *ids = &tab;

	if (!sd)
		T_SKIP("../shared/testdata absent");
	snprintf(dir, sizeof dir, "%s/ltt/smp_example", sd);
	snprintf(p, sizeof p, "%s/ltt/smp_example.reference.txt", sd);
	T_EQ_INT(parse_reference(p, ref), 0);
	T_EQ_INT(load_defs(dir, &d, &a), 0);
	struct apc_err e0;
	apc_err_clear(&e0);
	T_EQ_INT(apc_ltt_ids_build(ids, &d, &e0), APC_OK);
	T_EQ_STR(ids->ev[APC_LTT_ID_BLOCK_START]->name, "block_start");
	T_EQ_STR(ids->ev[APC_LTT_ID_HEARTBEAT]->name, "time_heartbeat");
	T_EQ_STR(ids->ev[7]->name, "schedchange");
	for (int cpu = 0; cpu < 2; cpu++) {
		/* Both readings: ns reproduces the reference's own times (its
		 * algorithm), us is what the reader uses (the converter bug). */
		for (int sub = APC_LTT_SUBSEC_NS; sub <= APC_LTT_SUBSEC_US; sub++) {
			struct apc_ltt_cpu w;
			struct apc_ltt_raw ev;
			struct apc_err err;
			uint64_t n = 0, counts[32] = {0}, last_off = 0;
			size_t k = 0;
			int st;
			snprintf(p, sizeof p, "%s/cpu/%d", dir, cpu);
			FILE *f = fopen(p, "rb");
			T_ASSERT(f != NULL);
			if (!f)
				continue;
			apc_err_clear(&err);
			T_EQ_INT(apc_ltt_cpu_init(&w, cpu, p, file_read, f, ids, 0, 1000000, &err), APC_OK);
			w.subsec = sub;
			uint64_t t0 = apc_ltt_timespec_ns((uint32_t)ref[cpu].bs[0], (uint32_t)ref[cpu].bs[1], sub);
			uint64_t t1 = apc_ltt_timespec_ns((uint32_t)ref[cpu].be[0], (uint32_t)ref[cpu].be[1], sub);
			while ((st = apc_ltt_cpu_next(&w, &ev, &err)) == APC_OK) {
				n++;
				if (ev.id < 32)
					counts[ev.id]++;
				last_off = ev.offset;
				while (k < ref[cpu].nev && ref[cpu].ev[k].off < ev.offset)
					k++;
				if (k < ref[cpu].nev && ref[cpu].ev[k].off == ev.offset) {
					const struct ref_ev *r = &ref[cpu].ev[k];
					uint64_t want = sub == APC_LTT_SUBSEC_NS
						? r->t
						: apc_ltt_interp(r->cyc, t0, ref[cpu].bs[2], t1, ref[cpu].be[2]);
					if (ev.id != r->id || ev.hdr32 != r->hdr32 || ev.cycles != r->cyc ||
					    ev.ts != want)
						T_FAIL("cpu %d off %" PRIu64 ": id %u hdr %x cyc %" PRIu64 " t %" PRIu64
						       ", reference id %u cyc %" PRIu64 " t %" PRIu64,
						       cpu, ev.offset, ev.id, ev.hdr32, ev.cycles, ev.ts, r->id,
						       r->cyc, want);
					k++;
				}
			}
			T_EQ_INT(st, APC_END);
			T_EQ_INT(k, ref[cpu].nev); /* every listed event was met */
			T_EQ_U64(n, ref[cpu].total);
			T_EQ_U64(last_off, ref[cpu].end_at); /* walking lands on block_end */
			T_EQ_INT(w.trailer, APC_LTT_TRAILER_OLD);
			T_EQ_U64(1000000 - w.end_pos, ref[cpu].trailer);
			T_EQ_U64(w.wraps, 1);
			for (unsigned id = 0; id < 32; id++) {
				if (!apc_ltt_ids_ev(ids, id))
					continue;
				int64_t want = ref_count(&ref[cpu], apc_ltt_ids_ev(ids, id)->name);
				if (want < 0)
					want = 0;
				if ((int64_t)counts[id] != want)
					T_FAIL("cpu %d %s: %" PRIu64 " events, reference %" PRId64, cpu,
					       apc_ltt_ids_ev(ids, id)->name, counts[id], want);
			}
			if (sub == APC_LTT_SUBSEC_US) {
				/* read as us both CPUs run at 350.795 MHz */
				double mhz = (double)(ref[cpu].be[2] - ref[cpu].bs[2]) / (double)(t1 - t0) * 1e3;
				T_ASSERT(mhz > 350.79 && mhz < 350.80);
			}
			apc_ltt_cpu_free(&w);
			fclose(f);
		}
	}
	apc_ltt_defs_free(&d);
	apc_ltt_ids_free(ids);
}

struct drained {
	uint64_t by_type[APC_EV_TYPE_COUNT];
	uint64_t first_ts, n;
	int order_ok, core_order_ok;
	char marks[4][64];
	uint64_t mark_ts[4];
	size_t nmarks;
	int batch_grew; /* a next() overflowed the batch the driver gave */
};

/* Open `path` through the input layer and the LTT reader; drain it. */
static int run_reader(const char *path, struct apc_model *m, struct drained *dr,
		      struct apc_ltt_stat *stats, size_t *nstats)
{
	struct apc_input *in = NULL;
	struct apc_reader r;
	struct apc_batch b;
	uint64_t last = 0, last_core[64] = {0};
	int st;

	memset(&r, 0, sizeof r);
	memset(dr, 0, sizeof *dr);
	dr->order_ok = dr->core_order_ok = 1;
	apc_err_clear(&r.err);
	st = apc_input_open(path, &in, &r.err);
	if (st)
		return st;
	if (apc_format_ltt.bid(in) != 100) {
		apc_input_close(in);
		return -100;
	}
	r.fmt = &apc_format_ltt;
	r.inputs = &in;
	r.ninputs = 1;
	r.model = m;
	apc_batch_init(&b, 1024);
	st = apc_format_ltt.open(&r);
	while (!st) {
		apc_batch_reset(&b);
		st = apc_format_ltt.next(&r, &b);
		if (b.cap != 1024)
			dr->batch_grew = 1;
		for (size_t i = 0; i < b.n; i++) {
			const struct apc_event *e = &b.ev[i];
			if (dr->n++ == 0)
				dr->first_ts = e->ts;
			dr->by_type[e->type]++;
			if (!(e->flags & APC_EVF_NO_TS) && e->ts < last)
				dr->order_ok = 0;
			if (e->core >= 0 && e->core < 64) {
				if (e->ts < last_core[e->core])
					dr->core_order_ok = 0;
				last_core[e->core] = e->ts;
			}
			if (!(e->flags & APC_EVF_NO_TS))
				last = e->ts;
			if (e->type == APC_EV_ANNOTATION && dr->nmarks < 4) {
				snprintf(dr->marks[dr->nmarks], 64, "%s", e->u.ann->text);
				dr->mark_ts[dr->nmarks++] = e->ts;
			}
		}
	}
	if (st == APC_END)
		st = APC_OK;
	if (st)
		fprintf(stderr, "  reader: %s\n", r.err.msg);
	if (stats) {
		/* The stats' strings live as long as the reader: keep copies. */
		static char names[128][2][64];
		*nstats = apc_ltt_stats(&r, stats, *nstats);
		for (size_t i = 0; i < *nstats && i < 128; i++) {
			snprintf(names[i][0], 64, "%s", stats[i].event);
			snprintf(names[i][1], 64, "%s", stats[i].became);
			stats[i].event = names[i][0];
			stats[i].became = names[i][1];
			stats[i].facility = NULL;
		}
	}
	apc_format_ltt.close(&r);
	apc_batch_free(&b);
	apc_input_close(in);
	return st;
}

static void smp_example_reader(void)
{
	const char *sd = t_shared_testdata();
	char dir[4096], p[4200];
	struct ref_cpu ref[2];
	struct apc_model m;
	struct drained dr;
	struct apc_ltt_stat stats[128];
	size_t nstats = 128;

	if (!sd)
		T_SKIP("../shared/testdata absent");
	snprintf(dir, sizeof dir, "%s/ltt/smp_example", sd);
	snprintf(p, sizeof p, "%s/ltt/smp_example.reference.txt", sd);
	T_EQ_INT(parse_reference(p, ref), 0);
	apc_model_init(&m);
	T_EQ_INT(run_reader(dir, &m, &dr, stats, &nstats), APC_OK);
	T_EQ_INT(m.meta.ncores, 2);
	T_ASSERT(m.meta.target_name && strstr(m.meta.target_name, "thales") &&
		 strstr(m.meta.target_name, "2.5.44"));
	/* microseconds: block_start (1467637903 s, 312859 us) on cpu 0 */
	T_EQ_U64(m.meta.wall_clock_ns, ref[0].bs[0] * 1000000000ull + ref[0].bs[1] * 1000);
	T_EQ_U64(m.meta.monotonic_delta, m.meta.wall_clock_ns);
	T_EQ_U64(m.records_read, ref[0].total + ref[1].total);
	T_ASSERT(dr.order_ok && dr.core_order_ok);
	T_EQ_INT(dr.batch_grew, 0);
	T_ASSERT(dr.first_ts >= m.meta.monotonic_delta);
	T_EQ_U64(dr.by_type[APC_EV_ACTIVITY],
		 ref_count(&ref[0], "schedchange") + ref_count(&ref[1], "schedchange"));
	/* every per-type count, per CPU, is in the stats table */
	uint64_t seen = 0;
	for (size_t i = 0; i < nstats && i < 128; i++) {
		const struct apc_ltt_stat *s = &stats[i];
		T_ASSERT(s->cpu == 0 || s->cpu == 1);
		if (s->cpu != 0 && s->cpu != 1)
			continue;
		T_EQ_INT((int64_t)s->count, ref_count(&ref[s->cpu], s->event));
		seen += s->count;
		if (!strcmp(s->event, "irq_entry"))
			T_EQ_STR(s->became, "counter ltt_irq");
		if (!strcmp(s->event, "kernel_timer"))
			T_EQ_STR(s->became, "ltt_core_kernel_timer");
	}
	T_EQ_U64(seen, ref[0].total + ref[1].total);
	/* counters: all but the 6 builtins (block_start, block_end and
	 * time_heartbeat on each CPU) and schedchange; none dropped */
	uint64_t want = ref[0].total + ref[1].total - 6 - (uint64_t)dr.by_type[APC_EV_ACTIVITY];
	T_EQ_U64(dr.by_type[APC_EV_COUNTER], want);
	struct apc_counter_decl *irq = apc_model_find_counter(&m, "ltt_irq");
	T_ASSERT(irq && irq->cls == APC_CLASS_INCIDENT && irq->per_cpu == APC_YES);
	struct apc_counter_decl *fs = apc_model_find_counter(&m, "ltt_core_file_system");
	T_ASSERT(fs && fs->title && !strcmp(fs->title, "core") && fs->description &&
		 strstr(fs->description, "file system"));
	apc_model_free(&m);
}

/* ---- id tables ----------------------------------------------------------- */

/* "facility#index" of an id table entry, comparable across two parses. */
static void ids_key(const struct apc_ltt_facility *f, const struct apc_ltt_evdef *e, char *buf,
		    size_t cap)
{
	if (!e) {
		snprintf(buf, cap, "-");
		return;
	}
	snprintf(buf, cap, "%s#%td", f ? f->name : "?", f ? e - f->events : (ptrdiff_t)-1);
}

/*
 * One definition set, parsed twice: the compact table (what the reader
 * builds) against the full 65536-entry map, id by id, beyond the bound
 * too; n is exactly the highest assigned id + 1.  bases[i] >= 0 fixes
 * facility i's base first, as control/facilities does.
 */
static void ids_check(const char *const *xml, size_t nxml, const long *bases, uint32_t want_n)
{
	struct apc_ltt_defs d1 = {0}, d2 = {0};
	struct apc_ltt_arch a = {0};
	struct apc_ltt_ids t;
	struct apc_ltt_idmap *m = malloc(sizeof *m);
	struct apc_err err;
	char k1[128], k2[128];
	uint32_t top = 0, bad = 0;

	T_ASSERT(m != NULL);
	if (!m)
		return;
	apc_err_clear(&err);
	apc_ltt_arch_set(&a, "ILP32");
	for (size_t i = 0; i < nxml; i++) {
		T_EQ_INT(apc_ltt_defs_add(&d1, xml[i], strlen(xml[i]), "t.xml", &err), APC_OK);
		T_EQ_INT(apc_ltt_defs_add(&d2, xml[i], strlen(xml[i]), "t.xml", &err), APC_OK);
	}
	T_EQ_INT(apc_ltt_defs_compile(&d1, &a, &err), APC_OK);
	T_EQ_INT(apc_ltt_defs_compile(&d2, &a, &err), APC_OK);
	for (size_t i = 0; bases && i < d1.nfacs; i++)
		if (bases[i] >= 0) {
			d1.facs[i].base = d2.facs[i].base = (uint32_t)bases[i];
			d1.facs[i].has_base = d2.facs[i].has_base = 1;
		}
	T_EQ_INT(apc_ltt_ids_build(&t, &d1, &err), APC_OK);
	apc_ltt_idmap_build(m, &d2);
	T_ASSERT(t.rest == NULL);
	for (uint32_t id = 0; id < APC_LTT_MAX_IDS; id++) {
		ids_key(apc_ltt_ids_fac(&t, id), apc_ltt_ids_ev(&t, id), k1, sizeof k1);
		ids_key(m->fac[id], m->ev[id], k2, sizeof k2);
		if (strcmp(k1, k2) && bad++ < 5)
			T_FAIL("id %u: compact %s, full %s", id, k1, k2);
		if (m->ev[id])
			top = id + 1;
	}
	T_EQ_U64(t.n, top);
	T_EQ_U64(t.n, want_n); /* worked out by hand from the definitions */
	for (size_t i = 0; i < d1.nfacs; i++)
		T_EQ_U64(d1.facs[i].base, d2.facs[i].base);
	/* The reader builds again after control/facilities: same table. */
	uint32_t n1 = t.n;
	apc_ltt_ids_free(&t);
	T_EQ_INT(apc_ltt_ids_build(&t, &d1, &err), APC_OK);
	T_EQ_U64(t.n, n1);
	apc_ltt_ids_free(&t);
	T_ASSERT(t.fac == NULL && t.n == 0);
	apc_ltt_defs_free(&d1);
	apc_ltt_defs_free(&d2);
	free(m);
}

/* A facility of n one-u32 events named e0..e(n-1). */
static char *ids_fac_xml(const char *name, int n)
{
	size_t cap = 64 + (size_t)n * 64, len;
	char *b = malloc(cap);

	if (!b)
		return NULL;
	len = (size_t)snprintf(b, cap, "<facility name=%s>\n", name);
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(b + len, cap - len, "<event name=e%d><uint size=4/></event>\n", i);
	snprintf(b + len, cap - len, "</facility>\n");
	return b;
}

/* One historical core.xml numbered as the reader numbers it: its
 * events, plus the 4 builtin ids a 2003 file is numbered around. */
static void history_ids(const char *name, const char *p, const char *b, size_t len)
{
	const char *x[] = {b};
	struct apc_ltt_defs d = {0};
	struct apc_err err;
	int own = 0;

	apc_err_clear(&err);
	T_EQ_INT(apc_ltt_defs_add(&d, b, len, p, &err), APC_OK);
	uint32_t want = d.nfacs ? (uint32_t)d.facs[0].nevents : 0;
	for (size_t k = 0; d.nfacs && k < d.facs[0].nevents; k++)
		own |= !strcmp(d.facs[0].events[k].name, "block_start");
	apc_ltt_defs_free(&d);
	ids_check(x, 1, NULL, own ? want : want + 4);
}

static void ids_compact(void)
{
	/* 2003 core (no builtins of its own): 25 events around ids 0 and
	 * 17..19, so ids 1..16 and 20..28. */
	char *core = ids_fac_xml("core", 25), *ext = ids_fac_xml("extra", 3),
	     *tail = ids_fac_xml("tail", 5), *two = ids_fac_xml("two", 2);
	const char *one[] = {core};
	const char *three[] = {core, ext, tail};
	const char *order[] = {ext, core, two};
	const long hi[] = {-1, 60000, 65534};
	const long lo[] = {2, -1, -1};

	T_ASSERT(core && ext && tail && two);
	if (core && ext && tail && two) {
		ids_check(one, 1, NULL, 29);
		/* extra at 60000 (60000..60002), tail at 65534 cut at the
		 * last id (65534, 65535): the table reaches 65536 */
		ids_check(three, 3, hi, 65536);
		/* no bases: core first at 1..16, 20..28, then extra 29..31,
		 * tail 32..36 */
		ids_check(three, 3, NULL, 37);
		/* extra forced onto core's ids 2..4: core, numbered first,
		 * keeps them; two follows core at 29, 30 */
		ids_check(order, 3, lo, 31);
		/* no facility at all: the builtins alone */
		ids_check(NULL, 0, NULL, 20);
	}
	free(core);
	free(ext);
	free(tail);
	free(two);

	/* every historical core.xml */
	const char *sd = t_shared_testdata();

	if (!sd)
		T_SKIP("../shared/testdata absent: historical core.xml part");
	T_ASSERT(each_history(sd, "core.xml.", history_ids) >= 3);
}

/*
 * A walker's buffer follows the file, not the block size: a 1 MB-block
 * walker over 100 bytes allocates no more than its first 64 KiB and
 * still reports the truncated block at the same offset.
 */
static void buffer_follows_file(void)
{
	static char bytes[100];
	struct apc_ltt_ids t = {NULL, NULL, 0, NULL};
	struct apc_ltt_cpu w;
	struct apc_err err;
	FILE *f = fmemopen(bytes, sizeof bytes, "rb");

	T_ASSERT(f != NULL);
	if (!f)
		return;
	apc_err_clear(&err);
	T_EQ_INT(apc_ltt_cpu_init(&w, 0, "cpu/0", file_read, f, &t, 0, 1000000, &err), APC_OK);
	T_EQ_INT(apc_ltt_cpu_readahead(&w, 4u << 20, &err), APC_OK);
	T_EQ_INT(apc_ltt_cpu_load(&w, &err), APC_EDATA);
	T_ASSERT(strstr(err.msg, "truncated block: 100 of 1000000 bytes") != NULL);
	T_EQ_INT(err.offset, 100);
	T_ASSERT(w.buf_cap <= 65536);
	apc_ltt_cpu_free(&w);
	fclose(f);
}

/*
 * The reader's control/processes table is every id but the builtins:
 * processes written with ids far past the trace's own table (and past
 * 65535's neighbours) read exactly as with the generator's id 10.
 */
static void control_ids(void)
{
	char dir[] = "/tmp/test_ltt_ctl.XXXXXX", out[256], path[512];
	static const uint16_t ids[] = {10, 20, 300, 40000, 65535};
	uint64_t names[5] = {0}, links[5] = {0}, recs[5] = {0};

	if (!mkdtemp(dir)) {
		T_FAIL("mkdtemp");
		return;
	}
	snprintf(out, sizeof out, "%s/t", dir);
	T_EQ_INT(lttgen("lttgen --seed 9 --events 300 --cpus 1 -o %s", out), 0);
	snprintf(path, sizeof path, "%s/control/processes", out);
	for (size_t v = 0; v < sizeof ids / sizeof ids[0]; v++) {
		/* block_start (6 + 20 bytes), then three processes: header 6,
		 * name "init"/"bash"/"lttd" + NUL, 12 u32 (59 bytes each) */
		FILE *f = fopen(path, "r+b");
		T_ASSERT(f != NULL);
		if (!f)
			break;
		for (int i = 0; i < 3; i++) {
			uint8_t id[2];
			long at = 26 + 59 * i;
			fseek(f, at, SEEK_SET);
			T_EQ_INT(fread(id, 1, 2, f), 2);
			if (v == 0)
				T_EQ_INT(id[0] | id[1] << 8, 10); /* the layout above holds */
			id[0] = (uint8_t)ids[v];
			id[1] = (uint8_t)(ids[v] >> 8);
			fseek(f, at, SEEK_SET);
			T_EQ_INT(fwrite(id, 1, 2, f), 2);
		}
		fclose(f);
		struct apc_model m;
		struct drained dr;
		apc_model_init(&m);
		T_EQ_INT(run_reader(out, &m, &dr, NULL, NULL), APC_OK);
		names[v] = dr.by_type[APC_EV_THREAD_NAME];
		links[v] = dr.by_type[APC_EV_LINK];
		recs[v] = m.records_read;
		apc_model_free(&m);
		T_ASSERT(names[v] >= 3); /* init, bash, lttd at least */
		if (v) {
			T_EQ_U64(names[v], names[0]);
			T_EQ_U64(links[v], links[0]);
			T_EQ_U64(recs[v], recs[0]);
		}
	}
	rm_rf(dir);
}

/* ---- generated traces ---------------------------------------------------- */

struct truth {
	char subsec[8], trailer[8];
	uint64_t model[8]; /* activity link exit name counter annotation */
	uint64_t marks[4];
	size_t nmarks;
	FILE *f;
};

static void gen_run(const char *extra, int cpus, int events, uint64_t seed)
{
	char dir[] = "/tmp/test_ltt.XXXXXX", out[256], truthp[256], cmd[1024];

	if (!mkdtemp(dir)) {
		T_FAIL("mkdtemp");
		return;
	}
	snprintf(out, sizeof out, "%s/trace", dir);
	snprintf(truthp, sizeof truthp, "%s/truth", dir);
	T_EQ_INT(lttgen("lttgen --seed %" PRIu64 " --events %d --cpus %d -o %s --truth %s %s", seed,
			events, cpus, out, truthp, extra),
		 0);

	/* 1. raw walk per CPU against the ev lines */
	struct apc_ltt_defs d = {0};
	struct apc_ltt_arch a = {0};
	struct apc_ltt_ids tab, *ids = &tab;
	FILE *tf = fopen(truthp, "r");
	char line[512];
	int big = strstr(extra, "big") != NULL, us = strstr(extra, "usec") != NULL;
	load_gen_ids(out, &d, &a, ids);
	struct apc_ltt_cpu w[16];
	FILE *cf[16];
	for (int c = 0; c < cpus; c++) {
		struct apc_err err;
		snprintf(cmd, sizeof cmd, "%s/cpu/%d", out, c);
		cf[c] = fopen(cmd, "rb");
		apc_ltt_cpu_init(&w[c], c, "cpu", file_read, cf[c], ids, big, 4096, &err);
		w[c].subsec = us ? APC_LTT_SUBSEC_US : APC_LTT_SUBSEC_NS;
	}
	uint64_t nev = 0, bad = 0, wraps[16] = {0};
	struct truth t;
	memset(&t, 0, sizeof t);
	while (tf && fgets(line, sizeof line, tf)) {
		int c;
		unsigned id;
		uint64_t ts, cyc, v;
		char k[32];
		if (sscanf(line, "ev %d %u %" SCNu64 " %" SCNu64, &c, &id, &ts, &cyc) == 4) {
			struct apc_ltt_raw ev;
			struct apc_err err;
			nev++;
			if (apc_ltt_cpu_next(&w[c], &ev, &err) != APC_OK) {
				if (!bad++)
					T_FAIL("cpu %d ended early: %s", c, err.msg);
				continue;
			}
			if ((ev.id != id || ev.ts != ts || ev.cycles != cyc) && !bad++)
				T_FAIL("cpu %d event %" PRIu64 ": id %u ts %" PRIu64 " cyc %" PRIu64
				       ", truth id %u ts %" PRIu64 " cyc %" PRIu64,
				       c, nev, ev.id, ev.ts, ev.cycles, id, ts, cyc);
		} else if (sscanf(line, "wraps %d %" SCNu64, &c, &v) == 2) {
			wraps[c] = v;
		} else if (sscanf(line, "model %31s %" SCNu64, k, &v) == 2) {
			static const char *const kinds[] = {"activity", "link", "exit", "name", "counter",
							    "annotation"};
			for (int i = 0; i < 6; i++)
				if (!strcmp(k, kinds[i]))
					t.model[i] = v;
		} else if (sscanf(line, "mark %" SCNu64, &v) == 1 && t.nmarks < 4) {
			t.marks[t.nmarks++] = v;
		}
	}
	T_EQ_U64(bad, 0);
	T_ASSERT(nev > (uint64_t)events * (uint64_t)cpus);
	for (int c = 0; c < cpus; c++) {
		struct apc_ltt_raw ev;
		struct apc_err err;
		T_EQ_INT(apc_ltt_cpu_next(&w[c], &ev, &err), APC_END);
		T_ASSERT(w[c].nblocks > 1);
		T_ASSERT(wraps[c] > 0);
		T_EQ_INT(w[c].trailer, strstr(extra, "new") ? APC_LTT_TRAILER_NEW : APC_LTT_TRAILER_OLD);
		apc_ltt_cpu_free(&w[c]);
		fclose(cf[c]);
	}
	if (tf)
		fclose(tf);
	apc_ltt_defs_free(&d);
	apc_ltt_ids_free(ids);

	/* 2. the whole reader (control/facilities, processes, bookmarks) */
	struct apc_model m;
	struct drained dr;
	/* an undefined id nothing explains is damage where it is (the rest
	 * of the trace is read all the same) */
	int want = strstr(extra, "undefined") ? APC_EDATA : APC_OK;
	apc_model_init(&m);
	T_EQ_INT(run_reader(out, &m, &dr, NULL, NULL), want);
	T_EQ_INT(m.meta.ncores, cpus);
	T_ASSERT(dr.order_ok && dr.core_order_ok);
	T_EQ_INT(dr.batch_grew, 0);
	T_EQ_U64(dr.by_type[APC_EV_ACTIVITY], t.model[0]);
	T_EQ_U64(dr.by_type[APC_EV_LINK], t.model[1]);
	T_EQ_U64(dr.by_type[APC_EV_TASK_EXIT], t.model[2]);
	T_EQ_U64(dr.by_type[APC_EV_THREAD_NAME], t.model[3]);
	T_EQ_U64(dr.by_type[APC_EV_COUNTER], t.model[4]);
	T_EQ_U64(dr.by_type[APC_EV_ANNOTATION], t.model[5]);
	T_EQ_INT(dr.nmarks, 2);
	if (dr.nmarks == 2 && t.nmarks == 2) {
		T_EQ_U64(dr.mark_ts[0], t.marks[0]);
		T_EQ_U64(dr.mark_ts[1], t.marks[1]);
		T_EQ_STR(dr.marks[0], "first: Start");
		T_EQ_STR(dr.marks[1], "second");
	}
	T_ASSERT(apc_model_find_counter(&m, "ltt_extra_blob") != NULL);
	int found_unit = 0;
	for (size_t i = 0; i < m.meta.nattrs; i++)
		if (!strcmp(m.meta.attrs[i].key, "ltt_subsecond_unit"))
			found_unit = !strcmp(m.meta.attrs[i].value, us ? "us" : "ns");
	T_ASSERT(found_unit);
	if (strstr(extra, "undefined")) {
		int found = 0;
		for (size_t i = 0; i < m.nunmapped; i++)
			found |= strstr(m.unmapped[i].what, "undefined event id") != NULL;
		T_ASSERT(found);
	}
	apc_model_free(&m);

	/* 3. the same tree as a tar archive reads the same */
	snprintf(cmd, sizeof cmd, "tar -C '%s' -cf '%s/t.tar' trace 2>/dev/null", dir, dir);
	if (system(cmd) == 0) {
		struct drained dt;
		snprintf(cmd, sizeof cmd, "%s/t.tar", dir);
		apc_model_init(&m);
		T_EQ_INT(run_reader(cmd, &m, &dt, NULL, NULL), want);
		T_EQ_U64(dt.n, dr.n);
		T_EQ_U64(dt.by_type[APC_EV_COUNTER], dr.by_type[APC_EV_COUNTER]);
		apc_model_free(&m);
	}

	/* 4. a CPU file cut inside its second block: data error, salvage */
	snprintf(cmd, sizeof cmd, "%s/cpu/0", out);
	if (truncate(cmd, 4096 + 100) == 0) {
		struct drained dt;
		apc_model_init(&m);
		T_EQ_INT(run_reader(out, &m, &dt, NULL, NULL), APC_EDATA);
		T_ASSERT(dt.n > 0);
		apc_model_free(&m);
	}

	rm_rf(dir);
}

static void gen_little_old(void) { gen_run("--trailer old", 2, 3000, 1); }
static void gen_big_new(void) { gen_run("--endian big --trailer new", 3, 2000, 2); }
static void gen_usec_one_cpu(void) { gen_run("--usec", 1, 2500, 3); }
static void gen_undefined_ids(void) { gen_run("--undefined --endian big", 2, 3000, 4); }
/* the bench's kernel mix (the real trace's proportions) reads as generated */
static void gen_kernel(void) { gen_run("--mix kernel", 2, 3000, 5); }
/* many CPU files: the merge (a heap of them) keeps time order, ties to the lower file */
static void gen_many_cpus(void) { gen_run("--mix kernel", 16, 1500, 6); }

static void interp_exact(void)
{
	/* 128-bit: a span of 2^40 cycles over 2^40 ns does not overflow */
	uint64_t c0 = 1ull << 40, t0 = 5;
	T_EQ_U64(apc_ltt_interp(c0 + (1ull << 39), t0, c0, t0 + (1ull << 40), c0 + (1ull << 40)),
		 t0 + (1ull << 39));
	T_EQ_U64(apc_ltt_interp(10, 100, 10, 50, 20), 100); /* time going back: start */
	T_EQ_U64(apc_ltt_interp(15, 100, 10, 200, 10), 100); /* empty block: start */
	T_EQ_U64(apc_ltt_interp(13, 0, 10, 10, 13), 10);
	T_EQ_U64(apc_ltt_interp(12, 0, 10, 10, 13), 6); /* floor of 6.67 */
}

/* ---- fast paths against the reference ones ---------------------------- */

static uint64_t xs_state = 0x9e3779b97f4a7c15ull;

static uint64_t xs_next(void)
{
	xs_state ^= xs_state << 13;
	xs_state ^= xs_state >> 7;
	xs_state ^= xs_state << 17;
	return xs_state;
}

/*
 * apc_ltt_interp_at (reciprocal, per-block constants) against the
 * 128-bit division of apc_ltt_interp: every combination of edge values
 * for the block ends and the cycle count, then random blocks with
 * random spans of every bit length.
 */
static void interp_fast_exact(void)
{
	static const uint64_t edge[] = {0, 1, 2, 3, 5, 7, 1000, 0x7fffffffull, 0x80000000ull,
					0xffffffffull, 0x100000000ull, 0x100000001ull,
					350795000ull, 1000000000ull, 1467637903312859000ull,
					(1ull << 62) - 1, 1ull << 62, (1ull << 63) - 1, 1ull << 63,
					(1ull << 63) + 1, UINT64_MAX - 2, UINT64_MAX - 1, UINT64_MAX};
	const size_t ne = sizeof edge / sizeof edge[0];
	uint64_t checked = 0, bad = 0;

	for (size_t a = 0; a < ne; a++)
		for (size_t b = 0; b < ne; b++)
			for (size_t c = 0; c < ne; c++)
				for (size_t d = 0; d < ne; d++) {
					uint64_t t0 = edge[a], c0 = edge[b], t1 = edge[c], c1 = edge[d];
					struct apc_ltt_interp_k k;
					apc_ltt_interp_prep(&k, t0, c0, t1, c1);
					uint64_t cs[] = {c0, c0 + 1, c0 - 1, c1, c1 - 1, c1 + 1,
							 c0 + (c1 - c0) / 2, c0 + (c1 - c0) / 3, 0, UINT64_MAX,
							 c0 + 0xffffffffull, c0 + 0x100000000ull};
					for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
						uint64_t want = apc_ltt_interp(cs[i], t0, c0, t1, c1);
						uint64_t got = apc_ltt_interp_at(&k, cs[i]);
						checked++;
						if (got != want && !bad++)
							T_FAIL("interp(%" PRIu64 ", %" PRIu64 ", %" PRIu64
							       ", %" PRIu64 ", %" PRIu64 ") = %" PRIu64
							       ", fast %" PRIu64,
							       cs[i], t0, c0, t1, c1, want, got);
					}
				}
	for (int i = 0; i < 200000; i++) {
		/* spans of 1..64 bits, near-power-of-two divisors included */
		uint64_t dc = xs_next() >> (xs_next() % 64), dt = xs_next() >> (xs_next() % 64);
		if (i % 7 == 0)
			dc = (1ull << (xs_next() % 64)) + (uint64_t)(int64_t)((int)(xs_next() % 5) - 2);
		uint64_t c0 = xs_next() >> (xs_next() % 64), t0 = xs_next() >> (xs_next() % 64);
		uint64_t c1 = c0 + dc, t1 = t0 + dt;
		struct apc_ltt_interp_k k;
		apc_ltt_interp_prep(&k, t0, c0, t1, c1);
		for (int j = 0; j < 4; j++) {
			uint64_t x = j == 0 ? dc : dc ? xs_next() % (dc + (dc >> 2) + 1) : xs_next();
			uint64_t c = c0 + (j == 3 ? xs_next() : x);
			uint64_t want = apc_ltt_interp(c, t0, c0, t1, c1);
			checked++;
			if (apc_ltt_interp_at(&k, c) != want && !bad++)
				T_FAIL("interp(%" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64
				       ") = %" PRIu64 ", fast %" PRIu64,
				       c, t0, c0, t1, c1, want, apc_ltt_interp_at(&k, c));
		}
	}
	T_EQ_U64(bad, 0);
	T_ASSERT(checked > 3000000);
}

/*
 * Resolved field refs give what the walking lookups give: every
 * top-level field name of every event of the generator's eventdefs and
 * of each historical core.xml, on random payloads of every length up to
 * 40 bytes (so strings with and without NUL, fields cut short).
 */
static void fieldref_same(void)
{
	char dir[] = "/tmp/test_ltt_ref.XXXXXX", out[256];
	char *argv[] = {"lttgen", "--seed", "5", "--events", "10", "-o", out, NULL};
	const char *sd = t_shared_testdata();
	struct apc_ltt_defs d = {0};
	struct apc_ltt_arch a = {0};
	struct apc_err err;
	uint64_t compared = 0, bad = 0, fast = 0;

	if (!mkdtemp(dir)) {
		T_FAIL("mkdtemp");
		return;
	}
	snprintf(out, sizeof out, "%s/trace", dir);
	T_EQ_INT(lttgen_main(7, argv), 0);
	T_EQ_INT(load_defs(out, &d, &a), 0);
	if (sd) {
		static const char *const hist[] = {"core.xml.2003-07-25_59460ee3",
						   "core.xml.2004-01-29_da684c0d",
						   "core.xml.2005-05-13_45e14832"};
		for (size_t i = 0; i < 3; i++) {
			char p[4200];
			size_t len;
			snprintf(p, sizeof p, "%s/ltt/eventdefs-history/%s", sd, hist[i]);
			char *buf = t_read_file(p, &len);
			T_ASSERT(buf != NULL);
			if (buf && apc_ltt_defs_add(&d, buf, len, p, &err) != APC_OK)
				T_FAIL("%s: %s", p, err.msg);
			free(buf);
		}
		T_EQ_INT(apc_ltt_defs_compile(&d, &a, &err), APC_OK);
	}
	for (size_t f = 0; f < d.nfacs; f++)
		for (size_t e = 0; e < d.facs[f].nevents; e++) {
			const struct apc_ltt_evdef *ev = &d.facs[f].events[e];
			const struct apc_ltt_type *t = ev->type;
			while (t && t->kind == APC_LTT_TYPEREF)
				t = t->target;
			if (!t || t->kind != APC_LTT_STRUCT)
				continue;
			for (size_t k = 0; k <= t->nfields; k++) {
				/* k == nfields: a name no event has */
				const char *name = k < t->nfields ? t->fields[k].name : "no_such_field";
				struct apc_ltt_fieldref ru, rs;
				apc_ltt_field_ref(&ru, ev, name, 0);
				apc_ltt_field_ref(&rs, ev, name, 1);
				fast += ru.how == APC_LTT_REF_FIXED;
				for (int rep = 0; rep < 40; rep++) {
					uint8_t pay[40];
					for (size_t i = 0; i < sizeof pay; i++)
						pay[i] = (uint8_t)(xs_next() % 4 ? xs_next() : 0);
					for (size_t avail = 0; avail <= sizeof pay; avail++)
						for (int be = 0; be < 2; be++) {
							uint64_t v1 = 7, v2 = 7;
							const char *s1 = NULL, *s2 = NULL;
							size_t n1 = 0, n2 = 0;
							int r1 = apc_ltt_field_u64(ev, pay, avail, be, name, &v1);
							int r2 = apc_ltt_ref_u64(&ru, pay, avail, be, &v2);
							int r3 = apc_ltt_field_str(ev, pay, avail, be, name, &s1, &n1);
							int r4 = apc_ltt_ref_str(&rs, pay, avail, be, &s2, &n2);
							compared++;
							if ((r1 != r2 || (!r1 && v1 != v2) || r3 != r4 ||
							     (!r3 && (s1 != s2 || n1 != n2))) && !bad++)
								T_FAIL("%s.%s field %s avail %zu be %d: walk %d/%" PRIu64
								       " %d, ref %d/%" PRIu64 " %d",
								       d.facs[f].name, ev->name, name, avail, be, r1,
								       v1, r3, r2, v2, r4);
						}
				}
			}
		}
	T_EQ_U64(bad, 0);
	T_ASSERT(compared > 100000);
	T_ASSERT(fast > 20); /* most fields do take the fixed-offset path */
	apc_ltt_defs_free(&d);
	rm_rf(dir);
}

/* A file read that fails (APC_EIO) once `fail_at` bytes are read. */
struct failing_file {
	FILE *f;
	long off, fail_at;
};

static long failing_read(void *ctx, void *buf, size_t n, struct apc_err *err)
{
	struct failing_file *ff = ctx;

	if (ff->fail_at >= 0 && ff->off >= ff->fail_at)
		return apc_err_set(err, APC_EIO, "cpu", ff->off, "cannot read: injected failure"), -1;
	if (ff->fail_at >= 0 && (long)n > ff->fail_at - ff->off)
		n = (size_t)(ff->fail_at - ff->off);
	size_t r = fread(buf, 1, n, ff->f);
	ff->off += (long)r;
	return (long)r;
}

/*
 * apc_ltt_cpu_run with read-ahead gives the same events, counters,
 * final status and message as apc_ltt_cpu_next one block per read, for
 * every run length: on clean files, both endians, undefined ids, a file
 * cut inside a block, bytes overwritten in a block, and a read failure.
 */
static void run_same_as_next(void)
{
	static const char *const opts[] = {"--endian little", "--endian big --trailer new",
					   "--undefined", "--undefined --endian big --usec"};
	static const size_t runs[] = {1, 2, 7, 64, 512};
	char dir[] = "/tmp/test_ltt_run.XXXXXX", cmd[1400], path[512];
	uint64_t compared = 0;

	if (!mkdtemp(dir)) {
		T_FAIL("mkdtemp");
		return;
	}
	for (size_t o = 0; o < sizeof opts / sizeof opts[0]; o++) {
		T_EQ_INT(lttgen("lttgen --seed %zu --events 3000 --cpus 1 -o %s/t%zu %s", o + 21, dir, o,
				opts[o]),
			 0);
		snprintf(path, sizeof path, "%s/t%zu", dir, o);
		struct apc_ltt_defs d = {0};
		struct apc_ltt_arch a = {0};
		struct apc_ltt_ids tab, *ids = &tab;
		load_gen_ids(path, &d, &a, ids);
		int big = strstr(opts[o], "big") != NULL;
		snprintf(path, sizeof path, "%s/t%zu/cpu/0", dir, o);
		struct stat sb;
		T_EQ_INT(stat(path, &sb), 0);
		T_ASSERT(sb.st_size > 6 * 4096); /* the damage below lands inside */
		/* damage: none, cut in block 3, bytes overwritten in block 2,
		 * a read failure in block 4 */
		for (int dmg = 0; dmg < 4; dmg++) {
			char dpath[600];
			snprintf(dpath, sizeof dpath, "%s.%d", path, dmg);
			snprintf(cmd, sizeof cmd, "cp '%s' '%s'", path, dpath);
			T_EQ_INT(system(cmd), 0);
			if (dmg == 1)
				T_EQ_INT(truncate(dpath, 3 * 4096 + 100), 0);
			if (dmg == 2) {
				FILE *f = fopen(dpath, "r+b");
				if (f) {
					fseek(f, 2 * 4096 + 300, SEEK_SET);
					fwrite("\x07\x00\xff\xff\xff\xff\x13\x00", 1, 8, f);
					fclose(f);
				}
			}
			for (size_t ri = 0; ri < sizeof runs / sizeof runs[0]; ri++) {
				struct failing_file f1 = {fopen(dpath, "rb"), 0, dmg == 3 ? 4 * 4096 + 50 : -1};
				struct failing_file f2 = {fopen(dpath, "rb"), 0, f1.fail_at};
				struct apc_ltt_cpu w1, w2;
				struct apc_err e1, e2;
				struct apc_ltt_raw r1, buf[512];
				int s1 = APC_OK, s2 = APC_OK;
				size_t n = 0, i = 0;
				uint64_t bad = 0;
				apc_err_clear(&e1);
				apc_err_clear(&e2);
				T_EQ_INT(apc_ltt_cpu_init(&w1, 0, "cpu", failing_read, &f1, ids, big, 4096, &e1), APC_OK);
				T_EQ_INT(apc_ltt_cpu_init(&w2, 0, "cpu", failing_read, &f2, ids, big, 4096, &e2), APC_OK);
				T_EQ_INT(apc_ltt_cpu_readahead(&w2, 5 * 4096 + 1000, &e2), APC_OK);
				w1.subsec = w2.subsec = strstr(opts[o], "usec") ? APC_LTT_SUBSEC_US : APC_LTT_SUBSEC_NS;
				for (;;) {
					s1 = apc_ltt_cpu_next(&w1, &r1, &e1);
					if (i == n && s2 == APC_OK) {
						n = apc_ltt_cpu_run(&w2, buf, runs[ri], &s2, &e2);
						i = 0;
						T_ASSERT(n <= runs[ri]);
					}
					if (s1 != APC_OK) {
						T_EQ_U64(i, n); /* both ran out together */
						break;
					}
					if (i == n) {
						T_FAIL("run stopped early (status %d) at offset %" PRIu64, s2, r1.offset);
						break;
					}
					const struct apc_ltt_raw *r2 = &buf[i++];
					compared++;
					if ((r1.cpu != r2->cpu || r1.id != r2->id || r1.hdr32 != r2->hdr32 ||
					     r1.cycles != r2->cycles || r1.ts != r2->ts || r1.offset != r2->offset ||
					     r1.len != r2->len || r1.fac != r2->fac || r1.def != r2->def ||
					     memcmp(r1.payload, r2->payload, r1.len)) && !bad++)
						T_FAIL("%s damage %d run %zu: event at %" PRIu64 " differs (id %u/%u ts %" PRIu64 "/%" PRIu64 ")",
						       opts[o], dmg, runs[ri], r1.offset, r1.id, r2->id, r1.ts, r2->ts);
				}
				T_EQ_U64(bad, 0);
				T_EQ_INT(s2, s1);
				if (dmg != 2) /* overwritten bytes may or may not be caught */
					T_EQ_INT(s1, dmg == 0 ? APC_END : dmg == 1 ? APC_EDATA : APC_EIO);
				if (s1 < 0) {
					T_EQ_STR(e2.msg, e1.msg);
					T_EQ_U64((uint64_t)e2.offset, (uint64_t)e1.offset);
				}
				T_EQ_U64(w2.wraps, w1.wraps);
				T_EQ_U64(w2.undefined, w1.undefined);
				T_EQ_U64(w2.skipped, w1.skipped);
				T_EQ_U64(w2.nblocks, w1.nblocks);
				T_EQ_U64(w2.block_off, w1.block_off);
				apc_ltt_cpu_free(&w1);
				apc_ltt_cpu_free(&w2);
				fclose(f1.f);
				fclose(f2.f);
			}
		}
		apc_ltt_defs_free(&d);
		apc_ltt_ids_free(ids);
	}
	T_ASSERT(compared > 50000);
	rm_rf(dir);
}

/* One event of a walk, its payload copied (the walker's pointer is not
 * valid past the next call). */
struct cut_ev {
	uint16_t id;
	uint64_t offset, ts, cycles;
	size_t len;
	uint8_t payload[64];
};

/*
 * Walk the first `len` bytes of `bytes` as a CPU file: by
 * apc_ltt_cpu_next, or with read-ahead through apc_ltt_cpu_run in runs
 * of 5.  Events go to out (at most max); returns the final status, the
 * walker's counters and message in *w and *err (w freed).
 */
static int cut_walk(const uint8_t *bytes, size_t len, const struct apc_ltt_ids *ids, int keep,
		    int use_run, struct cut_ev *out, size_t max, size_t *n, struct apc_ltt_cpu *w,
		    struct apc_err *err)
{
	FILE *f = len ? fmemopen((void *)bytes, len, "rb") : fopen("/dev/null", "rb");
	struct apc_ltt_raw ev, run[5];
	int st;

	*n = 0;
	apc_err_clear(err);
	if (!f)
		return APC_EIO;
	T_EQ_INT(apc_ltt_cpu_init(w, 0, "cpu/0", file_read, f, ids, 0, 4096, err), APC_OK);
	w->subsec = APC_LTT_SUBSEC_NS;
	w->keep_untimed = keep;
	if (use_run)
		T_EQ_INT(apc_ltt_cpu_readahead(w, 3 * 4096, err), APC_OK);
	for (;;) {
		size_t got = 1;
		if (use_run) {
			got = apc_ltt_cpu_run(w, run, 5, &st, err);
		} else {
			st = apc_ltt_cpu_next(w, &ev, err);
			run[0] = ev;
			if (st != APC_OK)
				got = 0;
		}
		for (size_t i = 0; i < got && *n < max; i++) {
			struct cut_ev *o = &out[(*n)++];
			o->id = run[i].id;
			o->offset = run[i].offset;
			o->ts = run[i].ts;
			o->cycles = run[i].cycles;
			o->len = run[i].len;
			memcpy(o->payload, run[i].payload, run[i].len < 64 ? run[i].len : 64);
		}
		if (st != APC_OK)
			break;
	}
	/* the cut stays the answer */
	if (st == APC_EDATA)
		T_EQ_INT(apc_ltt_cpu_next(w, &ev, err), APC_EDATA);
	apc_ltt_cpu_free(w);
	fclose(f);
	return st;
}

static int cut_same(const struct cut_ev *a, const struct cut_ev *b, int same_ts)
{
	return a->id == b->id && a->offset == b->offset && a->cycles == b->cycles &&
	       a->len == b->len && (!same_ts || a->ts == b->ts) &&
	       !memcmp(a->payload, b->payload, a->len < 64 ? a->len : 64);
}

/*
 * A CPU file cut at every byte of its first two blocks, walked by
 * apc_ltt_cpu_next and by apc_ltt_cpu_run, against the whole file's
 * walk: the blocks before the cut block whole; of the cut block, every
 * event with the whole file's time when the cut spares block_end (only
 * padding and the trailer lost), else none and its whole events counted
 * in untimed, or with keep_untimed (control files) block_start and the
 * whole events, at block_start's time.  Always APC_EDATA at the cut.
 */
static void cut_blocks(void)
{
	char dir[] = "/tmp/test_ltt_cut.XXXXXX", path[600];
	enum { MAXEV = 4096 };
	struct cut_ev *whole = calloc(MAXEV, sizeof *whole), *got = calloc(MAXEV, sizeof *got);
	uint64_t checked = 0, bad = 0, spared = 0;

	if (!whole || !got || !mkdtemp(dir)) {
		T_FAIL("setup");
		free(whole);
		free(got);
		return;
	}
	T_EQ_INT(lttgen("lttgen --seed 31 --events 400 --cpus 1 -o %s/t", dir), 0);
	snprintf(path, sizeof path, "%s/t", dir);
	struct apc_ltt_defs d = {0};
	struct apc_ltt_arch a = {0};
	struct apc_ltt_ids ids;
	struct apc_ltt_cpu w;
	struct apc_err err;
	size_t nwhole = 0, n, flen;
	load_gen_ids(path, &d, &a, &ids);
	apc_err_clear(&err);
	snprintf(path, sizeof path, "%s/t/cpu/0", dir);
	uint8_t *file = t_read_file(path, &flen);
	T_ASSERT(file && flen >= 3 * 4096);
	if (!file || flen < 3 * 4096)
		goto out;
	T_EQ_INT(cut_walk(file, flen, &ids, 0, 0, whole, MAXEV, &nwhole, &w, &err), APC_END);
	T_ASSERT(nwhole < MAXEV);
	for (size_t k = 1; k < 2 * 4096; k++) {
		size_t b0 = k / 4096 * 4096; /* the cut block's offset */
		if (k == b0)
			continue; /* a clean end */
		/* the whole walk's events before the cut block, and in it */
		size_t before = 0, in = 0, timed_end = 0, fit = 0;
		while (before < nwhole && whole[before].offset < b0)
			before++;
		while (before + in < nwhole && whole[before + in].offset < b0 + 4096)
			in++;
		const struct cut_ev *blk = whole + before;
		for (size_t i = 0; i < in; i++) {
			if (blk[i].offset + APC_LTT_HDR + blk[i].len > k)
				break;
			if (blk[i].id == APC_LTT_ID_BLOCK_END)
				timed_end = 1;
			else if (i > 0)
				fit++; /* whole, neither block_start nor block_end */
		}
		int has_start = k - b0 >= APC_LTT_HDR + APC_LTT_BLOCK_EV;
		spared += timed_end;
		for (int keep = 0; keep < 2; keep++)
			for (int use_run = 0; use_run < 2; use_run++) {
				int st = cut_walk(file, k, &ids, keep, use_run, got, MAXEV, &n, &w, &err);
				size_t want = before + (timed_end ? in : keep && has_start ? 1 + fit : 0);
				int ok = st == APC_EDATA && err.offset == (int64_t)k && n == want &&
					 w.untimed == (!timed_end && !keep && has_start ? fit : 0);
				char msg[80];
				snprintf(msg, sizeof msg, "truncated block: %zu of 4096 bytes", k - b0);
				ok = ok && strstr(err.msg, msg) != NULL;
				for (size_t i = 0; ok && i < n; i++)
					ok = cut_same(&got[i], &whole[i],
						      i < before || timed_end) &&
					     (i < before || timed_end || got[i].ts == blk[0].ts);
				checked++;
				if (!ok && !bad++)
					T_FAIL("cut at %zu (keep %d, run %d): status %d offset %" PRId64
					       " '%s', %zu events (want %zu), untimed %" PRIu64 " (fit %zu)",
					       k, keep, use_run, st, err.offset, err.msg, n, want,
					       w.untimed, fit);
			}
	}
	T_EQ_U64(bad, 0);
	T_ASSERT(checked > 30000);
	T_ASSERT(spared > 10); /* cuts after block_end in both blocks */
out:
	free(file);
	free(whole);
	free(got);
	apc_ltt_defs_free(&d);
	apc_ltt_ids_free(&ids);
	rm_rf(dir);
}

void run_tests(void)
{
	T_RUN(xml_tolerant);
	T_RUN(xml_cut);
	T_RUN(defs_cut);
	T_RUN(eventdefs_history_cut);
	T_RUN(type_language);
	T_RUN(interp_exact);
	T_RUN(interp_fast_exact);
	T_RUN(fieldref_same);
	T_RUN(run_same_as_next);
	T_RUN(eventdefs_history);
	T_RUN(smp_example_walk);
	T_RUN(smp_example_reader);
	T_RUN(gen_little_old);
	T_RUN(gen_big_new);
	T_RUN(gen_usec_one_cpu);
	T_RUN(gen_undefined_ids);
	T_RUN(gen_kernel);
	T_RUN(gen_many_cpus);
	T_RUN(ids_compact);
	T_RUN(control_ids);
	T_RUN(buffer_follows_file);
	T_RUN(cut_blocks);
}
