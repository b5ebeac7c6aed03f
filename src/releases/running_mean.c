/*
 * running_mean.c
 *		The running_mean aggregate (issue 14): the continual mean of
 *		src/core/continual_mean.c over rows in time order, each row a sample
 *		from a privacy unit, one release per row.
 *
 * As running_count: the transition function pushes the row's sample (drawing
 * the noise of whatever it releases into the state), the final function only
 * reads the state, frames must grow (a moving one would restart the stream
 * and redraw its noise), the parameters are one value for the whole call
 * site, and each stream (window partition, group, rescan) pays epsilon from
 * the call site's charges before its first value leaves.
 *
 * The core keeps each unit's record in an array the caller owns, by a slot
 * given in order of first appearance; here a hash table (simplehash, with the
 * unit type's default hash and equality, as GROUP BY uses them) maps each
 * unit to its slot, and the array grows by doubling up to the declared
 * number of units.  A unit costs its record (continual_mean.h), a hash entry
 * of 24 bytes (the table at most 0.9 full, and doubling), and a copy of its
 * value if that is passed by reference.
 *
 * The parameters travel as a contcount.mean_mechanism composite (built by
 * contcount.mean_mechanism(), whose defaults read well) or as the short
 * form's five arguments.  The plan, and a state initialized from it (its
 * bound tables take milliseconds), are made once per call site; each stream
 * starts from a copy.  The stream's functions (running_mean.h) also serve
 * source_running_mean, which feeds one stream from a protected source.
 *
 * IDENTIFICATION
 *	  src/releases/running_mean.c
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "access/htup_details.h"
#include "common/hashfn.h"
#include "funcapi.h"
#include "nodes/execnodes.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "common/random.h"
#include "core/accounting.h"
#include "core/continual_mean.h"
#include "core/mechanism.h"
#include "core/monotone.h"
#include "ledger/ledger.h"
#include "releases/call_site.h"
#include "releases/running_mean.h"

/* The transition function's arguments: (state, x, unit, parameters...). */
#define ARG_X 1
#define ARG_UNIT 2
#define FIRST_PARAMETER 3

/* contcount.mean_mechanism's fields, in order */
enum
{
	MM_ALGORITHM, MM_LO, MM_HI, MM_EPSILON, MM_HORIZON, MM_PER_UNIT, MM_UNITS,
	MM_RESOLUTION, MM_BETA, MM_LEDGER, MM_NATTS
};

#define DEFAULT_RESOLUTION 65536
#define DEFAULT_BETA 0.05

/* What the streams of a call site share. */
struct MeanSite
{
	MeanSpec	spec;
	cc_mean    *initial;		/* a state as cc_mean_init() leaves it */
	size_t		size;
	size_t		record_bytes;
	Oid			unit_type;
	int16		unit_len;
	bool		unit_byval;
	FmgrInfo	hash;
	FmgrInfo	equal;
	Oid			collation;
};

typedef struct UnitEntry
{
	Datum		unit;
	int64		slot;
	uint32		hash;
	char		status;
} UnitEntry;

#define SH_PREFIX units
#define SH_ELEMENT_TYPE UnitEntry
#define SH_KEY_TYPE Datum
#define SH_KEY unit
#define SH_HASH_KEY(tb, key) unit_hash((tb)->private_data, key)
#define SH_EQUAL(tb, a, b) unit_equal((tb)->private_data, a, b)
#define SH_STORE_HASH
#define SH_GET_HASH(tb, a) a->hash
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
static inline uint32 unit_hash(void *site, Datum unit);
static inline bool unit_equal(void *site, Datum a, Datum b);
#include "lib/simplehash.h"

/* One stream's transition state. */
struct MeanStream
{
	cc_mean    *state;
	char	   *records;
	int64		capacity;		/* records allocated */
	units_hash *units;
	const MeanSite *site;
	bool		paid;			/* its release is paid for */
	MemoryContext context;
};

/* What the final function keeps for the whole call site. */
typedef struct MeanFinalSite
{
	TupleDesc	tupdesc;
	bool		charging;
	ChargeSite	charge;
} MeanFinalSite;

static inline uint32
unit_hash(void *site, Datum unit)
{
	MeanSite   *s = site;

	return DatumGetUInt32(FunctionCall1Coll(&s->hash, s->collation, unit));
}

static inline bool
unit_equal(void *site, Datum a, Datum b)
{
	MeanSite   *s = site;

	return DatumGetBool(FunctionCall2Coll(&s->equal, s->collation, a, b));
}

/* The core's refusals as errors; no message shows a sample. */
static void
report_mean_status(cc_mean_status status, const cc_mean_params *p)
{
	switch (status)
	{
		case CC_MEAN_OK:
			return;
		case CC_MEAN_BAD_EPSILON:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("epsilon must be between 0.000001 and 1000")));
			break;
		case CC_MEAN_BAD_HORIZON:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("horizon must be between 1 and " INT64_FORMAT " for resolution " INT64_FORMAT,
							CC_MEAN_MAX_SUM / p->resolution, p->resolution)));
			break;
		case CC_MEAN_BAD_USERS:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("units must be between 1 and the horizon, " INT64_FORMAT, p->horizon)));
			break;
		case CC_MEAN_BAD_PER_USER:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("per_unit must be between 1 and the horizon, " INT64_FORMAT " (and below 2^40)",
							p->horizon)));
			break;
		case CC_MEAN_BAD_RESOLUTION:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("resolution must be between 1 and " INT64_FORMAT, CC_MEAN_MAX_RESOLUTION)));
			break;
		case CC_MEAN_BAD_BETA:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("beta must be strictly between 0 and 1")));
			break;
		case CC_MEAN_SCALE_TOO_LARGE:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("noise scale of running_mean would exceed 10^15"),
					 errhint("Raise epsilon, or lower per_unit, the horizon or the resolution.")));
			break;
		case CC_MEAN_PAST_HORIZON:
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("stream has more samples than its horizon of " INT64_FORMAT, p->horizon),
					 errhint("Raise horizon.")));
			break;
		case CC_MEAN_TOO_MANY_USERS:
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("stream has more units than the " INT64_FORMAT " declared", p->users),
					 errhint("Raise units.")));
			break;
		case CC_MEAN_OVERFLOW:
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("noisy sum of running_mean out of range")));
			break;
		case CC_MEAN_BAD_PLAN:
		case CC_MEAN_BAD_SAMPLE:
		case CC_MEAN_BAD_USER:
			elog(ERROR, "running_mean: the core refused its input (%d)", (int) status);
			break;
	}
}

static bool
field_null(NullableDatum *fields, int field, bool may_be_null, const char *name)
{
	if (fields[field].isnull && !may_be_null)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", name)));
	return fields[field].isnull;
}

/*
 * Check the fields of a contcount.mean_mechanism into spec (in the current
 * memory context): by contcount.mean_mechanism() and again by the aggregate,
 * since a composite can also be written by hand.
 */
static void
spec_from_fields(NullableDatum *fields, MeanSpec *spec)
{
	cc_mean_params p;
	char	   *algorithm;
	uint64_t	epsilon_units;

	memset(&p, 0, sizeof(p));
	memset(spec, 0, sizeof(*spec));
	field_null(fields, MM_ALGORITHM, false, "algorithm");
	algorithm = TextDatumGetCString(fields[MM_ALGORITHM].value);
	if (strcmp(algorithm, "withhold") == 0)
		p.kind = CC_MEAN_WITHHOLD;
	else if (strcmp(algorithm, "naive") == 0)
		p.kind = CC_MEAN_NAIVE;
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown running_mean algorithm \"%s\"", algorithm),
				 errhint("Use withhold (George, Ramesh, Singh and Tyagi's Algorithm 6) or naive (their Algorithm 2).")));
	field_null(fields, MM_LO, false, "lo");
	field_null(fields, MM_HI, false, "hi");
	spec->lo = DatumGetFloat8(fields[MM_LO].value);
	spec->hi = DatumGetFloat8(fields[MM_HI].value);
	if (!(isfinite(spec->lo) && isfinite(spec->hi) && spec->lo < spec->hi))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the range [lo, hi] must be finite with lo < hi")));
	/* a sample's place in the range, (x - lo) / (hi - lo), needs hi - lo finite */
	if (!isfinite(spec->hi - spec->lo))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the range [lo, hi] must be at most %g wide", DBL_MAX),
				 errdetail("A sample of a wider range could not be placed in it in double precision.")));
	field_null(fields, MM_EPSILON, false, "epsilon");
	if (cc_epsilon_units(DatumGetFloat8(fields[MM_EPSILON].value), &epsilon_units) != CC_OK)
		report_mean_status(CC_MEAN_BAD_EPSILON, &p);
	p.epsilon_units = epsilon_units;
	field_null(fields, MM_HORIZON, false, "horizon");
	p.horizon = DatumGetInt64(fields[MM_HORIZON].value);
	field_null(fields, MM_PER_UNIT, false, "per_unit");
	p.per_user = DatumGetInt64(fields[MM_PER_UNIT].value);
	p.users = field_null(fields, MM_UNITS, true, "units") ? p.horizon :
		DatumGetInt64(fields[MM_UNITS].value);
	p.resolution = field_null(fields, MM_RESOLUTION, true, "resolution") ? DEFAULT_RESOLUTION :
		DatumGetInt64(fields[MM_RESOLUTION].value);
	p.beta = field_null(fields, MM_BETA, true, "beta") ? DEFAULT_BETA :
		DatumGetFloat8(fields[MM_BETA].value);
	if (!field_null(fields, MM_LEDGER, true, "ledger"))
		spec->ledger = TextDatumGetCString(fields[MM_LEDGER].value);
	report_mean_status(cc_mean_plan_make(&p, &spec->plan), &p);
}

/* The fields of a contcount.mean_mechanism value. */
static void
fields_from_composite(Datum composite, NullableDatum *fields)
{
	HeapTupleHeader header = DatumGetHeapTupleHeader(composite);
	TupleDesc	tupdesc = lookup_rowtype_tupdesc(HeapTupleHeaderGetTypeId(header),
												 HeapTupleHeaderGetTypMod(header));
	HeapTupleData tuple;
	Datum		values[MM_NATTS];
	bool		nulls[MM_NATTS];

	if (tupdesc->natts != MM_NATTS)
		elog(ERROR, "running_mean parameters must be a contcount.mean_mechanism");
	tuple.t_len = HeapTupleHeaderGetDatumLength(header);
	ItemPointerSetInvalid(&tuple.t_self);
	tuple.t_tableOid = InvalidOid;
	tuple.t_data = header;
	heap_deform_tuple(&tuple, tupdesc, values, nulls);
	ReleaseTupleDesc(tupdesc);
	for (int i = 0; i < MM_NATTS; i++)
	{
		fields[i].value = values[i];
		fields[i].isnull = nulls[i];
	}
}

PG_FUNCTION_INFO_V1(contcount_mean_mechanism);
Datum
contcount_mean_mechanism(PG_FUNCTION_ARGS)
{
	/* (lo, hi, epsilon, horizon, per_unit, units, algorithm, resolution, beta, ledger) */
	static const int order[MM_NATTS] = {
		[MM_LO] = 0,[MM_HI] = 1,[MM_EPSILON] = 2,[MM_HORIZON] = 3,[MM_PER_UNIT] = 4,
		[MM_UNITS] = 5,[MM_ALGORITHM] = 6,[MM_RESOLUTION] = 7,[MM_BETA] = 8,[MM_LEDGER] = 9
	};
	NullableDatum fields[MM_NATTS];
	Datum		values[MM_NATTS];
	bool		nulls[MM_NATTS];
	MeanSpec	spec;
	TupleDesc	tupdesc;

	for (int i = 0; i < MM_NATTS; i++)
		fields[i] = fcinfo->args[order[i]];
	spec_from_fields(fields, &spec);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be contcount.mean_mechanism");
	for (int i = 0; i < MM_NATTS; i++)
	{
		values[i] = fields[i].value;
		nulls[i] = fields[i].isnull;
	}
	/* as used: units and the others filled in, epsilon as charged */
	values[MM_EPSILON] = Float8GetDatum((double) spec.plan.params.epsilon_units / 1e9);
	values[MM_UNITS] = Int64GetDatum(spec.plan.params.users);
	values[MM_RESOLUTION] = Int64GetDatum(spec.plan.params.resolution);
	values[MM_BETA] = Float8GetDatum(spec.plan.params.beta);
	nulls[MM_UNITS] = nulls[MM_RESOLUTION] = nulls[MM_BETA] = false;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}

void
mean_spec_from_composite(Datum mechanism, MeanSpec *spec)
{
	NullableDatum fields[MM_NATTS];

	fields_from_composite(mechanism, fields);
	spec_from_fields(fields, spec);
}

MeanSite *
mean_site_make(const MeanSpec *spec, Oid unit_type, Oid collation, MemoryContext context)
{
	MemoryContext old = MemoryContextSwitchTo(context);
	MeanSite   *site = palloc0(sizeof(MeanSite));
	TypeCacheEntry *type;

	site->spec = *spec;
	site->size = cc_mean_size(&spec->plan);
	site->initial = palloc(site->size);
	cc_mean_init(site->initial, &spec->plan);
	site->record_bytes = cc_mean_user_bytes(&spec->plan);

	site->unit_type = unit_type;
	get_typlenbyval(unit_type, &site->unit_len, &site->unit_byval);
	type = lookup_type_cache(unit_type, TYPECACHE_HASH_PROC_FINFO | TYPECACHE_EQ_OPR_FINFO);
	if (!OidIsValid(type->hash_proc) || !OidIsValid(type->eq_opr))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("running_mean needs a unit type with hashing and equality, not %s",
						format_type_be(unit_type))));
	fmgr_info_copy(&site->hash, &type->hash_proc_finfo, context);
	fmgr_info_copy(&site->equal, &type->eq_opr_finfo, context);
	site->collation = collation;
	MemoryContextSwitchTo(old);
	return site;
}

const MeanSpec *
mean_site_spec(const MeanSite *site)
{
	return &site->spec;
}

/* Check the call site and read its parameters, once per query. */
static MeanSite *
mean_site(FunctionCallInfo fcinfo, int context)
{
	MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	NullableDatum fields[MM_NATTS];
	MeanSpec	spec;
	Oid			unit_type;

	call_site_check(fcinfo, FIRST_PARAMETER - 1, "running_mean");
	if (context == AGG_CONTEXT_WINDOW)
		call_site_require_growing_frame(fcinfo, "running_mean");
	if (PG_NARGS() == FIRST_PARAMETER + 1)
	{
		/* running_mean(x, unit, mechanism) */
		if (PG_ARGISNULL(FIRST_PARAMETER))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("mechanism must not be null")));
		fields_from_composite(PG_GETARG_DATUM(FIRST_PARAMETER), fields);
	}
	else
	{
		/* running_mean(x, unit, lo, hi, epsilon, horizon, per_unit) */
		static const int order[] = {MM_LO, MM_HI, MM_EPSILON, MM_HORIZON, MM_PER_UNIT};

		for (int i = 0; i < MM_NATTS; i++)
			fields[i] = (NullableDatum)
			{
				.isnull = true
			};
		fields[MM_ALGORITHM] = (NullableDatum)
		{
			.value = CStringGetTextDatum("withhold")
		};
		for (int i = 0; i < (int) lengthof(order); i++)
			fields[order[i]] = fcinfo->args[FIRST_PARAMETER + i];
	}
	spec_from_fields(fields, &spec);
	unit_type = get_fn_expr_argtype(fcinfo->flinfo, ARG_UNIT);
	if (!OidIsValid(unit_type))
		elog(ERROR, "running_mean: could not determine the unit's type");
	MemoryContextSwitchTo(old);
	return mean_site_make(&spec, unit_type, PG_GET_COLLATION(), fcinfo->flinfo->fn_mcxt);
}

MeanStream *
mean_stream_start(const MeanSite *site, MemoryContext context)
{
	MeanStream *ms = MemoryContextAllocZero(context, sizeof(MeanStream));

	ms->site = site;
	ms->context = context;
	ms->state = MemoryContextAlloc(context, site->size);
	memcpy(ms->state, site->initial, site->size);
	ms->units = units_create(context, 64, (void *) site);
	return ms;
}

/* The slot of a unit, and room for its record if it is new. */
static int64
unit_slot(MeanStream *ms, Datum unit)
{
	const MeanSite *site = ms->site;
	bool		found;
	UnitEntry  *entry = units_insert(ms->units, unit, &found);
	int64		slot;

	if (found)
		return entry->slot;
	/* an error aborts the stream with its query: nothing to undo */
	slot = cc_mean_users(ms->state);
	if (slot == site->spec.plan.params.users)
		report_mean_status(CC_MEAN_TOO_MANY_USERS, &site->spec.plan.params);
	if (!site->unit_byval)
		entry->unit = datumCopy(unit, false, site->unit_len);
	entry->slot = slot;
	if (slot == ms->capacity)
	{
		int64		capacity = Max(16, 2 * ms->capacity);
		Size		bytes;

		capacity = Min(capacity, site->spec.plan.params.users);
		bytes = (Size) capacity * site->record_bytes;
		ms->records = ms->records == NULL ? MemoryContextAllocHuge(ms->context, bytes) :
			repalloc_huge(ms->records, bytes);
		ms->capacity = capacity;
	}
	return slot;
}

void
mean_stream_push(MeanStream *ms, double x, Datum unit)
{
	const MeanSite *site = ms->site;
	MemoryContext old;
	int64_t		q;
	int64		slot;

	if (!cc_mean_quantize(x, site->spec.lo, site->spec.hi, site->spec.plan.params.resolution, &q))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("running_mean samples must not be NaN")));
	old = MemoryContextSwitchTo(ms->context);
	slot = unit_slot(ms, unit);
	MemoryContextSwitchTo(old);
	report_mean_status(cc_mean_push(ms->state, ms->records, slot, q, strong_rng()),
					   &site->spec.plan.params);
}

void
mean_stream_release(const MeanStream *ms, Datum *values, bool *nulls)
{
	const MeanSpec *spec = &ms->site->spec;
	cc_mean_release release;
	double		width = spec->hi - spec->lo;

	cc_mean_read(ms->state, &release);
	values[0] = Int64GetDatum(release.t);
	/* the mean of samples in [lo, hi] is in [lo, hi]: clamping is free */
	values[1] = Float8GetDatum(cc_clamp(spec->lo + width * release.estimate, spec->lo, spec->hi));
	values[2] = Int64GetDatum(release.included);
	values[3] = Float8GetDatum(width * release.stddev);
	values[4] = Float8GetDatum(width * release.bound);
	nulls[0] = nulls[2] = false;
	nulls[1] = nulls[3] = nulls[4] = !release.has_estimate;
}

PG_FUNCTION_INFO_V1(running_mean_step);
Datum
running_mean_step(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	int			context = AggCheckCallContext(fcinfo, &aggcxt);
	MeanSite   *site = fcinfo->flinfo->fn_extra;
	MeanStream *ms;

	if (site == NULL)
		fcinfo->flinfo->fn_extra = site = mean_site(fcinfo, context);
	ms = PG_ARGISNULL(0) ? mean_stream_start(site, aggcxt) : (MeanStream *) PG_GETARG_POINTER(0);
	/* a row without a sample is no sample: it gets the release so far */
	if (PG_ARGISNULL(ARG_X))
		PG_RETURN_POINTER(ms);
	if (PG_ARGISNULL(ARG_UNIT))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the unit of a running_mean sample must not be null")));
	mean_stream_push(ms, PG_GETARG_FLOAT8(ARG_X), PG_GETARG_DATUM(ARG_UNIT));
	PG_RETURN_POINTER(ms);
}

PG_FUNCTION_INFO_V1(running_mean_final);
Datum
running_mean_final(PG_FUNCTION_ARGS)
{
	MeanFinalSite *site = fcinfo->flinfo->fn_extra;
	MeanStream *ms;
	const MeanSpec *spec;
	Datum		values[MEAN_RELEASE_NATTS];
	bool		nulls[MEAN_RELEASE_NATTS];

	if (site == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
		TupleDesc	tupdesc;

		call_site_check(fcinfo, -1, "running_mean");
		site = palloc0(sizeof(MeanFinalSite));
		if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE ||
			tupdesc->natts != MEAN_RELEASE_NATTS)
			elog(ERROR, "return type must be contcount.mean_release");
		site->tupdesc = BlessTupleDesc(CreateTupleDescCopy(tupdesc));
		fcinfo->flinfo->fn_extra = site;
		MemoryContextSwitchTo(old);
	}
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	ms = (MeanStream *) PG_GETARG_POINTER(0);
	spec = &ms->site->spec;
	if (!ms->paid)
	{
		if (!site->charging)
		{
			MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);

			ledger_site_init(&site->charge, spec->ledger,
							 cc_pure_cost(spec->plan.params.epsilon_units), "running_mean");
			MemoryContextSwitchTo(old);
			site->charging = true;
		}
		ledger_pay_release(&site->charge, (PlanState *) fcinfo->context);
		ms->paid = true;
	}
	mean_stream_release(ms, values, nulls);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(site->tupdesc, values, nulls)));
}
