// bench/results is a module of its own so that the record of past runs
// (their outputs and .patch files) is not part of the shipped module.
module github.com/whitebox-lstm/whitebox/bench/results

go 1.26
