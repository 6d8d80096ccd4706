package main

import "math"

// The float64 constants of the kernels. They repeat, value for value, the
// named constants of ../exp_generic.go (the twins); TestAsmConstants in
// package kernel parses the generated DATA lines and checks every bit
// pattern against the Go constant of the same name, so a drift fails a test.
var constants = []struct {
	name  string
	value float64
}{
	// Exp (expGeneric).
	{"expMaxArg", 710},
	{"expMinArg", -746},
	{"expLog2E", math.Log2E},
	{"expLn2Hi", 6.93147180369123816490e-01},
	{"expLn2Lo", 1.90821492927058770002e-10},
	{"expC2", 1.0 / 2},
	{"expC3", 1.0 / 6},
	{"expC4", 1.0 / 24},
	{"expC5", 1.0 / 120},
	{"expC6", 1.0 / 720},
	{"expC7", 1.0 / 5040},
	{"expC8", 1.0 / 40320},
	{"expC9", 1.0 / 362880},
	{"expC10", 1.0 / 3628800},
	{"expC11", 1.0 / 39916800},
	{"expC12", 1.0 / 479001600},
	{"expC13", 1.0 / 6227020800},
	// 2^52 + 1023: k + expMagic has the biased exponent k+1023 in its low
	// bits, so shifting its bit pattern left by 52 builds 2^k (AVX2 only).
	{"expMagic", 1<<52 + 1023},

	// Tanh (tanhGeneric).
	{"tanhSmall", 0.625},
	{"tanhSat", 20},
	{"sigmoidSat", 40},
	{"tanhP0", -9.64399179425052238628e-1},
	{"tanhP1", -9.92877231001918586564e1},
	{"tanhP2", -1.61468768441708447952e3},
	{"tanhQ0", 1.12811678491632931402e2},
	{"tanhQ1", 2.23548839060100448583e3},
	{"tanhQ2", 4.84406305325125486048e3},

	// Plain numbers.
	{"one", 1},
	{"half", 0.5},
	{"minusTwo", -2},
	{"zero", 0},
}

// Bit masks (as float64 bit patterns).
var masks = []struct {
	name string
	bits uint64
}{
	{"signMask", 1 << 63},
	{"absMask", 1<<63 - 1},
}
