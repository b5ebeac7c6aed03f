# The ledger's WAL resource manager id (docs/operations.md, "WAL resource
# manager"): 0.6 writes its records under id 197, and replays the records
# 0.5 wrote under 128 (RM_EXPERIMENTAL_ID) while contcount.replay_legacy_wal
# is on.  0.5 cannot be built here, so records under 128 are written by this
# library with the test switch contcount.write_legacy_wal_id, in the format
# 0.5 wrote (the same record, only its id differs).
# (a) records under 128 written after the last checkpoint are replayed by
#     crash recovery: after kill -9, every charge and ledger is there;
# (b) a standby from a base backup taken before them replays them as it
#     catches up: the same ledgers and charges as the primary;
# (c) 197 is registered as "contcount" and 128 as "contcount_legacy";
#     pg_waldump shows the switch's records as custom128 and every other
#     record as custom197, none of them under 128; with the reader off, 128 is
#     free and the switch is refused.
# Without the registration of 128, (a) and (b) fail (the server and the
# standby stop at "resource manager with ID 128 not registered"), and so
# does (c)'s listing.  wal_consistency_checking covers both ids.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ContcountTest;

my $ledgers_sql =
  'SELECT name, budget, spent, remaining, created_at FROM contcount.ledgers ORDER BY name';
my $charges_sql = 'SELECT at, role, ledger, epsilon, function, statement '
  . 'FROM contcount.charges ORDER BY at, ledger, epsilon, statement';

my $primary = PostgreSQL::Test::Cluster->new('wal_id');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'contcount'
restart_after_crash = on
wal_consistency_checking = 'contcount,contcount_legacy'
checkpoint_timeout = '1h'
max_wal_size = '1GB'
});
$primary->start;
$primary->safe_psql('postgres', q{
    CREATE EXTENSION contcount;
    SELECT contcount.create_ledger('old', 10);
    CREATE TABLE events AS SELECT i FROM generate_series(1, 100) i;
    CREATE ROLE analyst LOGIN;
});

# (c) both ids registered, under their names
is( $primary->safe_psql('postgres',
		"SELECT rm_id, rm_name FROM pg_get_wal_resource_managers() WHERE rm_name LIKE 'contcount%' ORDER BY rm_id"),
	"128|contcount_legacy\n197|contcount",
	'(c) the ledger registers id 197 as contcount and 128 as contcount_legacy');

# the switch is a superuser's, and hidden
my ($ret, $out, $err) = $primary->psql('postgres',
	"\\set VERBOSITY verbose\nSET contcount.write_legacy_wal_id = on;",
	extra_params => [ '-U', 'analyst' ]);
like($err, qr/ERROR:\s+42501:/, 'a role that is not a superuser cannot write records under 128');
is($primary->safe_psql('postgres',
		"SELECT count(*) FROM pg_show_all_settings() WHERE name = 'contcount.write_legacy_wal_id'"),
	'0', 'the test switch is not in SHOW ALL');

# the standby's base backup, before any record under 128
$primary->backup('before_legacy');

my $lsn = sub { $primary->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()') };
my $legacy_start = $lsn->();
$primary->safe_psql('postgres', q{
    SET contcount.write_legacy_wal_id = on;
    SELECT contcount.noisy_count(0.5, 'old') FROM events;
    SELECT contcount.noisy_count(0.5, 'old') FROM events;
    SELECT contcount.create_ledger('made_by_legacy', 3);
    SELECT contcount.noisy_count(1, 'made_by_legacy') FROM events;
});
my $legacy_end = $lsn->();
$primary->safe_psql('postgres', q{
    SELECT contcount.noisy_count(0.25, 'old') FROM events;
});
my $new_end = $lsn->();

# (c) what pg_waldump sees, by id
sub waldump_count
{
	my ($rmgr, $start, $end) = @_;
	my ($stdout, $stderr);
	IPC::Run::run [
		'pg_waldump', '--path', $primary->data_dir . '/pg_wal',
		"--rmgr=$rmgr", "--start=$start", "--end=$end"
	  ],
	  '>', \$stdout, '2>', \$stderr;
	note "pg_waldump --rmgr=$rmgr: $stderr" if $stderr;
	return scalar(() = $stdout =~ /^rmgr: $rmgr\s/mg);
}
cmp_ok(waldump_count('custom128', $legacy_start, $legacy_end), '>=', 4,
	'(c) pg_waldump: the switch wrote its four items under custom128');
is(waldump_count('custom197', $legacy_start, $legacy_end), 0,
	'(c) pg_waldump: none of them under custom197');
cmp_ok(waldump_count('custom197', $legacy_end, $new_end), '>=', 1,
	'(c) pg_waldump: the charge after it is under custom197');
is(waldump_count('custom128', $legacy_end, $new_end), 0,
	'(c) pg_waldump: and not under custom128');

my $ledgers = $primary->safe_psql('postgres', $ledgers_sql);
my $charges = $primary->safe_psql('postgres', $charges_sql);
is($primary->safe_psql('postgres', "SELECT spent FROM contcount.ledgers WHERE name = 'old'"),
	'1.25', 'spent 1.25 of old: 1 under 128, 0.25 under 197');

# (b) a standby from the backup taken before them replays them
my $standby = PostgreSQL::Test::Cluster->new('wal_id_standby');
$standby->init_from_backup($primary, 'before_legacy', has_streaming => 1);
$standby->start;
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $ledgers_sql), $ledgers,
	'(b) the standby replayed the records under 128: the same ledgers');
is($standby->safe_psql('postgres', $charges_sql), $charges,
	'(b) and the same charges');

# (a) crash recovery replays them: no checkpoint since they were written
cmp_ok($primary->safe_psql('postgres',
		"SELECT redo_lsn < '$legacy_start' FROM pg_control_checkpoint()"),
	'eq', 't', 'the last checkpoint is older than the records under 128');
kill9_postmaster_and_start($primary);
is($primary->safe_psql('postgres', $ledgers_sql), $ledgers,
	'(a) after kill -9, crash recovery replayed the records under 128: the same ledgers');
is($primary->safe_psql('postgres', $charges_sql), $charges,
	'(a) and the same charges');

# (c) with the reader off, 128 is left to others and the switch is refused
# (contcount_legacy is then no name wal_consistency_checking may use)
$primary->append_conf('postgresql.conf',
	"contcount.replay_legacy_wal = off\nwal_consistency_checking = 'contcount'\n");
$primary->restart;
is( $primary->safe_psql('postgres',
		"SELECT rm_id FROM pg_get_wal_resource_managers() WHERE rm_name LIKE 'contcount%' ORDER BY rm_id"),
	'197', '(c) with contcount.replay_legacy_wal off, only 197 is registered');
($ret, $out, $err) = $primary->psql('postgres',
	"\\set VERBOSITY verbose\nSET contcount.write_legacy_wal_id = on;");
like($err, qr/ERROR:\s+55000:/,
	'(c) and no session can write records under 128 that could not be replayed');
is($primary->safe_psql('postgres', $ledgers_sql), $ledgers,
	'(c) the ledgers are unchanged after the restart');

$standby->stop;
$primary->stop;
done_testing();
