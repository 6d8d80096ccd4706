//go:build !race

package kernel

const raceEnabled = false

func raceRead([]float64)  {}
func raceWrite([]float64) {}
