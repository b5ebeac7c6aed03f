/*
 * shmem.c
 *		Reserves and attaches contcount's shared memory, for the ledger store
 *		and the counters, through PostgreSQL 15's hooks.
 *
 * Wiring, like _PG_init: it calls into the ledger and the counters, so it
 * sits above the layers (docs/design.md, "Layers").
 *
 * IDENTIFICATION
 *	  src/shmem.c
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"

#include "shmem.h"
#include "counters/counter_shmem.h"
#include "ledger/ledger_store.h"

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	ledger_store_shmem_request();
	counter_shmem_request();
}

static void
startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	ledger_store_shmem_startup();
	counter_shmem_startup();
	LWLockRelease(AddinShmemInitLock);
}

void
shmem_install(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = startup;
}
