/*
 * ledger_store.h
 *		The durable record of ledgers and charges, and its sums in shared
 *		memory.
 */
#ifndef CONTCOUNT_LEDGER_STORE_H
#define CONTCOUNT_LEDGER_STORE_H

#include "datatype/timestamp.h"

/* A charge as the store keeps it, for the audit. */
typedef struct StoreCharge
{
	TimestampTz at;
	Oid			role;
	int64		ledger;
	uint64		epsilon_units;
	const char *function;
	const char *statement;
} StoreCharge;

/* Shared memory: reserve it, then attach (and at server start, load). */
extern void ledger_store_shmem_request(void);
extern void ledger_store_shmem_startup(void);

/* Record a new ledger, durably. */
extern void ledger_store_create(int64 ledger, const char *name, Oid role);

/*
 * Charge epsilon_units to a ledger whose budget is budget_units, durably,
 * or raise an error if that would overspend it.  name is for messages.
 */
extern void ledger_store_charge(int64 ledger, const char *name, uint64 budget_units,
								const StoreCharge *charge);

/* Epsilon spent so far; false if the store has no such ledger. */
extern bool ledger_store_spent(int64 ledger, uint64 *spent_units);

/* Call fn for every charge in the store, oldest first. */
extern void ledger_store_scan(void (*fn) (const StoreCharge *charge, void *arg), void *arg);

#endif							/* CONTCOUNT_LEDGER_STORE_H */
