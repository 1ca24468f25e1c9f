#!/usr/bin/perl
# docs_prototypes.pl INCLUDE_DIR DOC... — every C prototype `TYPE dsig_NAME(...);` in a ```c block of
# the documents declares the function the public headers declare: the same return type and the same
# parameter types in the same order (parameter names, comments, array sizes and attribute macros aside).
# A manual that shows `dsig_jws_verify_init(&v, sig, len, key, opts)` after the API took the key first
# fails here. Exit 0, or 1 naming each prototype that differs or names no public function.
use strict;
use warnings;

my $inc = shift or die "usage: docs_prototypes.pl INCLUDE_DIR DOC...\n";

sub strip_comments { my $t = shift; $t =~ s{/\*.*?\*/}{ }gs; $t =~ s{//[^\n]*}{}g; return $t; }

# "const uint8_t *ctx" -> "const uint8_t *"; "uint8_t mu[DSIG_MLDSA_MU_LEN]" -> "uint8_t *".
sub param_type {
    my $p = shift;
    $p =~ s/^\s+|\s+$//g;
    my $arr = $p =~ s/\s*\[[^\]]*\]\s*$//;
    $p =~ s/\s*\b[A-Za-z_][A-Za-z_0-9]*$// unless $p =~ /^(void|\.\.\.)$/ or $p !~ /[\s*]/;
    $p .= ' *' if $arr;
    $p =~ s/\s*(\*+)\s*/ $1/g;
    $p =~ s/\s+/ /g;
    $p =~ s/^\s+|\s+$//g;
    return $p;
}

# name -> "ret(type,type,...)" for every declaration in TEXT.
sub declarations {
    my $t = shift;
    my %d;
    $t =~ s/\b(DSIG_EXPORT|DSIG_API|DSIG_WARN_UNUSED|DSIG_DEPRECATED)\b//g;
    $t =~ s/__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)//g;
    while ($t =~ /(?:^|[;}]|\n)\s*((?:const\s+)?[a-z_0-9]+(?:\s*\*+\s*|\s+))(dsig_[a-z0-9_]+)\s*\(([^;{}]*?)\)\s*;/g) {
        my ($ret, $name, $params) = ($1, $2, $3);
        $ret =~ s/\s*(\*+)\s*/ $1/g;
        $ret =~ s/\s+/ /g;
        $ret =~ s/^\s+|\s+$//g;
        $d{$name} = "$ret(" . join(',', map { param_type($_) } split /,/, $params) . ")";
    }
    return %d;
}

my $hdr = '';
for my $f (glob "$inc/dsig/*.h") {
    open my $h, '<', $f or die "$f: $!\n";
    local $/;
    $hdr .= strip_comments(<$h>) . "\n";
}
my %api = declarations($hdr);
die "no declarations found under $inc/dsig: wrong INCLUDE_DIR?\n" if keys %api < 50;

my ($n, $bad) = (0, 0);
for my $doc (@ARGV) {
    open my $d, '<', $doc or die "$doc: $!\n";
    local $/;
    my $text = <$d>;
    while ($text =~ /^```c\n(.*?)^```/gms) {
        my %shown = declarations(strip_comments($1));
        for my $name (sort keys %shown) {
            $n++;
            if (!exists $api{$name}) {
                $bad++;
                print "$doc: $name: no such public function in $inc/dsig\n";
            } elsif ($api{$name} ne $shown{$name}) {
                $bad++;
                print "$doc: $name: shown as $shown{$name}, declared as $api{$name}\n";
            }
        }
    }
}
print "$n prototypes in the documents, $bad differ from the headers\n";
exit($bad ? 1 : 0);
