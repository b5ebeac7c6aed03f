# A full disk while appending a charge (issue 9, item 7): the charge fails
# with 53100 disk_full and the OS error, not XX000 "Success"; it releases
# nothing, leaves no half-written record and is not counted as spent; once
# there is room again the server starts, the store loads undamaged with
# exactly the charges that succeeded, and charging goes on.
#
# The disk is made "full" without root by RLIMIT_FSIZE: the postmaster is
# started through a pg_ctl wrapper that sets ulimit -f, and every process of
# the server inherits the limit.  The postmaster ignores SIGXFSZ, so a write
# that crosses the limit is cut short (pwrite returns fewer bytes, as on a
# full disk), and one that starts at the limit fails with EFBIG.  WAL
# segments of 1 MB (initdb --wal-segsize=1) and the catalogs of a fresh
# cluster stay under the limit; the ledger store grows past it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Find;

my $epsilon = '0.000001';	# the smallest; 1000 units
my $release = "contcount.running_counts(ARRAY[1], $epsilon)";
my $pad = 'x' x 1100;		# statements longer than the 1023 bytes a record keeps

my $node = PostgreSQL::Test::Cluster->new('disk_full');
$node->init(extra => ['--wal-segsize=1']);
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'contcount'");
$node->start;
$node->safe_psql('postgres', q{
    CREATE EXTENSION contcount;
    SELECT contcount.create_ledger('full', 1000);
    ALTER DATABASE postgres SET contcount.ledger = 'full';
});
my $pgdata = $node->data_dir;
my $store = "$pgdata/contcount/ledger";

sub spent
{
	return $node->safe_psql('postgres',
		"SELECT spent FROM contcount.ledgers WHERE name = 'full'");
}

# spent is exactly $n charges of $epsilon, and the audit holds $n whole charges
sub spent_is
{
	my ($n, $what) = @_;
	is( $node->safe_psql('postgres', qq{
			SELECT l.spent = $n * $epsilon, count(c.*), sum(c.epsilon) = l.spent
			FROM contcount.ledgers l LEFT JOIN contcount.charges c ON c.ledger = l.name
			WHERE l.name = 'full' GROUP BY l.spent}),
		"t|$n|t", "$what: spent is exactly $n x $epsilon, and the audit lists $n charges");
}

# The file size limit each backend of the node runs under, from /proc.
sub backend_file_limit
{
	my $pid = $node->safe_psql('postgres', 'SELECT pg_backend_pid()');
	my ($line) = grep { /^Max file size/ } split /\n/, slurp_file("/proc/$pid/limits");
	return (split /\s+/, $line)[3];
}

# What one charge with a short statement adds to the store: the record's
# fixed part, the function name and the statement, of which the rest of
# this file makes records of any chosen length.
my $short = "SELECT r.t, length('') FROM $release r;";
my $before = -s $store;
is($node->safe_psql('postgres', $short), '1|0', 'a release');
my $short_record = (-s $store) - $before;
my $fixed = $short_record - length($short);
my $record = $fixed + 1023;	# a statement is kept up to 1023 bytes
spent_is(1, 'the first charge');

# Nothing of a fresh cluster is larger than a WAL segment, 1 MB.
my @big;
find(sub { push @big, $File::Find::name if -f $_ && -s _ > 1024 * 1024 }, $pgdata);
is_deeply(\@big, [], 'no file of the cluster is larger than 1 MB');

# The limit: just over 1 MB, chosen so that the last full record that
# fits leaves room for a short one, to fill the store to the byte below.
my $start = -s $store;
my $limit_kb = 1100;
$limit_kb++ while ($limit_kb * 1024 - $start) % $record < $short_record;
my $limit = $limit_kb * 1024;

$node->stop;
my ($pg_ctl) = grep { -x $_ } map { "$_/pg_ctl" } split /:/, $ENV{PATH};
my $wrappers = PostgreSQL::Test::Utils::tempdir;
open(my $fh, '>', "$wrappers/pg_ctl") or die "$wrappers/pg_ctl: $!";
print $fh "#!/bin/bash\nulimit -f $limit_kb || exit 1\nexec '$pg_ctl' \"\$\@\"\n";
close $fh;
chmod 0755, "$wrappers/pg_ctl" or die;
{
	local $ENV{PATH} = "$wrappers:$ENV{PATH}";
	$node->start;
}
is(backend_file_limit(), $limit, "the server runs with files limited to $limit bytes");

# Charge from one statement until the store is full: the charges that fit
# succeed, the first that does not fails with 53100 and the OS error.
my ($ret, $out, $err) = $node->psql('postgres', qq{
DO \$\$
DECLARE
    pad text := '$pad';
    n int := 0;
BEGIN
    LOOP
        PERFORM * FROM $release;
        n := n + 1;
        EXIT WHEN n = 5000;
    END LOOP;
    RAISE NOTICE 'charges=% no error', n;
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'charges=% sqlstate=% message=%', n, SQLSTATE, SQLERRM;
END \$\$;});
my ($charges, $sqlstate, $message) =
  $err =~ /NOTICE:  charges=(\d+) sqlstate=(\w+) message=(.*)/ or diag("psql: $ret, $err");
ok($charges > 1000, "charges succeed until the store is full ($charges of them)");
is($sqlstate, '53100', 'the charge that does not fit fails with 53100 disk_full');
is( $message,
	'could not write the ledger store "contcount/ledger": No space left on device',
	'and says which file and that the disk is full');
my $full = -s $store;
is($full, $start + $charges * $record,
	'the store holds one whole record per charge that succeeded, and nothing of the failed one');
ok($full < $limit && $full + $record > $limit,
	'the failed write was cut short at the limit (a short write, as on a full disk)');
spent_is(1 + $charges, 'after the failed charge');

# The same as a statement of its own: an error a client can test, no rows.
($ret, $out, $err) = $node->psql('postgres', qq{\\set VERBOSITY verbose
SELECT r.t, length('$pad') FROM $release r;});
isnt($ret, 0, 'a release whose charge does not fit fails');
is($out, '', 'and returns no row');
like( $err,
	qr/ERROR:  53100: could not write the ledger store "contcount\/ledger": No space left on device/,
	'with 53100 and the OS error');
unlike($err, qr/Success/, 'not "Success"');
is(-s $store, $full, 'nothing of it is left in the store');
spent_is(1 + $charges, 'after the failed release');

# A record that fits to the byte is written; the next append starts at the
# limit, where pwrite fails outright with EFBIG instead of writing short.
# A file size limit (or a quota) is a full disk for the store too: 53100,
# with the OS error in the message.
my $fill = "SELECT r.t, length('" . ('y' x ($limit - $full - $short_record)) . "') FROM $release r;";
($ret, $out, $err) = $node->psql('postgres', $fill);
is($ret, 0, 'a charge that fits the room left to the byte succeeds');
is(-s $store, $limit, 'and fills the store to the limit');
($ret, $out, $err) = $node->psql('postgres', qq{\\set VERBOSITY verbose
$short});
isnt($ret, 0, 'a release after that fails');
is($out, '', 'and returns no row');
like($err, qr/ERROR:  53100: could not write the ledger store "contcount\/ledger": File too large/,
	'as a full disk (53100), naming the file and the OS error');
is(-s $store, $limit, 'nothing of it is left in the store');
spent_is(2 + $charges, 'after the failed release at the limit');

# Room again: a restart without the limit loads the store undamaged, with
# every charge that succeeded, and charging goes on.
$node->stop;
$node->start;
is(backend_file_limit(), 'unlimited', 'restarted without the file size limit');
spent_is(2 + $charges, 'after the restart');
ok(!$node->log_contains('dropping an incomplete ledger record'),
	'no record was left half-written for the restart to drop');
ok(!$node->log_contains('ledger store is damaged'), 'the store loads undamaged');
is($node->safe_psql('postgres', "SELECT r.t, length('$pad') FROM $release r"),
	'1|1100', 'a release with a full-size record succeeds');
cmp_ok(-s $store, '>', $limit, 'and the store grows past the old limit');
spent_is(3 + $charges, 'after the new charge');
ok(!$node->log_contains('PANIC'), 'no PANIC in the server log');
ok(!$node->log_contains('terminated by signal'), 'and no process killed by a signal');

done_testing();
