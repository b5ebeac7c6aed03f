/*
 * report.c
 *		The core's status codes as PostgreSQL errors.
 *
 * Every bad parameter is 22023 (invalid_parameter_value), so a program can
 * tell bad input from other failures; a stream longer than its horizon is
 * 54000 (program_limit_exceeded) and a count beyond bigint is 22003.  No
 * message shows a stream item: items are the private data.
 *
 * IDENTIFICATION
 *	  src/common/report.c
 */
#include "postgres.h"

#include "common/random.h"
#include "common/report.h"

#define HYBRID_HINT "Use mechanism \"hybrid\" for a stream of unknown length."

/* A parameter out of its range, or not given where it is needed: 22023. */
static void
report_bad_parameter(cc_status status, const cc_params *params, const char *name)
{
	switch (status)
	{
		case CC_BAD_EPSILON:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("epsilon must be between 0.000001 and 1000")));
			break;
		case CC_NEED_HORIZON:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("mechanism \"%s\" needs a horizon", name),
					 errhint("Give horizon, the number of steps to release. " HYBRID_HINT)));
			break;
		case CC_BAD_HORIZON:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("horizon must be between 1 and " INT64_FORMAT,
							params ? cc_kind_max_horizon(params->kind) : CC_MAX_HORIZON)));
			break;
		case CC_BAD_BLOCK:
			if (params->kind == CC_KARY)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("block, kary's arity k, must be odd, at least 3, and small enough for the horizon"),
						 errdetail("A state holds k + 2 numbers a level, in at most %d bytes.",
								   CC_STATE_MAX_BYTES),
						 errhint("Leave block out: kary then picks the k of least mean variance.")));
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("block must be between 1 and the horizon, " INT64_FORMAT,
							params->horizon)));
			break;
		case CC_BLOCK_NOT_APPLICABLE:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("block applies only to mechanisms \"two_level\" and \"kary\", not \"%s\"", name)));
			break;
		case CC_BAD_SENSITIVITY:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("sensitivity must be between 1 and " INT64_FORMAT,
							CC_MAX_SENSITIVITY)));
			break;
		case CC_BAD_BETA:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("beta must be strictly between 0 and 1")));
			break;
		case CC_BAD_RHO:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("rho must be between 0.000001 and 1000")));
			break;
		default:
			break;
	}
}

/*
 * Noise the mechanism cannot draw, or a budget in the other accounting than
 * the mechanism's noise: 22023.
 */
static void
report_bad_noise(cc_status status, const cc_params *params, const char *name)
{
	switch (status)
	{
		case CC_SCALE_TOO_LARGE:
			if (params && params->privacy == CC_ZCDP)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("noise of mechanism \"%s\" would exceed the variance its sampler draws exactly, 2^62",
								name),
						 errhint("Raise rho, or lower the horizon or the sensitivity.")));
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("noise scale of mechanism \"%s\" would exceed 10^15", name),
					 errhint("Raise epsilon, or lower the horizon or the sensitivity.")));
			break;
		case CC_WRONG_PRIVACY:
			if (params && cc_kind_privacy(params->kind) == CC_ZCDP)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("mechanism \"%s\" adds Gaussian noise and is charged in rho (zCDP), not epsilon",
								name)));
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("mechanism \"%s\" adds Laplace noise and is charged in epsilon, not rho",
							name)));
			break;
		default:
			break;
	}
}

/*
 * What the stream did: a negative item (22023), more steps than its horizon
 * (54000), a count beyond bigint (22003).
 */
static void
report_bad_stream(cc_status status, const cc_params *params, int64 step)
{
	switch (status)
	{
		case CC_NEGATIVE_ITEM:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("stream items must not be negative"),
					 errdetail("The item at step " INT64_FORMAT " is negative.", step),
					 errhint("An item is the number of events in its step; NULL counts as 0.")));
			break;
		case CC_PAST_HORIZON:
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("stream is longer than its horizon of " INT64_FORMAT " steps",
							params->has_horizon ? params->horizon : CC_MAX_HORIZON),
					 errhint("Raise horizon. " HYBRID_HINT)));
			break;
		case CC_OVERFLOW:
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("running count is out of range for type bigint")));
			break;
		default:
			break;
	}
}

/*
 * Raise the error a status of the core stands for (the parameters it was
 * found with, or NULL; the step, for a bad item).  Never returns: CC_OK, or
 * a status not known here, is an internal error.
 */
void
report_status(cc_status status, const cc_params *params, int64 step)
{
	const char *name = params ? cc_kind_name(params->kind) : "";

	report_bad_parameter(status, params, name);
	report_bad_noise(status, params, name);
	report_bad_stream(status, params, step);
	elog(ERROR, "unexpected contcount status %d", (int) status);
}

void
push_or_report(cc_state *state, int64 item)
{
	cc_status	status = cc_push(state, item, strong_rng());

	if (status != CC_OK)
	{
		cc_release	at;

		cc_read(state, &at);
		report_status(status, cc_state_params(state), at.t + 1);
	}
}

/* Budget units (epsilon or rho) as a decimal without trailing zeros: "0.6". */
char *
format_budget_units(uint64 units)
{
	char	   *text = psprintf("%llu.%09llu",
								(unsigned long long) (units / CC_EPSILON_UNITS_PER_ONE),
								(unsigned long long) (units % CC_EPSILON_UNITS_PER_ONE));
	char	   *end = text + strlen(text) - 1;

	while (*end == '0')
		*end-- = '\0';
	if (*end == '.')
		*end = '\0';
	return text;
}
