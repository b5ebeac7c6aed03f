# Per-block budgets of protected sources (issue 15), through WAL like any
# ledger charge:
# - every block's creation and charge reaches a streaming standby, which
#   shows the same blocks and the same audit and refuses releases; a
#   release over thousands of blocks is one record; redo is checked by
#   wal_consistency_checking;
# - kill -9 of the primary (after a checkpoint, so that redo starts
#   mid-way) loses no block's spending, nor does a clean restart;
# - a release that would overspend one block is refused, and no block of it
#   pays, before and after the crash;
# - the promoted standby has every block's spending and goes on charging
#   exactly what each block has left.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ContcountTest;

my $blocks_sql =
  'SELECT source, block_start, block_end, budget, spent, remaining, accounting, retired '
  . 'FROM contcount.blocks ORDER BY source, block_start';
my $audit_sql = 'SELECT * FROM contcount.block_charges ORDER BY at, source';

# A query's output, or its error with its SQLSTATE.
sub query
{
	my ($node, $sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql");
	return $ret == 0 ? $out : "failed: $err";
}

# The running counts of epsilon over steps days from day start (2026-01-0N):
# the counts, or the error.
sub release
{
	my ($node, $epsilon, $start, $steps) = @_;
	return query($node,
		"SELECT string_agg(noisy_count::text, ' ' ORDER BY t) FROM contcount.source_running_counts("
		  . "'visits', $epsilon, '1 day', '2026-01-0$start 00:00+00', $steps, ledger => 'team', mechanism => 'binary')");
}

# What the blocks of days from..to of January 2026 spent, as "day:spent ...".
sub spent
{
	my ($node, $from, $to) = @_;
	return query($node,
		"SELECT string_agg(extract(day FROM block_start AT TIME ZONE 'UTC') || ':' || spent, ' ' "
		  . "ORDER BY block_start) FROM contcount.blocks WHERE source = 'visits' "
		  . "AND block_start >= '2026-01-0$from 00:00+00' AND block_start < '2026-01-0$to 00:00+00'");
}

sub same_views
{
	my ($node, $other, $what) = @_;
	is(query($other, $blocks_sql), query($node, $blocks_sql), "$what: contcount.blocks equal");
	is(query($other, $audit_sql), query($node, $audit_sql), "$what: contcount.block_charges equal");
	return;
}

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf',
	"shared_preload_libraries = 'contcount'\nwal_consistency_checking = 'contcount'");
$primary->start;
# 10 persons on 2 January, 20 on 3 January; blocks of a day, 3500 of
# epsilon each (releases of 1000 and more: noise 0 but with probability
# 2e^-1000), kept ten years
$primary->safe_psql('postgres', q{
    CREATE EXTENSION contcount;
    CREATE TABLE visits (user_id int, at timestamptz);
    INSERT INTO visits SELECT u, '2026-01-02 12:00+00' FROM generate_series(1, 10) u;
    INSERT INTO visits SELECT u, '2026-01-03 12:00+00' FROM generate_series(11, 30) u;
    SELECT contcount.create_ledger('data', 1);
    SELECT contcount.create_ledger('team', 1000000);
    SELECT contcount.protect_table('visits', 'visits', 'user_id', 'at', 'data');
    SELECT contcount.source_blocks('visits', '1 day', 3500, '3650 days');
});
is(release($primary, 1000, 1, 3), '0 10 30', 'primary: a release over three days reads them');
is(spent($primary, 1, 5), '1:1000 2:1000 3:1000', 'and charges their three blocks');

$primary->backup('streaming');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'streaming', has_streaming => 1);
$standby->start;

# after the base backup: a release over every retained block (thousands:
# one record), and a checkpoint that redo after a crash starts from
is(query($primary, "SELECT noisy_count FROM contcount.source_counts('visits', 1000, ledger => 'team')"),
	'30', 'primary: a release over all retained rows');
my $all_blocks = query($primary, "SELECT count(*) FROM contcount.blocks WHERE source = 'visits'");
cmp_ok($all_blocks, '>=', 3650, 'it charged every block of the retention');
is(query($primary, "SELECT count(*) FROM contcount.block_charges WHERE blocks >= 3650"),
	'1', 'in one charge');
$primary->safe_psql('postgres', 'CHECKPOINT');
is(release($primary, 1000, 3, 2), '20 20', 'primary: a release over days 3 and 4');
is(spent($primary, 1, 6), '1:2000 2:2000 3:3000 4:2000 5:1000',
	'blocks spent what each release read');

$primary->wait_for_catchup($standby);
same_views($primary, $standby, 'standby');
like(release($standby, 1000, 1, 1), qr/ERROR:  25006:/, 'standby: releases refused (25006)');

# day 3 has 500 left: a release of 800 over days 1 to 4 is refused at
# day 3, and days 1 and 2, which could pay, do not
like(release($primary, 800, 1, 4),
	qr/ERROR:  ZB001: privacy budget of block \[2026-01-03 .*\) of ledger "data" would be overspent\n.*DETAIL:  Requested epsilon 800, remaining 500; no block of the release was charged\./,
	'primary: one block overspent refuses the release (ZB001)');
is(spent($primary, 1, 6), '1:2000 2:2000 3:3000 4:2000 5:1000', 'and no block paid');

ContcountTest::kill9_postmaster_and_start($primary);
is(spent($primary, 1, 6), '1:2000 2:2000 3:3000 4:2000 5:1000', 'after kill -9: every block the same');
is(query($primary, "SELECT count(*) FROM contcount.blocks WHERE source = 'visits'"),
	$all_blocks, 'after kill -9: as many blocks');
like(release($primary, 800, 1, 4), qr/ERROR:  ZB001:/, 'after kill -9: still refused');
$primary->restart;
is(spent($primary, 1, 6), '1:2000 2:2000 3:3000 4:2000 5:1000', 'after a restart: the same');
$primary->wait_for_catchup($standby);
same_views($primary, $standby, 'standby after the primary\'s crash');

$primary->stop('immediate');
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'not promoted';
is(spent($standby, 1, 6), '1:2000 2:2000 3:3000 4:2000 5:1000', 'promoted: every block\'s spending');
# day 3 has 500 left: 500 fits, then nothing does
is(release($standby, 500, 3, 1), '20', 'promoted: a release of what day 3 has left');
like(release($standby, '0.000001', 3, 1), qr/ERROR:  ZB001:.*\n.*remaining 0;/,
	'promoted: then day 3 is spent (ZB001)');
is(spent($standby, 1, 6), '1:2000 2:2000 3:3500 4:2000 5:1000', 'promoted: charged exactly');
# the block budget is read as committed now: raised, it binds
$standby->safe_psql('postgres', "SELECT contcount.source_blocks('visits', '1 day', 20000, '3650 days')");
is(release($standby, 1000, 3, 1), '20', 'promoted: a raised block budget binds from its commit');

# export and import carry the blocks to a new cluster, which then refuses
# what the old one would
my $export = $standby->safe_psql('postgres', 'SELECT contcount.export_ledgers()');
my $fresh = PostgreSQL::Test::Cluster->new('fresh');
$fresh->init;
$fresh->append_conf('postgresql.conf', "shared_preload_libraries = 'contcount'");
$fresh->start;
$fresh->safe_psql('postgres', q{
    CREATE EXTENSION contcount;
    CREATE TABLE visits (user_id int, at timestamptz);
    INSERT INTO visits SELECT u, '2026-01-03 12:00+00' FROM generate_series(11, 30) u;
});
$fresh->safe_psql('postgres', "SELECT count(*) FROM contcount.import_ledgers(\$x\$$export\$x\$)");
$fresh->safe_psql('postgres', q{
    SELECT contcount.protect_table('visits', 'visits', 'user_id', 'at', 'data');
    SELECT contcount.source_blocks('visits', '1 day', 3500, '3650 days');
});
is(query($fresh, $blocks_sql =~ s/budget, spent, remaining, //r),
	query($standby, $blocks_sql =~ s/budget, spent, remaining, //r),
	'imported: the same blocks');
is(spent($fresh, 1, 6), '1:2000 2:2000 3:4500 4:2000 5:1000', 'imported: what each spent');
like(release($fresh, 1000, 3, 1), qr/ERROR:  ZB001:.*\n.*remaining 0;/,
	'imported: day 3, spent beyond the budget declared here, is refused (ZB001)');

done_testing();
