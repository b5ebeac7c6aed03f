/*
 * ledger_store.h
 *		The durable record of ledgers and charges, and its sums in shared
 *		memory.
 */
#ifndef CONTCOUNT_LEDGER_STORE_H
#define CONTCOUNT_LEDGER_STORE_H

#include "datatype/timestamp.h"

#include "core/accounting.h"

/*
 * A charge as the store keeps it, for the audit: releases releases of cost
 * each (in their own accounting: the epsilon of a pure release, the rho of a
 * zCDP one), which cost the ledger units in all, in the ledger's accounting.
 * releases is 0 for a charge recorded before 0.5, which kept only units (an
 * epsilon, for one release or a batch whose size the function text gives):
 * cost is then that whole epsilon.  A refund gives back what was paid in
 * advance for releases that were never made.
 */
typedef struct StoreCharge
{
	TimestampTz at;
	Oid			role;
	int64		ledger;
	cc_cost		cost;
	int64		releases;
	uint64		units;
	bool		refund;
	const char *function;
	const char *statement;
	/* an overspend is refused without the ledger's figures (never stored) */
	bool		figures_hidden;
} StoreCharge;

/* "pure" or "zcdp"; and back, false for any other name. */
extern const char *ledger_accounting_name(cc_accounting accounting);
extern bool ledger_accounting_parse(const char *name, cc_accounting *accounting);

/* The longest ledger name, in bytes: the store keeps it whole. */
#define LEDGER_NAME_MAX 1023

/* The WAL resource manager, registered while preloading. */
extern void ledger_store_register_rmgr(void);

/* Shared memory: reserve it, then attach (and at server start, load). */
extern void ledger_store_shmem_request(void);
extern void ledger_store_shmem_startup(void);

/* Record a new ledger, durably, with the accounting it keeps for good. */
extern void ledger_store_create(int64 ledger, const char *name, Oid role,
								cc_accounting accounting);

/*
 * Charge a ledger whose budget is budget_units (in its accounting), durably,
 * for as many releases of charge->cost each as the budget affords, at least
 * one and at most max_releases, and return how many; raise an error if not
 * even one fits (ZB001), or if the ledger cannot account for such a release
 * (ZB003: a zCDP release on a pure ledger).  charge->releases and
 * charge->units are filled in.  name is for messages.
 */
/*
 * Give back the room (its sum and blocks) of a ledger that nothing can
 * charge any more: dropped, or whose creation rolled back.  An item that
 * forgets it is logged, not flushed (lost in a crash, the ledger keeps its
 * room); its charges stay for the audit.  Nothing if the store does not
 * hold it.  See ledger_forget.c for when.
 */
extern void ledger_store_forget(int64 ledger);

/*
 * Did the store forget ledger (dropped, see ledger_store_forget)?  If so,
 * what it had spent and its accounting, added up from its items.
 */
extern bool ledger_store_forgotten(int64 ledger, uint64 *spent_units, cc_accounting *accounting);

extern int64 ledger_store_charge(int64 ledger, const char *name, uint64 budget_units,
								 StoreCharge *charge, int64 max_releases);

/*
 * Give back, durably, refund->releases releases of refund->cost paid in
 * advance by charges that this backend made and whose releases were never
 * made; refund->units is filled in.
 */
extern void ledger_store_refund(StoreCharge *refund);

/*
 * Accept the store after recovery stopped at a target (charges made after
 * it may be missing): releases are refused until a superuser does.
 */
extern void ledger_store_accept(void);

/*
 * A number that changes after every commit that changed contcount.ledger in
 * any database (its statement trigger counts the change at commit), so that
 * a backend may keep a ledger's committed row while it stays the same; 0
 * without shared memory (then nothing may be kept).
 */
extern uint64 ledger_store_generation(void);
extern void ledger_store_catalog_changed(void);

/*
 * What a ledger spent so far, in units of its accounting, and that
 * accounting (unless NULL); false if the store has no such ledger.
 */
extern bool ledger_store_spent(int64 ledger, uint64 *spent_units, cc_accounting *accounting);

/*
 * What one release of cost costs a ledger of that accounting, in its units;
 * ZB003 (named by name) if it cannot pay, as for a zCDP release on a pure
 * ledger.
 */
extern uint64 ledger_store_release_units(cc_accounting accounting, const char *name,
										 cc_cost cost);

/*
 * Per-block budgets.  A block is the part of a ledger's data timed in
 * [start, start + length); it is created by its first charge, with the
 * length of that charge, and keeps what it spent for good (retired or not).
 * A charge pays for one release from each block of a run of count blocks of
 * length usecs from first.
 */
typedef struct StoreBlockRun
{
	TimestampTz first;
	int64		length;
	int64		count;
} StoreBlockRun;

typedef struct StoreBlock
{
	int64		ledger;
	TimestampTz start;
	TimestampTz end;
	uint64		spent_units;	/* by its charges, in the ledger's accounting */
	uint64		ledger_spent_units; /* by the ledger's own charges */
} StoreBlock;

/*
 * Charge each block of run of ledger, durably, for one release of
 * charge->cost (in the ledger's accounting), with budget_units as each
 * block's budget, against which the ledger's own charges count too (they
 * paid for releases of all its data): all of them in one WAL record, or
 * none.  An error if any
 * block would overspend (ZB001), the ledger cannot account for the release
 * (ZB003), a block of the ledger that overlaps the run was charged with
 * another length (55000), or there is no room for the new blocks (53400);
 * and as ledger_store_charge otherwise.  name is for messages.
 */
extern void ledger_store_charge_blocks(int64 ledger, const char *name, uint64 budget_units,
									   StoreCharge *charge, const StoreBlockRun *run);

/*
 * Take in the blocks of a ledger the store knows from an export, durably:
 * each block whose spending the store holds below the export's is charged
 * the difference (whatever its budget), creating it if need be.  Nothing
 * lowers what a block spent.  An error (55000) for a block that overlaps a
 * block of another length.
 */
/*
 * Is there room for the blocks of run that ledger does not hold yet (its
 * share, contcount.max_blocks_per_ledger, and the server's,
 * contcount.max_blocks)?  53400 if not, saying who holds the room as far as
 * role may see.  Checked again by the charge, under the lock.
 */
extern void ledger_store_check_block_room(int64 ledger, const char *name, const StoreBlockRun *run,
										  Oid role);

extern void ledger_store_import_blocks(int64 ledger, const StoreBlock *blocks, int nblocks);

/* Every block the store holds, in no order, palloc'd; how many in *nblocks. */
extern StoreBlock *ledger_store_blocks(int64 *nblocks);

/* Call fn for every block charge in the store, oldest first. */
extern void ledger_store_scan_blocks(void (*fn) (const StoreCharge *charge,
												 const StoreBlockRun *run, void *arg),
									 void *arg);

/* Call fn for every charge in the store, oldest first. */
extern void ledger_store_scan(void (*fn) (const StoreCharge *charge, void *arg), void *arg);

/*
 * Take in a ledger from an export, durably: unknown to the store, it is
 * created (in this database, with the export's accounting, creation time and
 * creator) with the export's charges and refunds as its audit; then, if what
 * the store holds is less than spent_units, the difference is charged.
 * Nothing lowers what a ledger spent, and nothing changes its accounting
 * (ZB003); an audit that does not add up to spent_units is refused (22023).
 * Returns "created", "raised" or "kept".
 */
extern const char *ledger_store_import(int64 ledger, const char *name, cc_accounting accounting,
									   TimestampTz created_at, Oid created_by, uint64 spent_units,
									   const StoreCharge *charges, int ncharges);

/*
 * Check, writing nothing, what ledger_store_import and
 * ledger_store_import_blocks would refuse of a ledger of an export, so that
 * an import refused for one ledger takes in none: a name too long or an
 * audit that does not add up to spent_units (22023), another accounting
 * than the store's (ZB003); blocks out of order or overlapping each other
 * (22023) or a block of another length in the store (55000), returning how
 * many blocks the store does not hold.  Then whether the store has room for
 * that many new ledgers and blocks (53400; a concurrent creation may still
 * take the room before the import does).
 */
extern void ledger_store_check_import(int64 ledger, const char *name, cc_accounting accounting,
									  uint64 spent_units, const StoreCharge *charges, int ncharges);
extern int	ledger_store_check_import_blocks(int64 ledger, const char *name,
											 const StoreBlock *blocks, int nblocks);
extern void ledger_store_check_import_room(int ledgers, int64 blocks);

/*
 * The latest ledger created in database under name for which known(id, arg)
 * is false, or 0 if there is none: a ledger whose catalog row went with a
 * dropped extension.
 */
extern int64 ledger_store_find_created(Oid database, const char *name,
									   bool (*known) (int64 ledger, void *arg), void *arg);

#endif							/* CONTCOUNT_LEDGER_STORE_H */
