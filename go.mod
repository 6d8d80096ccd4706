module github.com/whitebox-lstm/whitebox

go 1.26.8

require (
	github.com/klauspost/cpuid/v2 v2.4.2 // indirect
	golang.org/x/perf v0.0.0-20260908200009-22c9c6c9d4da // indirect
	golang.org/x/sys v0.49.0 // indirect
)
