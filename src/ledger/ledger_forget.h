/*
 * ledger_forget.h
 *		Giving back a ledger's room in the store once its drop commits, or
 *		its creation rolls back.
 */
#ifndef CONTCOUNT_LEDGER_FORGET_H
#define CONTCOUNT_LEDGER_FORGET_H

/* Once this transaction commits (with the subtransaction that asks), forget the ledger. */
extern void ledger_forget_at_commit(int64 ledger);

/* If the (sub)transaction that asks rolls back, forget the ledger it created. */
extern void ledger_forget_at_abort(int64 ledger);

#endif							/* CONTCOUNT_LEDGER_FORGET_H */
