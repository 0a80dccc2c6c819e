/*
 * table.c - the one table of input formats, and detection by bid.
 *
 * Each format file defines one `const struct apc_format apc_format_X`.
 * The references here are what pull each format's object out of
 * libapc.a into the commands.
 */
#include <string.h>

#include "format.h"
#include "util.h"

#define APC_FMT(x) extern const struct apc_format x;
APC_FMT(apc_format_apc)
APC_FMT(apc_format_barman)
APC_FMT(apc_format_ltt)
APC_FMT(apc_format_tptp_bin)
APC_FMT(apc_format_tptp_xml)
APC_FMT(apc_format_annotate)
#undef APC_FMT

static const struct apc_format *const all_formats[] = {
	&apc_format_apc,      &apc_format_barman,   &apc_format_ltt,
	&apc_format_tptp_bin, &apc_format_tptp_xml, &apc_format_annotate,
};

#define NFORMATS (sizeof all_formats / sizeof all_formats[0])

/* Compacted at first use: the present formats, NULL-terminated. */
static const struct apc_format *present[NFORMATS + 1];

static void fill_present(void)
{
	size_t n = 0;

	if (present[0])
		return;
	for (size_t i = 0; i < NFORMATS; i++)
		if (all_formats[i])
			present[n++] = all_formats[i];
	present[n] = NULL;
}

const struct apc_format *const *apc_format_list(void)
{
	fill_present();
	return present;
}

const struct apc_format *apc_format_find(const char *name)
{
	fill_present();
	for (size_t i = 0; present[i]; i++)
		if (strcmp(present[i]->name, name) == 0)
			return present[i];
	return NULL;
}

const struct apc_format *apc_format_detect(struct apc_input *in, int *bid)
{
	const struct apc_format *best = NULL;
	int best_bid = 0;

	fill_present();
	for (size_t i = 0; present[i]; i++) {
		int b = present[i]->bid ? present[i]->bid(in) : 0;
		if (b > best_bid) {
			best_bid = b;
			best = present[i];
		}
	}
	if (bid)
		*bid = best_bid;
	return best;
}

int apc_format_foreign(struct apc_input *in, struct apc_err *err)
{
	const struct apc_format *f = apc_format_detect(in, NULL);

	if (!f || f == &apc_format_apc)
		return 0;
	/* named as the stream's messages name it ("<stdin>" for "-") */
	apc_err_set(err, APC_EIO,
		    apc_input_is_tree(in) ? apc_input_name(apc_input_path(in))
					  : apc_stream_name(apc_input_stream(in)),
		    APC_NO_OFFSET,
		    "not an APC capture but %s input: convert it with apcconv first", f->name);
	return 1;
}
