# The ledger store: charges survive kill -9, crash recovery from a
# checkpoint and restarts; a damaged or lost store fails closed; standbys
# refuse releases; WAL consistency checking verifies the store's redo.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ContcountTest;

my $node = PostgreSQL::Test::Cluster->new('primary');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'contcount'\nrestart_after_crash = on\nwal_consistency_checking = 'contcount'");
$node->start;
$node->safe_psql('postgres', q{
    CREATE EXTENSION contcount;
    SELECT contcount.create_ledger('durable', 1000);
    ALTER DATABASE postgres SET contcount.ledger = 'durable';
    CREATE TABLE events AS SELECT i FROM generate_series(1, 100) i;
});
my $store = $node->data_dir . '/global/1668247156';

sub spent
{
	return $node->safe_psql('postgres',
		"SELECT spent FROM contcount.ledgers WHERE name = 'durable'");
}

sub release
{
	my ($epsilon) = @_;
	return $node->psql('postgres',
		"SELECT contcount.noisy_count($epsilon) FROM events",
		stdout => \my $out, stderr => \my $err);
}

# Every release returned before kill -9 of the postmaster is charged.
is(release('0.25'), 0, 'a release');
is(release('0.25'), 0, 'another release');
kill9_postmaster_and_start($node);
is(spent(), '0.5', 'both charges survive kill -9 of the postmaster');

# kill -9 of a backend right after its release: the server restarts its
# shared memory from the store.
my $session = $node->background_psql('postgres');
$session->query_safe('SELECT contcount.noisy_count(0.125) FROM events');
my $pid = $session->query_safe('SELECT pg_backend_pid()');
kill 'KILL', $pid;
$node->poll_query_until('postgres', 'SELECT true') or die 'no restart';
is(spent(), '0.625', 'the charge survives kill -9 of its backend and the crash restart');
$session->quit;

# A clean restart keeps everything, and releases go on.
$node->restart;
is(spent(), '0.625', 'a clean restart keeps the charges');
is(release('0.375'), 0, 'releases go on after the restart');
is(spent(), '1', 'and are charged');

# A checkpoint writes the store's pages; what follows it is in WAL only
# until the next: kill -9 then, and redo brings it back.
$node->safe_psql('postgres', 'CHECKPOINT');
is(release('0.25'), 0, 'a release after a checkpoint');
kill9_postmaster_and_start($node);
is(spent(), '1.25', 'a charge after the last checkpoint survives kill -9: redo applies it');
ok($node->log_contains('redo starts'), 'through crash recovery');

# Damage inside an item (the server stopped cleanly, so no redo rewrites
# the page) fails closed: every release is refused.
$node->stop;
my $good = slurp_file($store);
my $item = index($good, 'SELECT contcount.noisy_count(0.25)');
ok($item > 0, 'the store file holds the audit of the charges');
my $bad = $good;
substr($bad, $item, 1) = 'Z';
open(my $fh, '>', $store) or die;
binmode $fh;
print $fh $bad;
close $fh;
$node->start;
my ($ret, $out, $err) = $node->psql('postgres', 'SELECT contcount.noisy_count(0.1) FROM events');
isnt($ret, 0, 'a damaged store refuses releases');
like($err, qr/ledger store is damaged/, 'with a clear error');
like($err, qr/a damaged item at block 0/, 'that says where');
($ret, $out, $err) = $node->psql('postgres',
	"SELECT * FROM contcount.running_counts(ARRAY[1, 2], 0.1, mechanism => 'binary')");
like($err, qr/ledger store is damaged/, 'for every kind of release');
($ret, $out, $err) = $node->psql('postgres', 'SELECT * FROM contcount.ledgers');
like($err, qr/ledger store is damaged/, 'and the ledgers cannot be read as if all were well');

# The good pages restore the ledger.
$node->stop;
open($fh, '>', $store) or die;
binmode $fh;
print $fh $good;
close $fh;
$node->start;
is(spent(), '1.25', 'the restored store has every charge');

# A store that was lost does not start from zero: its ledgers are refused.
$node->stop;
rename($store, "$store.lost") or die;
$node->start;
($ret, $out, $err) = $node->psql('postgres', 'SELECT contcount.noisy_count(0.1) FROM events');
like($err, qr/"durable" is missing from the ledger store/, 'a lost store fails closed');
like($err, qr/contcount.import_ledgers/, 'with a hint that names a safe way back');
$node->stop;
rename("$store.lost", $store) or die;
$node->start;
is(spent(), '1.25', 'and comes back with its file');

# A standby cannot record a charge, so it releases nothing.
$node->backup('backup');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($node, 'backup', has_streaming => 1);
$standby->start;
$node->wait_for_catchup($standby);
($ret, $out, $err) = $standby->psql('postgres', 'SELECT contcount.noisy_count(0.1) FROM events');
isnt($ret, 0, 'a standby refuses releases');
like($err, qr/cannot release noisy values during recovery/, 'and says why');
$standby->stop;

# Without shared_preload_libraries there is no ledger, and no release.
$node->append_conf('postgresql.conf', "shared_preload_libraries = ''\nwal_consistency_checking = ''");
$node->restart;
($ret, $out, $err) = $node->psql('postgres', 'SELECT contcount.noisy_count(0.1) FROM events');
like($err, qr/must be loaded through shared_preload_libraries/, 'not preloaded: a clear error');
($ret, $out, $err) = $node->psql('postgres', "SELECT contcount.create_counter('c', 1, horizon => 10, mechanism => 'binary')");
like($err, qr/must be loaded through shared_preload_libraries/, 'for counters too');

done_testing();
