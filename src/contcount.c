/*
 * contcount.c
 *		Module entry point.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"

#include "ledger_store.h"
#include "settings.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	settings_define(process_shared_preload_libraries_in_progress);
	/* the ledger's shared state exists only when loaded at server start */
	if (process_shared_preload_libraries_in_progress)
		ledger_store_install();
}
