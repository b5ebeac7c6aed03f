/*
 * settings.h
 *		The contcount.* configuration parameters.
 */
#ifndef CONTCOUNT_SETTINGS_H
#define CONTCOUNT_SETTINGS_H

/* contcount.ledger: the ledger that pays for releases; superuser-only */
extern char *contcount_ledger;

/*
 * contcount.ledger as it binds the session now: a value that came from a
 * role's or database's setting is read again from pg_db_role_setting, so
 * that ALTER ROLE/DATABASE ... SET or RESET binds sessions already open.
 * NULL or "" when none is selected.  In a transaction.
 */
extern const char *settings_ledger(void);

/* contcount.max_ledgers: ledgers the shared state has room for */
extern int	contcount_max_ledgers;

/* contcount.max_blocks: per-block budgets the shared state has room for */
extern int	contcount_max_blocks;

/* contcount.max_counters: counters the shared state has room for */
extern int	contcount_max_counters;

/* contcount.database: the database whose counters the step worker closes */
extern char *contcount_database;

/* each role's or ledger's share of that room (docs/fair-shares.md) */
extern int	contcount_max_ledgers_per_role;
extern int	contcount_max_blocks_per_ledger;
extern int	contcount_max_counters_per_role;

/*
 * contcount.replay_legacy_wal: the ledger's WAL records 0.5 wrote under
 * resource manager id 128 are replayed (server start only)
 */
extern bool contcount_replay_legacy_wal;

/*
 * contcount.write_legacy_wal_id: this session writes its ledger records
 * under 128, as 0.5 did; for the tests of their replay only
 */
extern bool contcount_write_legacy_wal_id;

/* What one statement may spend: 0, no cap (src/ledger/statement_cap.c). */
extern double contcount_max_epsilon_per_statement;
extern double contcount_max_rho_per_statement;

/*
 * Whether this process is contcount's step worker, set by the worker as it
 * starts: what it charges (a copied counter's epsilon again) is no role's
 * statement, so no per-statement cap applies to it.  Every other process,
 * also another background worker, a parallel worker or a walsender running
 * SQL, is held to the caps.
 */
extern bool contcount_step_worker;

extern void settings_define(bool preloading);

#endif							/* CONTCOUNT_SETTINGS_H */
