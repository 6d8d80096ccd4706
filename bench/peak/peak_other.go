//go:build purego || !(amd64 || arm64)

package peak

var kernels []Kernel
