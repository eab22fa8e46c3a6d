package ridgegd

import (
	"fmt"
	"math"
)

// Constants selects how the relative-sensitivity constants are computed.
type Constants string

const (
	// ConstantsRigorous keeps every constant of eq. (10) and Proposition 1:
	//
	//	η = √6 R_c²/(ρn),  R_rel = √2 η‖b‖ + 2√3 max_i‖x_i y_i‖/n,
	//
	// where b = (1/n) Σ x_i y_i. R_rel follows from the last term of eq. (10),
	// 3‖(A_0 − A_0')A⁻¹b − x_0y_0 + x_0'y_0'‖²/n², with ‖A_0A⁻¹‖ ≤ R_c²/ρ.
	ConstantsRigorous Constants = "rigorous"
	// ConstantsPaper is Appendix C.2 as the paper ran it ("we omit constant
	// factors when estimating η"): η = R_c²/n with R_c⁴ read off the node's
	// own data through eq. (11), and R_rel = η‖b‖ + 2 max_i‖x_i y_i‖/n.
	// It is not a proven bound: use it only to reproduce the paper.
	ConstantsPaper Constants = "paper"
)

// Sensitivity is a node's (η, R_rel) relative L2 sensitivity (Definition 2)
// of its mean gradient, and how it was obtained.
type Sensitivity struct {
	Eta       float64   `json:"eta"`
	RRel      float64   `json:"r_rel"`
	Rc        float64   `json:"r_c"`
	Rho       float64   `json:"rho"`
	N         int       `json:"n"`
	BNorm     float64   `json:"b_norm"`
	MaxXY     float64   `json:"max_xy"`
	Constants Constants `json:"constants"`
}

// RelativeSensitivity returns the constants for the mean gradient of a
// node's ridge objective over the (already clipped) data, given the clipping
// radius R_c and the PTR-certified ρ with Ã ⪰ ρC (Proposition 1).
func RelativeSensitivity(data *Data, rc, rho float64, consts Constants) (Sensitivity, error) {
	if data == nil {
		return Sensitivity{}, fmt.Errorf("ridgegd: sensitivity needs data")
	}
	if !(rc > 0) || math.IsInf(rc, 0) || !(rho > 0) || math.IsInf(rho, 0) {
		return Sensitivity{}, fmt.Errorf("ridgegd: sensitivity needs finite R_c > 0 and ρ > 0, got %v and %v", rc, rho)
	}
	n := float64(data.N)
	b := make([]float64, data.D)
	var maxXY float64
	for i := 0; i < data.N; i++ {
		x := data.Row(i)
		y := data.Y[i]
		for k, v := range x {
			b[k] += v * y
		}
		maxXY = math.Max(maxXY, math.Sqrt(dot(x, x))*math.Abs(y))
	}
	for k := range b {
		b[k] /= n
	}
	s := Sensitivity{Rc: rc, Rho: rho, N: data.N, BNorm: math.Sqrt(dot(b, b)), MaxXY: maxXY, Constants: consts}
	switch consts {
	case ConstantsRigorous:
		s.Eta = math.Sqrt(6) * rc * rc / (rho * n)
		s.RRel = math.Sqrt2*s.Eta*s.BNorm + 2*math.Sqrt(3)*maxXY/n
	case ConstantsPaper:
		s.Eta = rc * rc / n
		s.RRel = s.Eta*s.BNorm + 2*maxXY/n
	default:
		return Sensitivity{}, fmt.Errorf("ridgegd: unknown sensitivity constants %q (want %q or %q)", consts, ConstantsRigorous, ConstantsPaper)
	}
	return s, nil
}
