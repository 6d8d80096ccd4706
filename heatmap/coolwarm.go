package heatmap

// RGB is a colour with components in [0, 1].
type RGB struct{ R, G, B float64 }

// lutSize is matplotlib's default colormap resolution (rcParams["image.lut"]).
const lutSize = 256

// coolwarmData is matplotlib's _coolwarm_data from lib/matplotlib/_cm.py,
// transcribed verbatim. matplotlib generated it from CoolWarmFloat33.csv of
// Kenneth Moreland's "Diverging Color Maps for Scientific Visualization"
// (33 evenly spaced control points per channel). Every segment is
// continuous (y0 == y1 in matplotlib's (x, y0, y1) triples), so one value per
// point suffices; the x positions are k/32 and are generated in buildLUT.
var coolwarmData = [3][33]float64{
	{ // red
		0.2298057, 0.26623388, 0.30386891, 0.342804478, 0.38301334,
		0.424369608, 0.46666708, 0.509635204, 0.552953156, 0.596262162,
		0.639176211, 0.681291281, 0.722193294, 0.761464949, 0.798691636,
		0.833466556, 0.865395197, 0.897787179, 0.924127593, 0.944468518,
		0.958852946, 0.96732803, 0.969954137, 0.966811177, 0.958003065,
		0.943660866, 0.923944917, 0.89904617, 0.869186849, 0.834620542,
		0.795631745, 0.752534934, 0.705673158,
	},
	{ // green
		0.298717966, 0.353094838, 0.406535296, 0.458757618, 0.50941904,
		0.558148092, 0.604562568, 0.648280772, 0.688929332, 0.726149107,
		0.759599947, 0.788964712, 0.813952739, 0.834302879, 0.849786142,
		0.860207984, 0.86541021, 0.848937047, 0.827384882, 0.800927443,
		0.769767752, 0.734132809, 0.694266682, 0.650421156, 0.602842431,
		0.551750968, 0.49730856, 0.439559467, 0.378313092, 0.312874446,
		0.24128379, 0.157246067, 0.01555616,
	},
	{ // blue
		0.753683153, 0.801466763, 0.84495867, 0.883725899, 0.917387822,
		0.945619588, 0.968154911, 0.98478814, 0.995375608, 0.999836203,
		0.998151185, 0.990363227, 0.976574709, 0.956945269, 0.931688648,
		0.901068838, 0.865395561, 0.820880546, 0.774508472, 0.726736146,
		0.678007945, 0.628751763, 0.579375448, 0.530263762, 0.481775914,
		0.434243684, 0.387970225, 0.343229596, 0.300267182, 0.259301199,
		0.220525627, 0.184115123, 0.150232812,
	},
}

// coolwarmLUT holds the 256 colours of matplotlib's coolwarm colormap.
var coolwarmLUT = buildLUT()

// buildLUT mirrors matplotlib.colors._create_lookup_table(N=256, data,
// gamma=1) operation for operation, so that the float64 results are
// bit-identical to matplotlib's (the paper prints them at full precision):
//
//	x = x * (N - 1)
//	xind = (N - 1) * np.linspace(0, 1, N)   # linspace: i * (1/(N-1))
//	ind = np.searchsorted(x, xind)[1:-1]    # side="left"
//	distance = (xind[1:-1] - x[ind-1]) / (x[ind] - x[ind-1])
//	lut = [y1[0], distance*(y0[ind]-y1[ind-1]) + y1[ind-1], y0[-1]]
func buildLUT() [lutSize]RGB {
	const n = len(coolwarmData[0])
	var xs [n]float64
	for k := range xs {
		xs[k] = float64(k) / float64(n-1) * (lutSize - 1)
	}
	step := 1.0 / float64(lutSize-1)
	var lut [lutSize]RGB
	for i := range lut {
		var c [3]float64
		for ch, ys := range coolwarmData {
			switch i {
			case 0:
				c[ch] = ys[0]
			case lutSize - 1:
				c[ch] = ys[n-1]
			default:
				xi := (lutSize - 1) * (float64(i) * step)
				j := 0
				for xs[j] < xi { // first j with xs[j] >= xi
					j++
				}
				d := (xi - xs[j-1]) / (xs[j] - xs[j-1])
				c[ch] = float64(d*(ys[j]-ys[j-1])) + ys[j-1] // no FMA: the same colours on every CPU
			}
			c[ch] = min(max(c[ch], 0), 1)
		}
		lut[i] = RGB{c[0], c[1], c[2]}
	}
	return lut
}

// lutIndex follows matplotlib's Colormap.__call__ for float input: scale by
// N, map exactly 1.0 to the last entry (it is in range, not "over"), truncate
// toward zero, and send under/over-range values to the end entries (the
// default under/over colours). NaN is the caller's business.
func lutIndex(x float64) int {
	xa := x * lutSize
	switch {
	case xa == lutSize:
		return lutSize - 1
	case xa < 0:
		return 0
	case xa >= lutSize:
		return lutSize - 1
	}
	return int(xa)
}

// Coolwarm returns matplotlib's coolwarm colour at position x in [0, 1]
// (0 = blue, 0.5 = neutral grey, 1 = red), i.e. cm.coolwarm(x)[:3].
// Values outside [0, 1] are clipped. NaN yields NaNColor.
func Coolwarm(x float64) RGB {
	if x != x {
		return NaNColor
	}
	return coolwarmLUT[lutIndex(x)]
}
