package score

import "github.com/whitebox-lstm/whitebox/whitebox"

// NetConfig is the white-box networks' Config of the flags -m, -u and -k:
// a flag given (set) is the value given, a zero too (which New refuses by
// name, never replaced by the default); one not given is the default.
func NetConfig(m, u float64, k int, set func(flag string) bool) whitebox.Config {
	var c whitebox.Config
	if set("m") {
		c.M = new(m)
	}
	if set("u") {
		c.U = new(u)
	}
	if set("k") {
		c.K = new(k)
	}
	return c
}
