# A counter copied with pg_dump and pg_restore does not go on releasing
# from the copied state without a charge: its next step there pays its
# epsilon again, once, to the ledger that paid for it (in its owner's name,
# or through the ledger its creator's contcount.ledger chose); later steps
# and restarts pay nothing more; the original, back in its own database,
# does not pay again; a ledger that cannot pay stops that copy alone, its
# state untouched, with the ledger's SQLSTATE; a dump restored into its
# own database (back at an earlier step) pays too; and in another cluster
# (a new system identifier) a copy whose ledger the store does not hold is
# refused, and pays once the ledgers' export is imported there.  The step
# worker pays for a copy under a per-statement cap smaller than the charge.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('original');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'contcount'
contcount.database = 'postgres'
log_line_prefix = '%m [%p] %e %q%a '
});
$node->start;

# the step worker runs in database db (and so in no other)
sub serve
{
	my ($n, $db) = @_;
	$n->append_conf('postgresql.conf', "contcount.database = '$db'");
	$n->restart;
	ok( $n->poll_query_until('postgres',
			"SELECT count(*) > 0 FROM pg_stat_activity "
			  . "WHERE backend_type = 'contcount step worker' AND datname = '$db'"),
		"the step worker runs in database $db");
	return;
}

sub spent
{
	my ($n, $db, $ledger) = @_;
	return $n->safe_psql($db, "SELECT spent FROM contcount.ledgers WHERE name = '$ledger'");
}

# the charges made for copies: role, ledger, epsilon
sub copy_charges
{
	my ($n, $db) = @_;
	return $n->safe_psql($db, q{
        SELECT string_agg(role || ' ' || ledger || ' ' || epsilon, ', ' ORDER BY at)
        FROM contcount.charges WHERE function = 'counter_copy'});
}

sub history
{
	my ($n, $db, $counter) = @_;
	return $n->safe_psql($db,
		"SELECT string_agg(t || ':' || noisy_count, ',' ORDER BY t) FROM contcount.history('$counter')");
}

sub state
{
	my ($n, $db, $counter) = @_;
	return $n->safe_psql($db,
		"SELECT steps || ' ' || md5(state) FROM contcount.counter WHERE name = '$counter'");
}

sub tick
{
	my ($n, $db, $counter) = @_;
	return $n->safe_psql($db, "SELECT contcount.tick('$counter')");
}

# ---------------------------------------------------------------------
# The original: a counter owned by a role with a grant on its ledger, and
# one whose ledger its creator's contcount.ledger chose; 3 steps each.
# ---------------------------------------------------------------------
$node->safe_psql('postgres', q{
    CREATE EXTENSION contcount;
    CREATE ROLE app_owner;
    SELECT contcount.create_ledger('team', 10);
    SELECT contcount.grant_ledger('team', 'app_owner');
    SELECT contcount.create_ledger('house', 10);
    SET ROLE app_owner;
    SELECT contcount.create_counter('signups', 1, horizon => 1000, step => '1 day', ledger => 'team', mechanism => 'binary');
    RESET ROLE;
    SET contcount.ledger = 'house';
    SELECT contcount.create_counter('visits', 0.5, mechanism => 'hybrid', step => '1 day');
    RESET contcount.ledger;
    CREATE TABLE events (id serial);
    CREATE TRIGGER count_signups AFTER INSERT ON events
        FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('signups');
    CREATE TRIGGER count_visits AFTER INSERT ON events
        FOR EACH ROW EXECUTE FUNCTION contcount.count_inserts('visits');
});
ok( $node->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM pg_stat_activity WHERE backend_type = 'contcount step worker'"),
	'the step worker runs');
for my $step (1 .. 3)
{
	$node->safe_psql('postgres', "INSERT INTO events SELECT FROM generate_series(1, 10 * $step)");
	is(tick($node, 'postgres', $_), $step, "original: $_ closes step $step") for qw(signups visits);
}
is(spent($node, 'postgres', 'team'), '1', 'creating signups charged team 1');
is(spent($node, 'postgres', 'house'), '0.5', 'creating visits charged house 0.5');
is(copy_charges($node, 'postgres'), '', 'nothing was charged for a copy');
my %history = map { $_ => history($node, 'postgres', $_) } qw(signups visits);
my %state = map { $_ => state($node, 'postgres', $_) } qw(signups visits);

# ---------------------------------------------------------------------
# Two copies, restored into two new databases of the same cluster (whose
# ledger store already holds the ledgers).
# ---------------------------------------------------------------------
my $dump = $node->basedir . '/postgres.dump';
my $ledgers = $node->safe_psql('postgres', 'SELECT contcount.export_ledgers()');
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('postgres') ],
	'pg_dump of the original');
for my $db (qw(copy copy2))
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->command_ok([ 'pg_restore', '-d', $node->connstr($db), $dump ], "pg_restore into $db");
}
is($node->safe_psql('copy', q{
        SELECT string_agg(name || ' ' || (place_database = (SELECT oid FROM pg_database WHERE datname = 'postgres'))
                          || ' ' || coalesce(ledger, '-') || ' ' || charged_ledger, ', ' ORDER BY name)
        FROM contcount.counter}),
	'signups true team team, visits true - house',
	'the copies say that their state lived in the original database, and which ledger paid');
is(state($node, 'copy', $_), $state{$_}, "copy: $_ holds the original's state") for qw(signups visits);

# a per-statement cap below what a copy pays binds every session of copy,
# but not the step worker: the copies' charges are no role's statement
$node->safe_psql('postgres', 'ALTER DATABASE copy SET contcount.max_epsilon_per_statement = 0.25');
serve($node, 'copy');
is($node->safe_psql('copy', 'SHOW contcount.max_epsilon_per_statement'), '0.25',
	'copy: a per-statement cap of 0.25 holds there');
my $log_offset = -s $node->logfile;
for my $counter (qw(signups visits))
{
	is(tick($node, 'copy', $counter), 4, "copy: $counter closes step 4");
	is(history($node, 'copy', $counter) =~ s/,4:-?\d+$//r, $history{$counter},
		"copy: $counter released one step more, every earlier release as it was");
}
is(spent($node, 'copy', 'team'), '2', "copy: signups' first step charged team its epsilon again");
is(spent($node, 'copy', 'house'), '1', "copy: visits' first step charged house its epsilon again");
is(copy_charges($node, 'copy'), 'app_owner team 1, postgres house 0.5',
	'copy: one charge for each copy, in the name of its owner');
like(slurp_file($node->logfile, $log_offset),
	qr/counter "signups" was copied and paid its epsilon again\n.*DETAIL:  Its state was at system -?\d+ database \d+ table \d+; it is now at system/,
	'copy: the worker logged the copy it paid for');
is($node->safe_psql('copy', q{
        SELECT bool_and(place_system = (SELECT system_identifier FROM pg_control_system())
                        AND place_database = (SELECT oid FROM pg_database WHERE datname = 'copy')
                        AND place_table = 'contcount.counter'::regclass)
        FROM contcount.counter}),
	't', 'copy: the counters now record that their state lives there');
for my $counter (qw(signups visits))
{
	$node->safe_psql('copy', 'INSERT INTO events SELECT FROM generate_series(1, 5)');
	is(tick($node, 'copy', $counter), 5, "copy: $counter closes step 5");
}
$node->restart;
is(tick($node, 'copy', $_), 6, "copy, after a restart: $_ closes step 6") for qw(signups visits);
is(spent($node, 'copy', 'team') . ' ' . spent($node, 'copy', 'house'), '2 1',
	'copy: later steps and a restart charge nothing more');
is(copy_charges($node, 'copy'), 'app_owner team 1, postgres house 0.5', 'copy: still one charge each');

# ---------------------------------------------------------------------
# The original, back in its own database: it was not copied.
# ---------------------------------------------------------------------
serve($node, 'postgres');
is(tick($node, 'postgres', $_), 4, "original: $_ closes step 4") for qw(signups visits);
is(spent($node, 'postgres', 'team') . ' ' . spent($node, 'postgres', 'house'), '2 1',
	'original: its next step charged nothing');
is(copy_charges($node, 'postgres'), 'app_owner team 1, postgres house 0.5',
	'original: no charge beyond the copy\'s');

# ---------------------------------------------------------------------
# The second copy, whose ledger cannot pay: it stops, alone.
# ---------------------------------------------------------------------
# the budget binds in the database that charges: copy2's team holds 2, spent
$node->safe_psql('copy2', "SELECT contcount.alter_ledger('team', 2)");
serve($node, 'copy2');
$log_offset = -s $node->logfile;
my ($ret, $out, $err) = $node->psql('copy2', "SELECT contcount.tick('signups')",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
isnt($ret, 0, 'copy2: tick() of signups fails');
like($err, qr/ERROR:  ZB001: privacy budget of ledger "team" would be overspent/,
	"copy2: with the ledger's SQLSTATE and message");
like($err, qr/counter "signups" was copied from another database or cluster/,
	'copy2: saying that the counter was copied');
is(state($node, 'copy2', 'signups'), $state{signups}, 'copy2: signups did not advance, its state as restored');
is(history($node, 'copy2', 'signups'), $history{signups}, 'copy2: and released nothing more');
like(slurp_file($node->logfile, $log_offset),
	qr/ZB001 WARNING:  counter "signups" was copied and takes no step: privacy budget of ledger "team" would be overspent/,
	'copy2: the worker logged the refusal with the ledger\'s SQLSTATE');
my $worker = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'contcount step worker'");
is(tick($node, 'copy2', 'visits'), 4, 'copy2: visits, whose ledger pays, goes on');
is(spent($node, 'copy2', 'house'), '1.5', 'copy2: paying for its own copy once');
is($node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'contcount step worker'"),
	$worker, 'copy2: the same worker serves both');
is(spent($node, 'copy2', 'team'), '2', 'copy2: the refusal charged nothing');
$node->safe_psql('copy2', "SELECT contcount.alter_ledger('team', 3)");
is(tick($node, 'copy2', 'signups'), 4, 'copy2: with budget given, signups closes step 4');
is(spent($node, 'copy2', 'team'), '3', 'copy2: and pays for its copy once');
is(tick($node, 'copy2', 'signups'), 5, 'copy2: signups closes step 5');
is(spent($node, 'copy2', 'team'), '3', 'copy2: paying nothing more');

# ---------------------------------------------------------------------
# The original restored from its own dump into its own database (pg_restore
# --clean): same cluster and database, but its state is back at step 3,
# whose next node it drew already.  The state's table is new: a copy too.
# ---------------------------------------------------------------------
$node->command_ok([ 'pg_restore', '--clean', '--if-exists', '-d', $node->connstr('postgres'), $dump ],
	'pg_restore --clean of the dump into the original database');
serve($node, 'postgres');
is(state($node, 'postgres', 'signups'), $state{signups}, 'restored in place: signups is back at step 3');
is(tick($node, 'postgres', 'signups'), 4, 'restored in place: signups closes step 4 again');
is(spent($node, 'postgres', 'team'), '4', 'restored in place: and pays for it once');
is(tick($node, 'postgres', 'signups'), 5, 'restored in place: signups closes step 5');
is(spent($node, 'postgres', 'team'), '4', 'restored in place: paying nothing more');

# ---------------------------------------------------------------------
# Another cluster: a new system identifier.  Until the ledgers' export is
# imported, the restored ledgers are not in its ledger store, so the copy
# is refused (fail closed); then it pays once, on top of what the export
# says was spent.  Counters keep their owner by oid, so this is visits, the
# bootstrap superuser's (oid 10 in every cluster).
# ---------------------------------------------------------------------
my $other = PostgreSQL::Test::Cluster->new('other');
$other->init;
$other->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'contcount'
contcount.database = 'copy'
log_line_prefix = '%m [%p] %e %q%a '
});
$other->start;
$other->safe_psql('postgres', 'CREATE DATABASE copy');
$other->command_ok([ 'pg_restore', '-d', $other->connstr('copy'), $dump ],
	'pg_restore into another cluster');
isnt($other->safe_psql('copy', 'SELECT system_identifier FROM pg_control_system()'),
	$node->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()'),
	'the other cluster has another system identifier');
ok( $other->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM pg_stat_activity WHERE backend_type = 'contcount step worker'"),
	'the step worker runs in the other cluster');
($ret, $out, $err) = $other->psql('copy', "SELECT contcount.tick('visits')",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  XX001: ledger "house" is missing from the ledger store/,
	"other cluster: the copy's ledger is not in the store, so it is refused (XX001)");
is(state($other, 'copy', 'visits'), $state{visits}, 'other cluster: and visits did not advance');
$other->safe_psql('copy', "SELECT count(*) FROM contcount.import_ledgers(\$json\$$ledgers\$json\$::jsonb)");
is(spent($other, 'copy', 'house'), '0.5', 'other cluster: the import brings what house spent');
is(tick($other, 'copy', 'visits'), 4, 'other cluster: with the ledgers imported, visits closes step 4');
is(spent($other, 'copy', 'house'), '1', 'other cluster: paying its epsilon once');
is($other->safe_psql('copy', q{
        SELECT string_agg(role || ' ' || epsilon, ', ') FROM contcount.charges
        WHERE function = 'counter_copy' AND statement ~ 'to system'}),
	'postgres 0.5', 'other cluster: one charge for the copy');
is(tick($other, 'copy', 'visits'), 5, 'other cluster: visits closes step 5');
is(spent($other, 'copy', 'house'), '1', 'other cluster: paying nothing more');
is($other->safe_psql('copy', q{
        SELECT place_system = (SELECT system_identifier FROM pg_control_system())
        FROM contcount.counter WHERE name = 'visits'}),
	't', 'other cluster: visits records the new system identifier');

done_testing();
