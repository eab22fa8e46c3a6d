package aggregate

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// GeoMed is the geometric median argmin_z Σ_i ‖g_i − z‖, computed by
// smoothed Weiszfeld iterations from the mean: z ← Σ w_i g_i / Σ w_i with
// w_i = 1/max(ν, ‖g_i − z‖), stopping when a step is shorter than
// Tol·max(R, 1) or after MaxIter iterations (defaults ν = 1e-6·max(R, 1),
// Tol = 1e-6, MaxIter = 100). It is released on the sum scale as m·z
// (0 for an empty batch). Cost O(iterations·m·P).
//
// Sensitivity: although its breakdown point is ½, one added gradient can
// move the geometric median of a balanced two-cluster batch by order R, so
// the sum-scale release moves by order mR; the rule is offered only
// non-privately (σ = 0).
type GeoMed struct {
	clipNorm
	nu, tol float64
	maxIter int
	z, zn   []float64
	w       []float64
}

// GeoMedOptions are geomed's settings (Config.Sigma, ClipNorm, Smoothing, MaxIter, Tol); the
// rule is non-private, so σ must be 0.
type GeoMedOptions struct {
	// Sigma must be 0 (see GeoMed's sensitivity).
	Sigma float64
	// ClipNorm is R, the L2 bound of every gradient (0: not clipped).
	ClipNorm float64
	// Smoothing is ν (0: 1e-6·max(R, 1)).
	Smoothing float64
	// MaxIter bounds the Weiszfeld iterations (0: 100).
	MaxIter int
	// Tol is the stopping tolerance relative to max(R, 1) (0: 1e-6).
	Tol float64
}

func geoMedOptions(c Config) GeoMedOptions {
	return GeoMedOptions{Sigma: c.Sigma, ClipNorm: c.ClipNorm, Smoothing: c.Smoothing, MaxIter: c.MaxIter, Tol: c.Tol}
}

// Validate checks R, σ = 0 and the iteration settings (zero: defaults).
func (o GeoMedOptions) Validate() error {
	if err := checkNoise(o.Sigma, o.ClipNorm); err != nil {
		return err
	}
	if err := nonPrivateOnly(o.Sigma, "one gradient can move the geometric median by order R, the sum-scale release by order mR"); err != nil {
		return err
	}
	switch {
	case o.Smoothing != 0 && (!(o.Smoothing > 0) || math.IsInf(o.Smoothing, 0)):
		return fmt.Errorf("smoothing ν must be finite and > 0, got %v", o.Smoothing)
	case o.Tol != 0 && (!(o.Tol > 0) || math.IsInf(o.Tol, 0)):
		return fmt.Errorf("tolerance must be finite and > 0, got %v", o.Tol)
	case o.MaxIter < 0:
		return fmt.Errorf("max iterations must be > 0, got %d", o.MaxIter)
	}
	return nil
}

// NewGeoMed returns the geomed rule for validated options o (zero
// settings take their defaults).
func NewGeoMed(o GeoMedOptions) (*GeoMed, error) {
	scale := math.Max(o.ClipNorm, 1)
	a := &GeoMed{clipNorm: clipNorm(o.ClipNorm), nu: o.Smoothing, tol: o.Tol, maxIter: o.MaxIter}
	if a.nu == 0 {
		a.nu = 1e-6 * scale
	}
	if a.tol == 0 {
		a.tol = 1e-6
	}
	a.tol *= scale
	if a.maxIter == 0 {
		a.maxIter = 100
	}
	return a, nil
}

// Name returns "geomed".
func (a *GeoMed) Name() string { return "geomed" }

// Aggregate writes m times the geometric median into out.
func (a *GeoMed) Aggregate(g Grads, _ *rand.Rand, out []float32) (Report, error) {
	if err := checkGrads(g, out, false, 0); err != nil {
		return Report{}, fmt.Errorf("geomed: %w", err)
	}
	m, p := g.M, g.P
	if m == 0 {
		clear(out)
		return Report{}, nil
	}
	if len(a.z) != p {
		a.z, a.zn = make([]float64, p), make([]float64, p)
	}
	if cap(a.w) < m {
		a.w = make([]float64, m)
	}
	a.w = a.w[:m]
	z, zn := a.z, a.zn
	clear(z)
	for i := 0; i < m; i++ {
		for j, v := range row(g, i) {
			z[j] += float64(v)
		}
	}
	for j := range z {
		z[j] /= float64(m)
	}
	for it := 0; it < a.maxIter; it++ {
		ws := 0.0
		for i := 0; i < m; i++ {
			d := 0.0
			for j, v := range row(g, i) {
				x := float64(v) - z[j]
				d += x * x
			}
			a.w[i] = 1 / math.Max(a.nu, math.Sqrt(d))
			ws += a.w[i]
		}
		clear(zn)
		for i := 0; i < m; i++ {
			wi := a.w[i] / ws
			for j, v := range row(g, i) {
				zn[j] += wi * float64(v)
			}
		}
		step := 0.0
		for j := range z {
			x := zn[j] - z[j]
			step += x * x
		}
		z, zn = zn, z
		if math.Sqrt(step) <= a.tol {
			break
		}
	}
	for j := range out {
		out[j] = float32(float64(m) * z[j])
	}
	if err := checkFinite(out); err != nil {
		return Report{}, fmt.Errorf("geomed: %w", err)
	}
	return Report{}, nil
}
