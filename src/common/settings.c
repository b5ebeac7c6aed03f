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
int			contcount_max_ledgers_per_role = 100;
int			contcount_max_blocks_per_ledger = 5000;
int			contcount_max_counters_per_role = 25;

/*
 * Each role's (or ledger's) share of the server-wide room, so that one role
 * cannot fill what every database shares.  PGC_SUSET: a superuser sets them
 * for the server, or per role with ALTER ROLE ... SET to give one role more;
 * a role cannot raise its own.  Checked where the room is taken, so they
 * need no server start.  See docs/fair-shares.md.
 */
static void
shares_define(void)
{
	DefineCustomIntVariable("contcount.max_ledgers_per_role",
							"Most live privacy budget ledgers a role that is not a superuser may have created, in all databases.",
							"A dropped ledger no longer counts.",
							&contcount_max_ledgers_per_role,
							100, 0, 1000000,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("contcount.max_blocks_per_ledger",
							"Most blocks of per-block budgets one ledger may hold.",
							"Retired blocks count too, until their ledger is dropped.",
							&contcount_max_blocks_per_ledger,
							5000, 0, 10000000,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("contcount.max_counters_per_role",
							"Most counters a role that is not a superuser may own.",
							NULL,
							&contcount_max_counters_per_role,
							25, 0, 100000,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);
}

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
	shares_define();
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
