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

/* What one statement may spend: 0, no cap (src/ledger/statement_cap.c). */
extern double contcount_max_epsilon_per_statement;
extern double contcount_max_rho_per_statement;

extern void settings_define(bool preloading);

#endif							/* CONTCOUNT_SETTINGS_H */
