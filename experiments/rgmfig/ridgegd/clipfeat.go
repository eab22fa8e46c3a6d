package ridgegd

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// ClipRule selects how a feature vector's size is measured against the
// clipping radius R_c, given a positive-definite matrix C.
type ClipRule int

const (
	// ClipProp1 is Proposition 1: score (‖x‖² xᵀC⁻²x)^{1/4}, which gives
	// ‖x̃x̃ᵀ Ã⁻¹‖ ≤ R_c²/ρ whenever Ã ⪰ ρC.
	ClipProp1 ClipRule = iota
	// ClipProp3 is the variant of Proposition 3: score (xᵀC⁻¹x)^{1/2}, suited
	// to Gaussian features with C = Σ (it costs a factor κ_C in η²).
	ClipProp3
)

// String names the rule.
func (r ClipRule) String() string {
	switch r {
	case ClipProp1:
		return "prop1"
	case ClipProp3:
		return "prop3"
	}
	return fmt.Sprintf("ClipRule(%d)", int(r))
}

// FeatureScores returns, for every row x_i of data, the score that the rule
// compares with R_c (see ClipRule). C must be symmetric positive definite.
func FeatureScores(data *Data, c *mat.SymDense, rule ClipRule) ([]float64, error) {
	if data == nil || c == nil {
		return nil, fmt.Errorf("ridgegd: feature scores need data and C")
	}
	if r, _ := c.Dims(); r != data.D {
		return nil, fmt.Errorf("ridgegd: C is %d×%d, features have dimension %d", r, r, data.D)
	}
	if rule != ClipProp1 && rule != ClipProp3 {
		return nil, fmt.Errorf("ridgegd: unknown clipping rule %v", rule)
	}
	var ch mat.Cholesky
	if !ch.Factorize(c) {
		return nil, fmt.Errorf("ridgegd: clipping matrix C is not positive definite")
	}
	scores := make([]float64, data.N)
	var v mat.VecDense
	for i := 0; i < data.N; i++ {
		x := data.Row(i)
		if err := ch.SolveVecTo(&v, mat.NewVecDense(data.D, append([]float64(nil), x...))); err != nil {
			return nil, fmt.Errorf("ridgegd: solving with C: %w", err)
		}
		cx := v.RawVector().Data // C⁻¹x
		switch rule {
		case ClipProp1:
			scores[i] = math.Sqrt(math.Sqrt(dot(x, x) * dot(cx, cx)))
		case ClipProp3:
			scores[i] = math.Sqrt(math.Max(0, dot(x, cx)))
		}
	}
	return scores, nil
}

// ClipFeatures returns the clipped dataset x̃_i = R_c x_i / max(R_c, score_i)
// (Proposition 1 or 3) and how many rows were shrunk. Targets are copied
// unchanged.
func ClipFeatures(data *Data, c *mat.SymDense, rc float64, rule ClipRule) (*Data, int, error) {
	if !(rc > 0) || math.IsInf(rc, 0) {
		return nil, 0, fmt.Errorf("ridgegd: clipping radius R_c must be finite and > 0, got %v", rc)
	}
	scores, err := FeatureScores(data, c, rule)
	if err != nil {
		return nil, 0, err
	}
	out := &Data{X: append([]float64(nil), data.X...), Y: append([]float64(nil), data.Y...), N: data.N, D: data.D}
	clipped := 0
	for i, s := range scores {
		if s > rc {
			clipped++
			f := rc / s
			row := out.Row(i)
			for k := range row {
				row[k] *= f
			}
		}
	}
	return out, clipped, nil
}
