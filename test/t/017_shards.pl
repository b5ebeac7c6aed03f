# Releases over sharded sources: a coordinator whose source table is
# hash-partitioned by the unit column, two partitions postgres_fdw foreign
# tables on two shards that run contcount (their server lists it in
# `extensions`), one partition local:
# - a release (counts, running counts, a filter) equals the same release
#   over the same rows in one table of one server, exactly (epsilon 1000:
#   noise 0 but with probability below 1e-30 a count), and the shards were
#   asked (contcount.shard_bounded_counts ran on each);
# - only the coordinator's ledgers are charged; the shards have none;
# - on a shard, a role that is not the coordinator's connection user (no
#   EXECUTE, or no SELECT on the table) is refused (42501);
# - over a source with per-block budgets, the shards read the window of
#   blocks the release paid for: the same release as on one server;
# - a table partitioned by something else than the unit is bounded at the
#   coordinator, its rows read through postgres_fdw: the same release, and
#   the shards' function not called;
# - the shard runs its query sealed: its connection user's trace_sort logs
#   nothing;
# - a shard that is down fails the release (08001), after its charge.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ContcountTest;

# A query's output, or its error with its SQLSTATE.
sub query
{
	my ($node, $sql, $user) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql",
		extra_params => [ '-U', $user // 'analyst' ]);
	return $ret == 0 ? $out : "failed: $err";
}

my $fn = 'contcount.shard_bounded_counts(text, text, text, text, text, text[], integer, '
  . 'integer, timestamptz, interval, bigint, jsonb, timestamptz, timestamptz, boolean)';
my $table = 'CREATE TABLE events (user_id int, at timestamptz, device text)';

my @shards;
for my $name ('shard1', 'shard2')
{
	my $shard = start_contcount_node($name, "track_functions = 'all'");
	$shard->safe_psql('postgres', qq{
		CREATE EXTENSION contcount;
		CREATE ROLE coord LOGIN;
		CREATE ROLE analyst LOGIN;
		CREATE ROLE reader LOGIN;
		$table;
		CREATE TABLE by_device (user_id int, at timestamptz, device text);
		CREATE TABLE visits (user_id int, at timestamptz, device text);
		GRANT SELECT ON events, by_device, visits TO coord, analyst;
		-- the coordinator loads the test rows through its partitions
		GRANT INSERT ON events, by_device, visits TO coord;
		GRANT EXECUTE ON FUNCTION $fn TO coord, reader;
	});
	push @shards, $shard;
}

my $coord = start_contcount_node('coordinator', "");
my $servers = foreign_partitions_sql(\@shards, 3);
# 300 persons, each with 1 to 5 rows over 3 devices and 8 days (a person's
# rows: 5 rows, 3 devices at most; the bound: 3 rows in 2 groups)
$coord->safe_psql('postgres', qq{
	CREATE EXTENSION postgres_fdw;
	CREATE EXTENSION contcount;
	CREATE TABLE events (user_id int, at timestamptz, device text) PARTITION BY HASH (user_id);
	$servers
	CREATE TABLE events_2 PARTITION OF events FOR VALUES WITH (MODULUS 3, REMAINDER 2);
	INSERT INTO events
	SELECT u, '2026-01-01 00:00+00'::timestamptz + ((u * 7 + r * 13) % 192) * interval '1 hour',
	       (ARRAY['phone', 'tv', 'web'])[1 + (u + r) % 3]
	FROM generate_series(1, 300) u, generate_series(1, 1 + u % 5) r;
	INSERT INTO events VALUES (NULL, '2026-01-02', 'tv');
	CREATE TABLE one_server AS SELECT * FROM events;
	SELECT contcount.create_ledger('data', 1000000);
	SELECT contcount.create_ledger('team', 1000000);
	SELECT contcount.protect_table('sharded', 'events', 'user_id', 'at', 'data', 3, 2);
	SELECT contcount.protect_table('single', 'one_server', 'user_id', 'at', 'data', 3, 2);
	SELECT contcount.source_dimension(s, 'device', ARRAY['phone', 'tv', 'web', 'car'])
	FROM unnest(ARRAY['sharded', 'single']) s;
	CREATE ROLE analyst LOGIN;
	ALTER ROLE analyst SET contcount.ledger = 'team';
	SELECT contcount.grant_source(s, 'analyst') FROM unnest(ARRAY['sharded', 'single']) s;
});
is($shards[0]->safe_psql('postgres', 'SELECT count(*) > 50 FROM events'), 't', 'shard 1 holds rows');
is($shards[1]->safe_psql('postgres', 'SELECT count(*) > 50 FROM events'), 't', 'shard 2 holds rows');

my %release = (
	'counts by device' =>
	  "SELECT string_agg(key || ':' || noisy_count, ' ' ORDER BY key) FROM contcount.source_counts('%s', 1000, 'device')",
	'one count' => "SELECT noisy_count FROM contcount.source_counts('%s', 1000)",
	'filtered' =>
	  "SELECT string_agg(key || ':' || noisy_count, ' ' ORDER BY key) FROM contcount.source_counts('%s', 1000, 'device', filter => '{\"device\": [\"tv\", \"web\"]}')",
	'running counts' =>
	  "SELECT string_agg(key || ':' || t || ':' || noisy_count, ' ' ORDER BY key, t) FROM contcount.source_running_counts('%s', 1000, '1 day', '2026-01-01 00:00+00', 8, 'binary', 'device')",
	'running persons' =>
	  "SELECT string_agg(key || ':' || t || ':' || noisy_count, ' ' ORDER BY key, t) FROM contcount.source_running_counts('%s', 1000, '1 day', '2026-01-01 00:00+00', 8, 'binary', 'device', count => 'persons')",
);
my %sharded;
my $spent = "SELECT spent FROM contcount.ledgers WHERE name = 'data'";
my $before = query($coord, $spent, 'postgres');
my $raw = query($coord, "SELECT count(*) FROM one_server WHERE user_id IS NOT NULL", 'postgres');
for my $what (sort keys %release)
{
	my $sharded = $sharded{$what} = query($coord, sprintf($release{$what}, 'sharded'));
	my $single = query($coord, sprintf($release{$what}, 'single'));
	like($sharded, qr/^\S+/, "$what: the sharded release answers");
	is($sharded, $single, "$what: the sharded release equals the one-server release");
}
cmp_ok(query($coord, sprintf($release{'one count'}, 'single')), '<', $raw,
	'the bound keeps fewer rows than the table has');
isnt($sharded{'running persons'}, $sharded{'running counts'},
	'the shards count persons when asked to, not rows');
# ten releases and the one just above
is(query($coord, $spent, 'postgres'), $before + 11 * 1000,
	"the coordinator's data ledger paid each release once");

my $calls = 'SELECT coalesce(sum(calls), 0) FROM pg_stat_user_functions '
  . "WHERE funcname = 'shard_bounded_counts'";
for my $i (0, 1)
{
	ok($shards[$i]->poll_query_until('postgres', "SELECT ($calls) >= 4"),
		'shard ' . ($i + 1) . ' bounded its rows for each release');
	is($shards[$i]->safe_psql('postgres', 'SELECT count(*) FROM contcount.ledgers'),
		'0', 'shard ' . ($i + 1) . ' has no ledger: nothing was charged there');
}

# the shard's function, as its coordinator's user and as others
my $ask = "SELECT contcount.shard_bounded_counts('public', 'events', 'user_id', 'at', "
  . "NULL, NULL, 3, 2, NULL, NULL, 1, NULL, NULL, NULL)";
like(query($shards[0], $ask, 'coord'), qr/^\{\d+\}$/, "shard: the coordinator's user gets exact counts");
like(query($shards[0], $ask, 'analyst'), qr/ERROR:  42501: permission denied for function shard_bounded_counts/,
	'shard: a role with SELECT on the table but no EXECUTE is refused (42501)');
like(query($shards[0], $ask, 'reader'), qr/ERROR:  42501: permission denied for the bounded counts/,
	'shard: a role with EXECUTE but no SELECT on the table is refused (42501)');
$shards[0]->safe_psql('postgres',
	'ALTER TABLE events ENABLE ROW LEVEL SECURITY; GRANT SELECT ON events TO reader');
like(query($shards[0], $ask, 'reader'), qr/ERROR:  42501: permission denied for the bounded counts/,
	'shard: a role whose rows row level security would filter is refused (42501)');
$shards[0]->safe_psql('postgres', 'ALTER TABLE events DISABLE ROW LEVEL SECURITY');

# a table partitioned by device: a person's rows on both shards
$coord->safe_psql('postgres', qq{
	CREATE TABLE by_device (user_id int, at timestamptz, device text) PARTITION BY LIST (device);
	CREATE FOREIGN TABLE by_device_0 PARTITION OF by_device FOR VALUES IN ('phone')
	  SERVER shard1 OPTIONS (table_name 'by_device');
	CREATE FOREIGN TABLE by_device_1 PARTITION OF by_device FOR VALUES IN ('tv', 'web')
	  SERVER shard2 OPTIONS (table_name 'by_device');
	INSERT INTO by_device SELECT * FROM one_server WHERE device IS NOT NULL;
	SELECT contcount.protect_table('by_device', 'by_device', 'user_id', 'at', 'data', 3, 2);
	SELECT contcount.source_dimension('by_device', 'device', ARRAY['phone', 'tv', 'web', 'car']);
	SELECT contcount.grant_source('by_device', 'analyst');
});
my $before_calls = $shards[1]->safe_psql('postgres', $calls);
for my $what ('counts by device', 'running counts')
{
	is(query($coord, sprintf($release{$what}, 'by_device')),
		query($coord, sprintf($release{$what}, 'single')),
		"$what: a table not partitioned by the unit is bounded at the coordinator, the same release");
}
$shards[1]->safe_psql('postgres', 'SELECT pg_stat_force_next_flush()');
is($shards[1]->safe_psql('postgres', $calls), $before_calls, 'and the shards were not asked to bound');

# per-block budgets: the shards read only the window of blocks the release paid for
$coord->safe_psql('postgres', qq{
	CREATE TABLE visits (user_id int, at timestamptz, device text) PARTITION BY HASH (user_id);
	CREATE FOREIGN TABLE visits_0 PARTITION OF visits FOR VALUES WITH (MODULUS 2, REMAINDER 0)
	  SERVER shard1 OPTIONS (table_name 'visits');
	CREATE FOREIGN TABLE visits_1 PARTITION OF visits FOR VALUES WITH (MODULUS 2, REMAINDER 1)
	  SERVER shard2 OPTIONS (table_name 'visits');
	INSERT INTO visits SELECT * FROM one_server;
	CREATE TABLE visits_one AS SELECT * FROM one_server;
	SELECT contcount.protect_table(s, t, 'user_id', 'at', 'data', 3, 2)
	FROM (VALUES ('visits', 'visits'), ('visits_one', 'visits_one')) v(s, t);
	SELECT contcount.source_dimension(s, 'device', ARRAY['phone', 'tv', 'web'])
	FROM unnest(ARRAY['visits', 'visits_one']) s;
	SELECT contcount.source_blocks(s, '1 day', 100000, '3650 days')
	FROM unnest(ARRAY['visits', 'visits_one']) s;
	SELECT contcount.grant_source(s, 'analyst') FROM unnest(ARRAY['visits', 'visits_one']) s;
});
my $windowed =
  "SELECT string_agg(key || ':' || t || ':' || noisy_count, ' ' ORDER BY key, t) FROM contcount.source_running_counts('%s', 1000, '1 day', '2026-01-03 00:00+00', 4, 'binary', 'device')";
my $windowed_sharded = query($coord, sprintf($windowed, 'visits'));
like($windowed_sharded, qr/^phone:1:\d+ /, 'blocks: the sharded release answers');
is($windowed_sharded, query($coord, sprintf($windowed, 'visits_one')),
	'blocks: the sharded release over a window of blocks equals the one-server release');

# sealed on the shard too: its connection user's settings do not report on the query
$shards[0]->safe_psql('postgres', 'ALTER ROLE coord SET trace_sort = on');
my $offset = -s $shards[0]->logfile;
query($coord, sprintf($release{'counts by device'}, 'sharded'));
unlike(slurp_file($shards[0]->logfile, $offset), qr/begin (tuple|datum) sort|performsort/,
	"shard: the coordinator's user's trace_sort logs nothing of the bounding");
$offset = -s $shards[0]->logfile;
query($shards[0], 'SELECT count(*) FROM (SELECT * FROM events ORDER BY at, user_id) e', 'coord');
like(slurp_file($shards[0]->logfile, $offset), qr/begin (tuple|datum) sort/,
	'(as it logs a plain query of the same user)');

# a shard down: the release fails after its charge, and names the shard
$shards[1]->stop;
$before = query($coord, $spent, 'postgres');
like(query($coord, sprintf($release{'one count'}, 'sharded')),
	qr/ERROR:  08001: could not connect to shard "shard2"/, 'a shard down fails the release (08001)');
is(query($coord, $spent, 'postgres'), $before + 1000, 'after charging it');

done_testing();
