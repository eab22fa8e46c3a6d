package ridgegd

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Data is a regression dataset of N rows with D features each.
type Data struct {
	// X holds the features, N × D row-major.
	X []float64
	// Y holds the targets (len N).
	Y []float64
	// N and D are the number of rows and of features.
	N, D int
}

// NewData checks the shapes and that every value is finite, and wraps x and
// y (not copied).
func NewData(x, y []float64, d int) (*Data, error) {
	if d < 1 {
		return nil, fmt.Errorf("ridgegd: feature dimension must be ≥ 1, got %d", d)
	}
	if len(x)%d != 0 || len(x)/d != len(y) {
		return nil, fmt.Errorf("ridgegd: %d feature values and %d targets do not form rows of %d features", len(x), len(y), d)
	}
	if len(y) == 0 {
		return nil, fmt.Errorf("ridgegd: empty dataset")
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("ridgegd: feature %d of row %d is %v", i%d, i/d, v)
		}
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("ridgegd: target of row %d is %v", i, v)
		}
	}
	return &Data{X: x, Y: y, N: len(y), D: d}, nil
}

// Row returns the features of row i (a view).
func (s *Data) Row(i int) []float64 { return s.X[i*s.D : (i+1)*s.D] }

// Subset returns a copy of the rows idx, in that order.
func (s *Data) Subset(idx []int) *Data {
	out := &Data{X: make([]float64, 0, len(idx)*s.D), Y: make([]float64, 0, len(idx)), N: len(idx), D: s.D}
	for _, i := range idx {
		out.X = append(out.X, s.Row(i)...)
		out.Y = append(out.Y, s.Y[i])
	}
	return out
}

// Ridge is one node's ridge-regression objective (eq. (9) of the paper),
// optionally shifted by a public vector B ("bias" heterogeneity, Section 6):
//
//	f(θ) = (1/n) Σ_i ½(x_iᵀ(θ−B) − y_i)² + (μ/2)‖θ−B‖².
//
// With B = 0 (nil) it is the plain ridge objective. Example i's loss is
// f_i(θ) = ½(x_iᵀ(θ−B) − y_i)² + (μ/2)‖θ−B‖², so f is their mean.
type Ridge struct {
	Data  *Data
	MuReg float64
	Shift []float64
}

// NewRidge validates μ ≥ 0 and the shift's length.
func NewRidge(data *Data, muReg float64, shift []float64) (*Ridge, error) {
	if data == nil {
		return nil, fmt.Errorf("ridgegd: nil data")
	}
	if !(muReg >= 0) || math.IsInf(muReg, 0) {
		return nil, fmt.Errorf("ridgegd: regularization μ must be finite and ≥ 0, got %v", muReg)
	}
	if shift != nil && len(shift) != data.D {
		return nil, fmt.Errorf("ridgegd: shift has length %d, want %d", len(shift), data.D)
	}
	return &Ridge{Data: data, MuReg: muReg, Shift: shift}, nil
}

// centre writes u = θ − B into u.
func (r *Ridge) centre(theta, u []float64) {
	copy(u, theta)
	if r.Shift != nil {
		for k := range u {
			u[k] -= r.Shift[k]
		}
	}
}

// Loss evaluates f(θ) by summing over the examples.
func (r *Ridge) Loss(theta []float64) float64 {
	u := make([]float64, r.Data.D)
	r.centre(theta, u)
	var s float64
	for i := 0; i < r.Data.N; i++ {
		e := dot(r.Data.Row(i), u) - r.Data.Y[i]
		s += 0.5 * e * e
	}
	return s/float64(r.Data.N) + 0.5*r.MuReg*dot(u, u)
}

// ExampleGrad writes ∇f_i(θ) = x_i(x_iᵀu − y_i) + μu, u = θ − B, into out.
func (r *Ridge) ExampleGrad(i int, theta, out []float64) {
	u := out
	r.centre(theta, u)
	x := r.Data.Row(i)
	e := dot(x, u) - r.Data.Y[i]
	for k := range out {
		out[k] = e*x[k] + r.MuReg*u[k]
	}
}

// Quadratic returns f in the form ½uᵀAu − bᵀu + c, u = θ − B, with
// A = (1/n)XᵀX + μI, b = (1/n)Xᵀy and c = (1/2n)Σy².
func (r *Ridge) Quadratic() *Quadratic {
	d, n := r.Data.D, r.Data.N
	a := make([]float64, d*d)
	b := make([]float64, d)
	var c float64
	for i := 0; i < n; i++ {
		x := r.Data.Row(i)
		y := r.Data.Y[i]
		for p := 0; p < d; p++ {
			xp := x[p]
			if xp == 0 {
				continue
			}
			row := a[p*d : (p+1)*d]
			for q := p; q < d; q++ {
				row[q] += xp * x[q]
			}
			b[p] += xp * y
		}
		c += y * y
	}
	inv := 1 / float64(n)
	A := mat.NewSymDense(d, nil)
	for p := 0; p < d; p++ {
		for q := p; q < d; q++ {
			v := a[p*d+q] * inv
			if p == q {
				v += r.MuReg
			}
			A.SetSym(p, q, v)
		}
		b[p] *= inv
	}
	var shift []float64
	if r.Shift != nil {
		shift = append([]float64(nil), r.Shift...)
	}
	return &Quadratic{A: A, B: b, C: 0.5 * c * inv, Shift: shift}
}

// Quadratic is q(θ) = ½uᵀAu − bᵀu + c with u = θ − Shift (Shift nil: 0).
type Quadratic struct {
	A     *mat.SymDense
	B     []float64
	C     float64
	Shift []float64
}

// Dim returns the dimension of θ.
func (q *Quadratic) Dim() int { return len(q.B) }

func (q *Quadratic) centre(theta []float64) []float64 {
	u := append([]float64(nil), theta...)
	if q.Shift != nil {
		for k := range u {
			u[k] -= q.Shift[k]
		}
	}
	return u
}

// Value returns q(θ).
func (q *Quadratic) Value(theta []float64) float64 {
	u := q.centre(theta)
	au := q.mulA(u)
	return 0.5*dot(u, au) - dot(q.B, u) + q.C
}

// Grad writes ∇q(θ) = A(θ − Shift) − b into out.
func (q *Quadratic) Grad(theta, out []float64) {
	u := q.centre(theta)
	au := q.mulA(u)
	for k := range out {
		out[k] = au[k] - q.B[k]
	}
}

func (q *Quadratic) mulA(u []float64) []float64 {
	var v mat.VecDense
	v.MulVec(q.A, mat.NewVecDense(len(u), u))
	return append([]float64(nil), v.RawVector().Data...)
}

// Minimizer returns Shift + A⁻¹b (Cholesky); it fails if A is not positive
// definite.
func (q *Quadratic) Minimizer() ([]float64, error) {
	var ch mat.Cholesky
	if !ch.Factorize(q.A) {
		return nil, fmt.Errorf("ridgegd: curvature matrix is not positive definite")
	}
	var x mat.VecDense
	if err := ch.SolveVecTo(&x, mat.NewVecDense(len(q.B), append([]float64(nil), q.B...))); err != nil {
		return nil, fmt.Errorf("ridgegd: solving for the minimizer: %w", err)
	}
	out := append([]float64(nil), x.RawVector().Data...)
	if q.Shift != nil {
		for k := range out {
			out[k] += q.Shift[k]
		}
	}
	return out, nil
}

// MaxEigen returns λ_max(A).
func (q *Quadratic) MaxEigen() (float64, error) {
	var e mat.EigenSym
	if !e.Factorize(q.A, false) {
		return 0, fmt.Errorf("ridgegd: eigendecomposition failed")
	}
	v := e.Values(nil)
	return v[len(v)-1], nil
}

// Objective is the servers' objective, the mean (1/k) Σ_j q_j of the nodes'
// quadratics: gradient descent on the averaged node gradients minimizes it.
type Objective struct {
	Parts []*Quadratic
	// A is (1/k) Σ A_j, the Hessian; Theta is the minimizer and FStar the
	// minimum.
	A     *mat.SymDense
	Theta []float64
	FStar float64
}

// NewObjective forms the mean of parts and solves for its minimizer:
// (Σ A_j)θ* = Σ (b_j + A_j B_j).
func NewObjective(parts []*Quadratic) (*Objective, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("ridgegd: objective needs at least one node")
	}
	d := parts[0].Dim()
	A := mat.NewSymDense(d, nil)
	rhs := make([]float64, d)
	for _, p := range parts {
		if p.Dim() != d {
			return nil, fmt.Errorf("ridgegd: node dimensions differ (%d vs %d)", p.Dim(), d)
		}
		A.AddSym(A, p.A)
		for k := range rhs {
			rhs[k] += p.B[k]
		}
		if p.Shift != nil {
			as := p.mulA(p.Shift)
			for k := range rhs {
				rhs[k] += as[k]
			}
		}
	}
	A.ScaleSym(1/float64(len(parts)), A)
	for k := range rhs {
		rhs[k] /= float64(len(parts))
	}
	q := &Quadratic{A: A, B: rhs}
	theta, err := q.Minimizer()
	if err != nil {
		return nil, err
	}
	o := &Objective{Parts: parts, A: A, Theta: theta}
	o.FStar = o.Value(theta)
	return o, nil
}

// Value returns (1/k) Σ_j q_j(θ).
func (o *Objective) Value(theta []float64) float64 {
	var s float64
	for _, p := range o.Parts {
		s += p.Value(theta)
	}
	return s / float64(len(o.Parts))
}

// Gap returns f(θ) − f*, computed as ½(θ−θ*)ᵀA(θ−θ*) (exact for a
// quadratic and free of cancellation).
func (o *Objective) Gap(theta []float64) float64 {
	u := make([]float64, len(theta))
	for k := range u {
		u[k] = theta[k] - o.Theta[k]
	}
	q := &Quadratic{A: o.A, B: make([]float64, len(u))}
	return 0.5 * dot(u, q.mulA(u))
}

func dot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}
