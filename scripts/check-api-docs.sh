#!/bin/sh
# check-api-docs.sh SOURCE_DIR — the documentation contract of the public API and the scheme docs.
#
# 1. Every function declared in include/dsig/*.h (a DSIG_EXPORT prototype) has a comment of its own
#    right above it (nothing but blank space between the comment's end and the prototype). A function
#    returning int (a status, or 1/0 for a predicate) lists what it returns as `@retval VALUE meaning`
#    lines; any other non-void return is described by an `@return` line. Every DSIG_E_* an @retval
#    names exists in include/dsig/error.h.
# 2. Every per-scheme document (the list below) has exactly the level-2 sections of the common skeleton,
#    in this order: Overview, Parameters, API, Streaming, Caveats, Security considerations, Performance.
#
# Exit 0, or 1 after naming every prototype or document that breaks the contract.
set -eu
src=${1:?usage: check-api-docs.sh SOURCE_DIR}
exec perl -e '
use strict;
use warnings;
my $src = shift;
my $bad = 0;

open my $eh, "<", "$src/include/dsig/error.h" or die "error.h: $!\n";
my %codes = map { $_ => 1 } (do { local $/; <$eh> } =~ /\b(DSIG_(?:OK|E_[A-Z0-9_]+))\s*=/g);

my $nfun = 0;
for my $h (sort glob "$src/include/dsig/*.h") {
    open my $fh, "<", $h or die "$h: $!\n";
    my $text = do { local $/; <$fh> };
    (my $rel = $h) =~ s{^\Q$src\E/}{};
    # A prototype: DSIG_EXPORT (and attribute macros) ... dsig_name( ... );
    while ($text =~ /^((?:(?:DSIG_WARN_UNUSED|DSIG_EXPORT)\s+)+)([^;(]*?)\b(dsig_[a-z0-9_]+)\s*\([^;]*\)\s*;/mg) {
        my ($ret, $name) = ($2, $3);
        my $start = $-[0];
        next unless $1 =~ /DSIG_EXPORT/;
        $nfun++;
        $ret =~ s/\b(?:DSIG_WARN_UNUSED|DSIG_EXPORT)\b//g;
        $ret =~ s/\s+//g;
        my $line = 1 + (() = substr($text, 0, $start) =~ /\n/g);
        my $before = substr($text, 0, $start);
        if ($before !~ m{(/\*(?:(?!\*/).)*\*/)\s*\z}s) {
            print "$rel:$line: $name: no doc comment right above the prototype\n";
            $bad++;
            next;
        }
        my $doc = $1;
        if ($ret eq "int") {
            if ($doc !~ /\@retval\s+\S/) {
                print "$rel:$line: $name returns int: its comment lists no \@retval\n";
                $bad++;
            }
        } elsif ($ret ne "void" && $doc !~ /\@return\s+\S/) {
            print "$rel:$line: $name returns $ret: its comment has no \@return\n";
            $bad++;
        }
        for my $code ($doc =~ /\@retval\s+(DSIG_[A-Z0-9_]+)/g) {
            next if $codes{$code};
            print "$rel:$line: $name: \@retval $code is not a status of include/dsig/error.h\n";
            $bad++;
        }
    }
}
die "no prototypes found under $src/include/dsig\n" if $nfun < 50;

my @skeleton = ("Overview", "Parameters", "API", "Streaming", "Caveats", "Security considerations",
                "Performance");
my @schemes = qw(mldsa slhdsa falcon lms xmss dsig eddsa-one-pass regional classic mac);
for my $s (@schemes) {
    my $doc = "$src/docs/$s.md";
    open my $dh, "<", $doc or do { print "docs/$s.md: missing\n"; $bad++; next };
    my ($fence, @h) = (0);
    while (<$dh>) {
        $fence = !$fence if /^```/;
        push @h, $1 if !$fence && /^## (.*?)\s*$/;
    }
    if ("@h" ne "@skeleton") {
        print "docs/$s.md: sections are (" . join(", ", @h) . "); the skeleton is (" .
              join(", ", @skeleton) . ")\n";
        $bad++;
    }
}
print "$nfun public functions, " . scalar(@schemes) . " scheme documents; $bad problem(s)\n";
exit($bad ? 1 : 0);
' "$src"
