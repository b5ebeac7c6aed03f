/*
 * contcount.c
 *		Module entry point: the wiring above the layers.
 *
 * _PG_init starts every subsystem, as postmaster.c starts PostgreSQL's: it
 * is the one place that may include every layer (docs/design.md, "Layers"),
 * so that no layer has to reach up to a higher one to be started.
 *
 * IDENTIFICATION
 *	  src/contcount.c
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"

#include "common/settings.h"
#include "shmem.h"
#include "counters/counter.h"
#include "counters/statement_rows.h"
#include "ledger/ledger_store.h"
#include "sources/counter_delta.h"
#include "sources/feed_cache.h"
#include "sources/unit_log.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	settings_define(process_shared_preload_libraries_in_progress);
	/* the triggers count however the library was loaded: their inserts must not fail */
	counter_delta_install();
	unit_log_install();
	feed_cache_install();
	statement_rows_install();
	/* shared state and the step worker exist only when loaded at server start */
	if (process_shared_preload_libraries_in_progress)
	{
		shmem_install();
		ledger_store_register_rmgr();
		/* pg_upgrade must be able to drop and create every database */
		if (!IsBinaryUpgrade)
			counter_worker_register();
	}
}
