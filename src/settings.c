/*
 * settings.c
 *		The contcount.* configuration parameters.
 */
#include "postgres.h"

#include "utils/guc.h"

#include "settings.h"

char	   *contcount_ledger = NULL;
int			contcount_max_ledgers = 1000;

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
	/* a server-start setting can only be defined at server start */
	if (preloading)
		DefineCustomIntVariable("contcount.max_ledgers",
								"Most privacy budget ledgers the server can hold, in all databases.",
								NULL,
								&contcount_max_ledgers,
								1000, 1, 1000000,
								PGC_POSTMASTER,
								0,
								NULL, NULL, NULL);
	MarkGUCPrefixReserved("contcount");
}
