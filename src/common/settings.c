/*
 * settings.c
 *		The contcount.* configuration parameters.
 *
 * IDENTIFICATION
 *	  src/common/settings.c
 */
#include "postgres.h"

#include "utils/guc.h"

#include "common/settings.h"

char	   *contcount_ledger = NULL;
int			contcount_max_ledgers = 1000;
int			contcount_max_blocks = 10000;
int			contcount_max_counters = 100;
char	   *contcount_database = NULL;

void
settings_define(bool preloading)
{
	/*
	 * PGC_SUSET: only a superuser, or ALTER ROLE/DATABASE ... SET run by one,
	 * decides which budget a role spends.  An analyst cannot switch ledgers.
	 */
	DefineCustomStringVariable("contcount.ledger",
							   "Privacy budget ledger that pays for this session's releases.",
							   "Set by a superuser per role or database, with ALTER ROLE or ALTER DATABASE ... SET.",
							   &contcount_ledger,
							   "",
							   PGC_SUSET,
							   0,
							   NULL, NULL, NULL);
	/* server-start settings can only be defined at server start */
	if (preloading)
	{
		DefineCustomIntVariable("contcount.max_ledgers",
								"Most privacy budget ledgers the server can hold, in all databases.",
								NULL,
								&contcount_max_ledgers,
								1000, 1, 1000000,
								PGC_POSTMASTER,
								0,
								NULL, NULL, NULL);
		DefineCustomIntVariable("contcount.max_blocks",
								"Most blocks of per-block budgets the server can hold, in all databases.",
								"Retired blocks count too: each keeps what it spent.",
								&contcount_max_blocks,
								10000, 1, 10000000,
								PGC_POSTMASTER,
								0,
								NULL, NULL, NULL);
		DefineCustomIntVariable("contcount.max_counters",
								"Most counters the server can hold.",
								NULL,
								&contcount_max_counters,
								100, 1, 100000,
								PGC_POSTMASTER,
								0,
								NULL, NULL, NULL);
		DefineCustomStringVariable("contcount.database",
								   "Database whose counters the step worker closes.",
								   "Counters can only be created in this database.",
								   &contcount_database,
								   "postgres",
								   PGC_POSTMASTER,
								   0,
								   NULL, NULL, NULL);
	}
	/*
	 * Only at server start: loaded later by a trigger, the server-start
	 * settings are not defined, and reserving the prefix would warn the
	 * application about them on its first counted insert.
	 */
	if (preloading)
		MarkGUCPrefixReserved("contcount");
}
