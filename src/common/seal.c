/*
 * seal.c
 *		The seal of every owner scope: settings pinned, the caller's
 *		instrumentation kept apart.
 *
 * The session an owner scope runs in is the caller's: its settings, and
 * EXPLAIN ANALYZE or pg_stat_statements around the call.  Left alone, a
 * query over protected rows would report on itself through them: sort
 * reports (trace_sort), printed plans with row estimates (debug_print_*),
 * the buffers and WAL it used, a cast that fails on a row's value in a
 * time zone the caller chose.  So every owner scope pins the settings of
 * the table below, which docs/sealed-releases.md explains one by one (and
 * classifies every other setting a role may change), and the owner scope
 * puts the caller's buffer and WAL counters back as they were.
 *
 * A setting is set only where its value differs from the pinned one: an
 * owner scope opens on every charge, and most sessions differ in a few
 * settings at most.  Timing cannot be sealed: see the docs.
 *
 * IDENTIFICATION
 *	  src/common/seal.c
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgtime.h"
#include "utils/guc.h"

#include "common/seal.h"

/*
 * Does the current value (as SHOW gives it) hold as the pinned one?  NULL:
 * only the pinned value's own text does.
 */
typedef bool (*SealedHolds) (const char *current);

typedef struct SealedSetting
{
	const char *name;
	const char *value;
	SealedHolds holds;
} SealedSetting;

/* Any zone whose offset is always 0 prints and casts as UTC does. */
static bool
utc_holds(const char *current pg_attribute_unused())
{
	long int	offset;

	return pg_get_timezone_offset(session_timezone, &offset) && offset == 0;
}

/* The C locale, under any of its names (C.UTF-8 formats money as C does). */
static bool
c_locale_holds(const char *current)
{
	return strcmp(current, "C") == 0 || strcmp(current, "POSIX") == 0 ||
		strncmp(current, "C.", 2) == 0;
}

/*
 * Messages of the levels below NOTICE (LOG and DEBUG, which trace_* and
 * debug_* settings and the executor's own tracing use) never reach the
 * client from inside; a caller who asked for fewer messages keeps its level.
 */
static bool
messages_hold(const char *current pg_attribute_unused())
{
	return client_min_messages >= NOTICE;
}

/*
 * A sort that spills writes temp files, whose sizes every role reads in
 * pg_stat_database: a caller's small work_mem would make a small window's
 * sort spill.  At least the default, which only large releases exceed (the
 * docs tell the DBA to close that view).
 */
static bool
work_mem_holds(const char *current pg_attribute_unused())
{
	return work_mem >= 4096;
}

static const SealedSetting sealed[] = {
	/* names resolve in pg_catalog first, the caller's schemas never */
	{"search_path", "pg_catalog, pg_temp", NULL},
	/* nothing from inside reports on the query to the client */
	{"client_min_messages", "notice", messages_hold},
	{"trace_sort", "off", NULL},
	{"trace_notify", "off", NULL},
	{"debug_print_parse", "off", NULL},
	{"debug_print_rewritten", "off", NULL},
	{"debug_print_plan", "off", NULL},
	/* a value's text, and casts between times, are the same for everyone */
	{"TimeZone", "UTC", utc_holds},
	{"DateStyle", "ISO, MDY", NULL},
	{"IntervalStyle", "postgres", NULL},
	{"extra_float_digits", "1", NULL},
	{"bytea_output", "hex", NULL},
	{"lc_monetary", "C", c_locale_holds},
	/* what the query reads, and how it may fail, are the owner's */
	{"row_security", "on", NULL},
	{"gin_fuzzy_search_limit", "0", NULL},
	{"transform_null_equals", "off", NULL},
	{"temp_file_limit", "-1", NULL},
	{"work_mem", "4MB", work_mem_holds},
	{"temp_tablespaces", "", NULL},
	{"force_parallel_mode", "off", NULL},
	{"jit", "off", NULL},
};

int
seal_settings(void)
{
	int			nest_level = NewGUCNestLevel();

	for (size_t i = 0; i < lengthof(sealed); i++)
	{
		const SealedSetting *s = &sealed[i];
		const char *current = GetConfigOption(s->name, false, false);

		if (s->holds != NULL ? s->holds(current) : strcmp(current, s->value) == 0)
			continue;
		/* C may set temp_file_limit, a superuser's setting, for the scope */
		(void) set_config_option(s->name, s->value, PGC_SUSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	}
	return nest_level;
}

void
seal_usage_save(SealedUsage *usage)
{
	usage->buffers = pgBufferUsage;
	usage->wal = pgWalUsage;
}

void
seal_usage_restore(const SealedUsage *usage)
{
	pgBufferUsage = usage->buffers;
	pgWalUsage = usage->wal;
}
