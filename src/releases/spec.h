/*
 * spec.h
 *		Mechanism parameters as SQL gives them, checked into cc_params.
 */
#ifndef CONTCOUNT_SPEC_H
#define CONTCOUNT_SPEC_H

#include "fmgr.h"

#include "core/mechanism.h"

/* The fields in the order of the composite type contcount.mechanism. */
typedef enum SpecField
{
	SPEC_NAME,
	SPEC_EPSILON,
	SPEC_HORIZON,
	SPEC_BLOCK,
	SPEC_SENSITIVITY,
	SPEC_BETA,
	SPEC_LEDGER,				/* not a mechanism parameter: who pays */
	SPEC_RHO,					/* for a zCDP mechanism, in place of epsilon;
								 * added in 0.5, so absent from the values of
								 * databases not yet updated */
	SPEC_NFIELDS
} SpecField;

/* The defaults the SQL signatures declare too. */
#define SPEC_DEFAULT_SENSITIVITY 1
#define SPEC_DEFAULT_BETA 0.05

typedef struct SpecArgs
{
	NullableDatum field[SPEC_NFIELDS];

	/*
	 * What mechanism "auto" minimizes; NULL: the mean.  Not a field of the
	 * composite, which holds the mechanism picked, not the way it was.
	 */
	NullableDatum objective;

	/*
	 * Whether running_count shows its releases non-negative and
	 * non-decreasing; NULL: no.  The composite's last field (from 0.6), kept
	 * apart from the fields above because it is no mechanism parameter and
	 * the releases that read those from a call have no such argument.
	 */
	NullableDatum monotone;
} SpecArgs;

/* The composite's attribute number of monotone. */
#define SPEC_MONOTONE_ATTNO (SPEC_NFIELDS + 1)

/* The ledger named in the arguments, or NULL for contcount.ledger. */
extern char *spec_ledger(const SpecArgs *args);

/* Whether the option monotone is given and true. */
extern bool spec_monotone(const SpecArgs *args);

/*
 * Check the arguments and fill params; raises an error for any bad one.
 * Mechanism "auto" is resolved here to the one it picks.
 */
extern void spec_to_params(const SpecArgs *args, cc_params *params);

/*
 * A NOTICE of the mechanism "auto" picked, for releases whose result does
 * not show it; nothing for a named mechanism.
 */
extern void spec_notice_choice(const SpecArgs *args, const cc_params *params);

/* Arguments for mechanism name with the default block, sensitivity and beta. */
extern void spec_with_defaults(SpecArgs *args, const char *name,
							   NullableDatum epsilon, NullableDatum horizon);

/* Read a contcount.mechanism value. */
extern void spec_from_composite(Datum composite, SpecArgs *args);

/*
 * Read arguments of a call; argno[f] is the argument of field f, NULL when
 * the call has no such argument (a function of an earlier version's SQL,
 * which the library still serves).  The objective is left NULL, for the
 * caller that takes one to set.
 */
extern void spec_from_call(FunctionCallInfo fcinfo, const int argno[SPEC_NFIELDS],
						   SpecArgs *args);

/*
 * The objective from argument argno, when the function's SQL definition
 * has it: those of version 0.1, which the library still serves, have none.
 */
extern void spec_objective_from_call(FunctionCallInfo fcinfo, int argno,
									 SpecArgs *args);


/* Epsilon as the core holds it, or an error. */
extern uint64 spec_epsilon_units(NullableDatum epsilon);

#endif							/* CONTCOUNT_SPEC_H */
