package ridgegd

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/randstream"
)

// Method is how each node privatizes its gradient.
type Method string

const (
	// MethodNone releases the exact mean gradient (no privacy).
	MethodNone Method = "none"
	// MethodRGM releases ḡ + N(0, (γ‖ḡ‖² + σ²)I) (Appendix C.2), with
	// (γ, σ) from Theorem 1 for the node's PTR-certified (η, R_rel).
	MethodRGM Method = "rgm"
	// MethodClip clips every per-example gradient to norm c and adds
	// N(0, σ²I) to their mean (Appendix C.1).
	MethodClip Method = "clip"
)

// ClipNoise selects σ for MethodClip.
type ClipNoise string

const (
	// ClipNoiseEq82 is the paper's eq. (82), σ² = αc²/(εN²). Under
	// replace-one neighbours (sensitivity 2c/N of the mean, the adjacency of
	// Definition 2) its RDP at α is 2ε; under add/remove (c/N) it is ε/2.
	ClipNoiseEq82 ClipNoise = "eq82"
	// ClipNoiseReplaceOne is σ² = 2αc²/(εN²): exactly (α, ε)-RDP per step for
	// replace-one neighbours, the adjacency the RGM is accounted with.
	ClipNoiseReplaceOne ClipNoise = "replace-one"
)

// Config configures Run.
type Config struct {
	Method     Method
	Iterations int
	// Epsilon and Alpha are the per-step, per-node RDP target (ε at order α).
	Epsilon, Alpha float64

	// ClipFactor scales the clipping threshold c_j = max_i‖∇f_ji(θ_j*)‖
	// (the per-example gradients at node j's local optimum): 1, 10, 0.1 in
	// the paper. ClipNoise selects σ ("" means eq82).
	ClipFactor float64
	ClipNoise  ClipNoise
	// ClipThreshold selects c_j ("" means max, the paper's text;
	// frobenius is the authors' code).
	ClipThreshold ClipThreshold

	// RGM: Constants for η and R_rel ("" means rigorous); Rho is the PTR
	// proposal ρ with C = Ã of the node (the paper's choice, ρ = 1/2; 0
	// means 1/2); PTREpsilon and PTRDelta are the test's (ε, δ), paid once
	// for the whole run (0 means 1 and 1e-10: the test then needs
	// Δ₊ ≳ 23, which a 13,609-row node of the label split meets, whereas
	// ε = 0.1 would need Δ₊ ≳ 230). R_c is set just high enough that no row
	// is clipped (Section 6).
	Constants  Constants
	Rho        float64
	PTREpsilon float64
	PTRDelta   float64
	// RGMNoise selects the RGM's noise ("" means theorem1; authors is the
	// authors' code's formula, with no proven guarantee).
	RGMNoise RGMNoise

	// StepSize τ; 0 means 0.5 / max_j λ_max(A_j) (Appendix C).
	StepSize float64
}

// NodeReport describes how one node privatized its gradient.
type NodeReport struct {
	N         int     `json:"n"`
	LambdaMax float64 `json:"lambda_max"`
	// Clipping: threshold c and noise standard deviation σ.
	ClipThreshold float64 `json:"clip_threshold,omitempty"`
	NoiseSigma    float64 `json:"noise_sigma,omitempty"`
	// RGM: sensitivity constants, PTR outcome and mechanism parameters.
	Sensitivity *Sensitivity `json:"sensitivity,omitempty"`
	PTR         *PTRResult   `json:"ptr,omitempty"`
	// Mechanism is the per-step mechanism and StepRDP its RDP at Alpha
	// (Bound names the bound used); nil for MethodNone.
	Mechanism *privacy.Spec     `json:"mechanism,omitempty"`
	StepRDP   *privacy.RDPValue `json:"step_rdp,omitempty"`
	// Guarantee is set when the node's release has no proven guarantee
	// (RGMNoiseAuthors: AuthorsNoiseGuarantee); Mechanism and StepRDP are
	// then nil.
	Guarantee string `json:"guarantee,omitempty"`
	// NoiseScale is RGMNoiseAuthors' √(α/ε): the noise std is
	// NoiseScale·(η‖g‖ + R_rel).
	NoiseScale float64 `json:"noise_scale,omitempty"`
}

// Result is one run of Run.
type Result struct {
	// Gap[t] is f(θ_t) − f* for t = 0..Iterations.
	Gap      []float64    `json:"gap"`
	FStar    float64      `json:"f_star"`
	StepSize float64      `json:"step_size"`
	Theta    []float64    `json:"theta"`
	Nodes    []NodeReport `json:"nodes"`
}

// node is one node's state during Run.
type node struct {
	ridge *Ridge
	quad  *Quadratic // of the data the gradient is computed on
	rgm   privacy.RGM
	// authors: RGMNoiseAuthors' std scale·(η‖g‖ + R_rel), with
	// (η, R_rel) in rgm.Eta and rgm.RRel.
	authors bool
	scale   float64
	c       float64 // clipping threshold
	sigma   float64 // clipping noise std
	xx      []float64
	rng     *rand.Rand
}

// Run performs Iterations steps of θ_{t+1} = θ_t − τ·(1/k)Σ_j g_t^{(j)} from
// θ_0 = 0, each node j releasing g_t^{(j)} as cfg.Method says, and records
// the optimality gap of the mean objective (1/k)Σ_j f_j. All randomness
// (PTR, noise) derives from seed; the result is deterministic.
func Run(nodes []*Ridge, cfg Config, seed uint64) (*Result, error) {
	if len(nodes) == 0 {
		return nil, fmt.Errorf("ridgegd: no nodes")
	}
	if cfg.Iterations < 0 {
		return nil, fmt.Errorf("ridgegd: iterations must be ≥ 0, got %d", cfg.Iterations)
	}
	if cfg.Method != MethodNone {
		if !(cfg.Epsilon > 0) || math.IsInf(cfg.Epsilon, 0) {
			return nil, fmt.Errorf("ridgegd: per-step ε must be finite and > 0, got %v", cfg.Epsilon)
		}
		if !(cfg.Alpha > 1) || math.IsInf(cfg.Alpha, 0) {
			return nil, fmt.Errorf("ridgegd: RDP order α must be finite and > 1, got %v", cfg.Alpha)
		}
	}
	d := nodes[0].Data.D
	quads := make([]*Quadratic, len(nodes))
	res := &Result{Nodes: make([]NodeReport, len(nodes))}
	lmax := 0.0
	for j, r := range nodes {
		if r.Data.D != d {
			return nil, fmt.Errorf("ridgegd: node %d has dimension %d, want %d", j, r.Data.D, d)
		}
		quads[j] = r.Quadratic()
		l, err := quads[j].MaxEigen()
		if err != nil {
			return nil, fmt.Errorf("ridgegd: node %d: %w", j, err)
		}
		res.Nodes[j] = NodeReport{N: r.Data.N, LambdaMax: l}
		lmax = math.Max(lmax, l)
	}
	obj, err := NewObjective(quads)
	if err != nil {
		return nil, err
	}
	res.FStar = obj.FStar
	tau := cfg.StepSize
	if tau == 0 {
		tau = 0.5 / lmax
	}
	if !(tau > 0) || math.IsInf(tau, 0) {
		return nil, fmt.Errorf("ridgegd: step size must be finite and > 0, got %v", tau)
	}
	res.StepSize = tau

	st := make([]*node, len(nodes))
	for j, r := range nodes {
		st[j] = &node{ridge: r, quad: quads[j], rng: randstream.FromSeed(seed).Stream("ridgegd-noise", uint64(j))}
		var err error
		switch cfg.Method {
		case MethodNone:
		case MethodRGM:
			err = setupRGM(st[j], &res.Nodes[j], cfg, randstream.FromSeed(seed).Stream("ridgegd-ptr", uint64(j)))
		case MethodClip:
			err = setupClip(st[j], &res.Nodes[j], cfg)
		default:
			err = fmt.Errorf("unknown method %q (want none, rgm or clip)", cfg.Method)
		}
		if err != nil {
			return nil, fmt.Errorf("ridgegd: node %d: %w", j, err)
		}
	}

	theta := make([]float64, d)
	g := make([]float64, d)
	sum := make([]float64, d)
	res.Gap = make([]float64, 0, cfg.Iterations+1)
	res.Gap = append(res.Gap, obj.Gap(theta))
	for t := 0; t < cfg.Iterations; t++ {
		for k := range sum {
			sum[k] = 0
		}
		for j, n := range st {
			if err := n.release(cfg.Method, theta, g); err != nil {
				return nil, fmt.Errorf("iteration %d, node %d: %w", t, j, err)
			}
			for k := range sum {
				sum[k] += g[k]
			}
		}
		step := tau / float64(len(st))
		for k := range theta {
			theta[k] -= step * sum[k]
		}
		res.Gap = append(res.Gap, obj.Gap(theta))
	}
	res.Theta = theta
	return res, nil
}

// release writes node n's privatized gradient at θ into g.
func (n *node) release(m Method, theta, g []float64) error {
	switch m {
	case MethodNone:
		n.quad.Grad(theta, g)
	case MethodRGM:
		n.quad.Grad(theta, g)
		if n.authors {
			norm := math.Sqrt(dot(g, g))
			if math.IsNaN(norm) || math.IsInf(norm, 0) {
				return fmt.Errorf("RGM: the released vector is not finite (NaN/Inf)")
			}
			std := n.scale * (n.rgm.Eta*norm + n.rgm.RRel)
			for k := range g {
				g[k] += std * n.rng.NormFloat64()
			}
			return nil
		}
		return aggregate.AddRGMNoise(n.rgm, g, n.rng)
	case MethodClip:
		n.clippedMean(theta, g)
		for k := range g {
			g[k] += n.sigma * n.rng.NormFloat64()
		}
	}
	return nil
}

// clippedMean writes (1/N)Σ_i ∇f_i(θ)·min(1, c/‖∇f_i(θ)‖) into g, using
// ‖∇f_i‖² = e²‖x_i‖² + 2eμ x_iᵀu + μ²‖u‖² with e = x_iᵀu − y_i, u = θ − B.
func (n *node) clippedMean(theta, g []float64) {
	r := n.ridge
	d := r.Data.D
	u := make([]float64, d)
	r.centre(theta, u)
	mu := r.MuReg
	uu := dot(u, u)
	c2 := n.c * n.c
	for k := range g {
		g[k] = 0
	}
	var ssum float64
	for i := 0; i < r.Data.N; i++ {
		x := r.Data.X[i*d : (i+1)*d]
		xu := dot(x, u)
		e := xu - r.Data.Y[i]
		n2 := e*e*n.xx[i] + 2*e*mu*xu + mu*mu*uu
		s := 1.0
		if n2 > c2 {
			s = n.c / math.Sqrt(n2)
		}
		ssum += s
		a := s * e
		for k, v := range x {
			g[k] += a * v
		}
	}
	inv := 1 / float64(r.Data.N)
	for k := range g {
		g[k] = (g[k] + mu*ssum*u[k]) * inv
	}
}

// setupClip sets c_j = ClipFactor·max_i‖∇f_ji(θ_j*)‖ (or, with
// ClipThresholdFrobenius, ClipFactor·√(Σ_i‖∇f_ji(θ_j*)‖²)) and σ
// (Appendix C.1).
func setupClip(n *node, rep *NodeReport, cfg Config) error {
	if !(cfg.ClipFactor > 0) || math.IsInf(cfg.ClipFactor, 0) {
		return fmt.Errorf("clip factor must be finite and > 0, got %v", cfg.ClipFactor)
	}
	r := n.ridge
	opt, err := n.quad.Minimizer()
	if err != nil {
		return err
	}
	gi := make([]float64, r.Data.D)
	norms2 := make([]float64, r.Data.N)
	n.xx = make([]float64, r.Data.N)
	for i := 0; i < r.Data.N; i++ {
		x := r.Data.Row(i)
		n.xx[i] = dot(x, x)
		r.ExampleGrad(i, opt, gi)
		norms2[i] = dot(gi, gi)
	}
	cmax, err := clipBase(cfg.ClipThreshold, norms2)
	if err != nil {
		return err
	}
	if !(cmax > 0) {
		return fmt.Errorf("every per-example gradient vanishes at the local optimum; no clipping threshold")
	}
	n.c = cfg.ClipFactor * cmax
	N := float64(r.Data.N)
	switch cfg.ClipNoise {
	case "", ClipNoiseEq82:
		n.sigma = math.Sqrt(cfg.Alpha * n.c * n.c / (cfg.Epsilon * N * N))
	case ClipNoiseReplaceOne:
		n.sigma = math.Sqrt(2 * cfg.Alpha * n.c * n.c / (cfg.Epsilon * N * N))
	default:
		return fmt.Errorf("unknown clip noise %q (want eq82 or replace-one)", cfg.ClipNoise)
	}
	rep.ClipThreshold = n.c
	rep.NoiseSigma = n.sigma
	// Noise multiplier relative to the replace-one sensitivity 2c/N.
	mech := privacy.Gaussian{Sigma: n.sigma * N / (2 * n.c)}
	spec := mech.Spec()
	v, err := mech.RDP(cfg.Alpha)
	if err != nil {
		return err
	}
	rep.Mechanism, rep.StepRDP = &spec, &v
	return nil
}

// setupRGM runs the Section 6 / Appendix C.2 pipeline on one node: C = A of
// the node, R_c just large enough that no row is clipped (Proposition 1),
// the PTR test of Proposition 2 for ρ, the constants (η, R_rel), and (γ, σ)
// from Theorem 1 for the per-step target (ε, α) — or, with RGMNoiseAuthors,
// the authors' code's unproven std √(α/ε)(η‖g‖ + R_rel) instead of (γ, σ).
//
// Note, as the paper does (end of Appendix C.2): choosing C and R_c from the
// node's own data is not itself private; the released gradients are private
// given these public choices.
func setupRGM(n *node, rep *NodeReport, cfg Config, ptrRNG *rand.Rand) error {
	r := n.ridge
	rho := cfg.Rho
	if rho == 0 {
		rho = 0.5
	}
	consts := cfg.Constants
	if consts == "" {
		consts = ConstantsRigorous
	}
	pe, pd := cfg.PTREpsilon, cfg.PTRDelta
	if pe == 0 {
		pe = 1
	}
	if pd == 0 {
		pd = 1e-10
	}
	c := mat.NewSymDense(r.Data.D, nil)
	c.CopySym(n.quad.A)
	scores, err := FeatureScores(r.Data, c, ClipProp1)
	if err != nil {
		return err
	}
	var rc float64
	for _, s := range scores {
		rc = math.Max(rc, s)
	}
	rc *= 1 + 1e-12 // no row is clipped
	clipped, nclip, err := ClipFeatures(r.Data, c, rc, ClipProp1)
	if err != nil {
		return err
	}
	if nclip != 0 {
		return fmt.Errorf("internal: %d rows clipped at the maximal radius", nclip)
	}
	cr, err := NewRidge(clipped, r.MuReg, r.Shift)
	if err != nil {
		return err
	}
	n.quad = cr.Quadratic()
	ptr, err := PTRTest(clipped, n.quad.A, c, rho, pe, pd, ptrRNG)
	if err != nil {
		return err
	}
	rep.PTR = &ptr
	if !ptr.Passed {
		return fmt.Errorf("PTR test of Proposition 2 rejected ρ = %v (Δ₊ = %d, Δ̂ = %.4g ≤ −log(δ)/ε = %.4g): abort",
			rho, ptr.DeltaPlus, ptr.DeltaHat, ptr.Threshold)
	}
	sens, err := RelativeSensitivity(clipped, rc, rho, consts)
	if err != nil {
		return err
	}
	rep.Sensitivity = &sens
	switch cfg.RGMNoise {
	case "", RGMNoiseTheorem1:
	case RGMNoiseAuthors:
		// The authors' code's formula: no (γ, σ), no RDP claim.
		n.authors = true
		n.scale = math.Sqrt(cfg.Alpha / cfg.Epsilon)
		n.rgm = privacy.RGM{Eta: sens.Eta, RRel: sens.RRel, Dim: r.Data.D}
		rep.Guarantee, rep.NoiseScale = AuthorsNoiseGuarantee, n.scale
		return nil
	default:
		return fmt.Errorf("unknown RGM noise %q (want %q or %q)", cfg.RGMNoise, RGMNoiseTheorem1, RGMNoiseAuthors)
	}
	m, err := privacy.CalibrateRGM(cfg.Epsilon, cfg.Alpha, sens.Eta, sens.RRel, r.Data.D)
	if err != nil {
		return err
	}
	n.rgm = m
	spec := m.Spec()
	v, err := m.RDP(cfg.Alpha)
	if err != nil {
		return err
	}
	if !v.Valid {
		return fmt.Errorf("internal: calibrated RGM invalid at α = %v (%s)", cfg.Alpha, v.Bound)
	}
	rep.Mechanism, rep.StepRDP = &spec, &v
	return nil
}
