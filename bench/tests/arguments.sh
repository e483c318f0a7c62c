# Argument parsing: bad arguments exit 2 with a message naming the problem;
# help texts exit 0 and document what they should.
. "$(dirname "$0")/common.sh"

expect_status 2 "range '64:8:x2'" --T 64:8:x2
expect_status 2 "unknown option '--bogus'" --bogus
expect_status 2 "needs a value" --T
expect_status 2 "takes no value" --quick=1
expect_status 2 "--dtype: 'f16' is not a list of f32, f64" --dtype f16
expect_status 2 "give --hs or --NH, not both" --hs 8 --NH 2
expect_status 2 "--path: 'fast'" --path fast
expect_status 2 "--op: 'sideways'" --op sideways
expect_status 2 "not a positive whole number" --threads 0
expect_status 2 "--min-time: '-1'" --min-time -1
expect_status 2 "--ceiling" --ceiling 512
expect_status 2 "--progress" --progress sometimes
expect_status 2 "--peers" --peers matlab
expect_status 2 "no configuration of this sweep can run" --quick --api oneshot --op backward
expect_status 2 "unexpected argument 'stray'" --quick stray
expect_status 2 "unknown command 'frobnicate'" frobnicate
expect_status 2 "No such file" --sweep does-not-exist.sweep
printf 'T = 16\ncolour = blue\n' >bad.sweep
expect_status 2 "bad.sweep:2: 'colour' is not an option" --sweep bad.sweep
printf 'weights = maybe\n' >flag.sweep
expect_status 2 "flag.sweep:1: weights is a flag" --sweep flag.sweep
expect_status 2 "unknown option '--bogus'" report --bogus
expect_status 2 "--hs" scaling --hs 0
expect_status 2 "--trials" rank --trials none
expect_status 2 "--hs: 64 > C = 32" init --hs 64 --C 32

expect_status 0 "FLOP COUNTS" --help
expect_status 0 "sets the BLAS.s thread count" run --help
expect_status 0 "scaling +experiment" help
expect_status 0 "--check" help scaling
expect_status 0 "rank <= hs" rank --help
expect_status 0 "report.md" report --help
