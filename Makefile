# contcount: PGXS build, regression tests, and the core's unit tests.

EXTENSION = contcount
MODULE_big = contcount
DATA = $(sort $(wildcard contcount--*.sql))
PGFILEDESC = "contcount - differentially private running counts"

# The pure C core: samplers and mechanisms, no PostgreSQL headers.
CORE_SRCS = $(sort $(wildcard src/core/*.c))
# The PostgreSQL glue: one folder per subsystem, one file per concern, and
# the wiring above them all (_PG_init, the shared-memory requests).
GLUE_SRCS = $(addprefix src/,contcount.c shmem.c) \
	$(addprefix src/common/,settings.c random.c report.c owner_spi.c seal.c args.c) \
	$(addprefix src/releases/,spec.c release.c call_site.c running_count.c running_counts.c \
		noisy_count.c running_mean.c stream_privacy.c window_counts.c preview.c) \
	$(addprefix src/ledger/,ledger.c ledger_store.c ledger_legacy.c ledger_export.c ledger_forget.c \
		ledger_curve.c ledger_curve_sql.c ledger_views.c store_page.c store_wal.c store_stale.c store_legacy.c \
		store_room.c store_charge.c store_audit.c store_blocks.c store_import.c statement_cap.c ledger_preview.c) \
	$(addprefix src/counters/,counter.c counter_attach.c counter_shmem.c counter_trigger.c counter_worker.c \
		statement_rows.c alerts.c alert_args.c sparse_alerts.c counter_keys.c \
		shard_counters.c) \
	$(addprefix src/sources/,source.c bounding.c source_counter.c source_mean.c source_blocks.c source_blocks_sql.c \
		counter_delta.c unit_log.c feed_cache.c source_preview.c shards.c shard_counts.c \
		shard_feed.c)
OBJS = $(CORE_SRCS:.c=.o) $(GLUE_SRCS:.c=.o)

REGRESS = setup mechanism running_count running_counts running_mean noisy_count ledger sources attack_sources source_mean attack_releases counters source_counters attack_search_path statistics ledger_zcdp gaussian_releases attack_gaussian privacy_curves stream_privacy window_counts source_blocks block_doors counter_units fair_shares lockdown refusal_messages role_settings sealed_releases bad_input comments catalog_checks own_spending statement_cap previews source_previews outputs counter_attach review_attacks distinct_persons shard_counts alerts sparse_alerts kary statement_cap_processes window_monotone blt_scaled window_kary unit_log counter_keys key_alerts sparse_alerts_sources counter_persons persons_gaussian window_blocks shard_feed write_path
ISOLATION = ledger_race ledger_fresh counters counter_race sources source_counter block_counter counter_locks counter_attach_locks unit_log feed_cache counter_keys counter_persons key_drop
ISOLATION_OPTS = --inputdir=test --load-extension=contcount
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)

# PostgreSQL's headers are not -Wextra clean; ours must be.
PG_CPPFLAGS = -I$(srcdir)/src \
	-isystem $(shell $(PG_CONFIG) --includedir-server)
PG_CFLAGS = -Wall -Wextra
# Releases over sharded sources ask the shards over libpq (src/sources/shards.c).
PG_CPPFLAGS += -I$(shell $(PG_CONFIG) --includedir)
SHLIB_LINK_INTERNAL = -L$(shell $(PG_CONFIG) --libdir) -lpq
# The unit log digests each row's unit with OpenSSL (src/sources/unit_log.c).
SHLIB_LINK_INTERNAL += -lcrypto
# Calls inside the library need not go through the PLT: nothing interposes
# on them, and the samplers' small functions can then be inlined.
PG_CFLAGS += -fno-semantic-interposition
SHLIB_LINK = -Wl,-Bsymbolic
include $(PGXS)

# PGXS tracks no header dependencies: rebuild everything when a header changes.
$(OBJS): $(wildcard $(srcdir)/src/*.h $(srcdir)/src/*/*.h)

# Unit tests of the core, under AddressSanitizer and UBSan.
UNIT_SRCS = $(CORE_SRCS) $(wildcard test/unit/*.c)
UNIT_BIN = test/unit/unit

$(UNIT_BIN): $(UNIT_SRCS) $(wildcard src/core/*.h test/unit/*.h)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -fsanitize=address,undefined \
		-fno-sanitize-recover=all -Isrc/core -Itest/unit $(UNIT_SRCS) -lm -o $@

unit: $(UNIT_BIN)
	./$(UNIT_BIN)

.PHONY: unit
EXTRA_CLEAN = $(UNIT_BIN)

# docs/accuracy-table.md: every kind's mean and worst variance at three
# horizons beside the published frontier (report/accuracy_table.c), and its
# tables copied into docs/mechanisms-and-accuracy.md between its markers.
ACCURACY_BIN = report/accuracy_table

accuracy-table: $(CORE_SRCS) report/accuracy_table.c $(wildcard src/core/*.h)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Isrc/core report/accuracy_table.c $(CORE_SRCS) \
		-lm -o $(ACCURACY_BIN)
	./$(ACCURACY_BIN) >docs/accuracy-table.md.new
	mv docs/accuracy-table.md.new docs/accuracy-table.md
	awk -f report/accuracy_splice.awk docs/accuracy-table.md docs/mechanisms-and-accuracy.md \
		>docs/mechanisms-and-accuracy.md.new
	mv docs/mechanisms-and-accuracy.md.new docs/mechanisms-and-accuracy.md

.PHONY: accuracy-table

# The test names, for test/run.
print-regress:
	@echo $(REGRESS)
print-isolation:
	@echo $(ISOLATION)
.PHONY: print-regress print-isolation

# `make installcheck` runs against a server that preloads contcount, in the
# database its counters live in (contcount.database, which the server is
# asked for: postgres unless set): in any other database, such as the one
# pg_regress would create, counters refuse.  The suite uses that database
# as it is, so run it on a cluster made for it: it creates roles and locks
# the statistics down.
CONTCOUNT_DATABASE = $(shell $(bindir)/psql -X -A -t -d postgres -c 'SHOW contcount.database')
installcheck: CONTRIB_TESTDB = $(or $(CONTCOUNT_DATABASE),$(error cannot read contcount.database from the server: is it up, and does it preload contcount?))
installcheck: ISOLATION_TESTDB = $(CONTRIB_TESTDB)
installcheck: REGRESS_OPTS += --use-existing
installcheck: ISOLATION_OPTS += --use-existing
