package rgmfig

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"

	"github.com/privtrain/privtrain/experiments/rgmfig/ridgegd"
	"github.com/privtrain/privtrain/randstream"
)

// Curve is one line of a panel: a privatization method and its settings.
type Curve struct {
	// Name is a short identifier used in CSV files ("rgm", "clip-10c", …).
	Name string `json:"name"`
	// Label is the legend text.
	Label string `json:"label"`
	// Method, ClipFactor and Constants configure ridgegd.Run.
	Method     ridgegd.Method    `json:"method"`
	ClipFactor float64           `json:"clip_factor,omitempty"`
	Constants  ridgegd.Constants `json:"constants,omitempty"`
	// RGMNoise is the RGM's noise formula ("": Theorem 1; authors: the
	// authors' code's, with no proven guarantee).
	RGMNoise ridgegd.RGMNoise `json:"rgm_noise,omitempty"`
}

// PaperCurves are the curves of Figure 1 (no noise, RGM, clipping at c, 10c
// and c/10, with c the largest per-example gradient norm at the node's local
// optimum) plus the RGM with the paper's constant-free sensitivity estimate
// (Appendix C.2), drawn dashed.
func PaperCurves() []Curve {
	return []Curve{
		{Name: "none", Label: "No noise", Method: ridgegd.MethodNone},
		{Name: "rgm", Label: "RGM (rigorous consts)", Method: ridgegd.MethodRGM, Constants: ridgegd.ConstantsRigorous},
		{Name: "rgm-paper", Label: "RGM (paper consts)", Method: ridgegd.MethodRGM, Constants: ridgegd.ConstantsPaper},
		{Name: "clip-c", Label: "Clip (c)", Method: ridgegd.MethodClip, ClipFactor: 1},
		{Name: "clip-10c", Label: "Clip high (10c)", Method: ridgegd.MethodClip, ClipFactor: 10},
		{Name: "clip-c10", Label: "Clip low (c/10)", Method: ridgegd.MethodClip, ClipFactor: 0.1},
	}
}

// Config describes a figure: one panel per split, every curve run Runs
// times (run r uses seed Seed+r for both the split and the noise).
type Config struct {
	Title      string              `json:"title"`
	Splits     []ridgegd.SplitKind `json:"splits"`
	Curves     []Curve             `json:"curves"`
	Nodes      int                 `json:"nodes"`
	Warmup     int                 `json:"warmup"`
	Bias       float64             `json:"bias"`
	MuReg      float64             `json:"mu_reg"`
	Epsilon    float64             `json:"epsilon"`
	Alpha      float64             `json:"alpha"`
	Iterations int                 `json:"iterations"`
	Runs       int                 `json:"runs"`
	Seed       uint64              `json:"seed"`
	ClipNoise  ridgegd.ClipNoise   `json:"clip_noise"`
	PTREpsilon float64             `json:"ptr_epsilon"`
	PTRDelta   float64             `json:"ptr_delta"`
	// Protocol names the choices: "text" (the paper's text, Figure1) or
	// "authors" (the authors' public code, Figure1Authors).
	Protocol string `json:"protocol"`
	// ClipThreshold is the rule for the clipping curves' base threshold c
	// ("" or max: the text; frobenius: the authors' code).
	ClipThreshold ridgegd.ClipThreshold `json:"clip_threshold,omitempty"`
	// Workers is the number of runs executed concurrently (≤ 0: 1). The
	// output does not depend on it.
	Workers int `json:"-"`
}

// Figure1 is the paper's Figure 1: ijcnn1, 2 nodes, splits random / label /
// bias, μ_reg = 0.03, per-step RDP ε = 0.1 at α = 2, min/max over 3 runs.
// The paper gives neither the iteration count nor the bias vector: we run
// 300 iterations (every curve has reached its plateau by ~100) and shift
// node 1 by B = 10·(1, …, 1), enough for clipping at c to fail as in the
// paper's right panel.
func Figure1() Config {
	return Config{
		Title:  "ijcnn1, ε = 0.1, α = 2",
		Splits: []ridgegd.SplitKind{ridgegd.SplitRandom, ridgegd.SplitLabel, ridgegd.SplitBias},
		Curves: PaperCurves(), Nodes: 2, Warmup: 50, Bias: 10, MuReg: 0.03,
		Epsilon: 0.1, Alpha: 2, Iterations: 300, Runs: 3, Seed: 1,
		ClipNoise: ridgegd.ClipNoiseEq82, PTREpsilon: 1, PTRDelta: 1e-10,
		Protocol: ProtocolText, ClipThreshold: ridgegd.ClipThresholdMax,
	}
}

// Protocols of Figure 1.
const (
	// ProtocolText follows the paper's text (Figure1, AppendixD).
	ProtocolText = "text"
	// ProtocolAuthors follows the authors' public code as the issue-27
	// audit describes it (Figure1Authors, AppendixDAuthors).
	ProtocolAuthors = "authors"
)

// AuthorsCurves are PaperCurves plus the RGM with the authors' code's noise
// formula √(α/ε)(η‖g‖ + R_rel) and the paper's constants, which Theorem 1
// does not cover (no proven guarantee; labelled so in the legend).
func AuthorsCurves() []Curve {
	return append(PaperCurves(), Curve{Name: "rgm-authors", Label: "RGM (authors' formula, unproven)",
		Method: ridgegd.MethodRGM, Constants: ridgegd.ConstantsPaper, RGMNoise: ridgegd.RGMNoiseAuthors})
}

// Figure1Authors is Figure 1 under the authors' code's choices, which differ
// from the text (issue 27): the clipping threshold is the norm of the whole
// per-example gradient matrix √(Σ_j‖∇f_ij(θ_i*)‖²) (clip c, 10c, c/10 scale
// it); the RGM curve "rgm-authors" uses their noise std
// √(α/ε)(η‖g‖ + R_rel), not Theorem 1 (the Theorem 1 curves are kept for
// comparison); 40 iterations; bias vector B = 100·1; and the label split
// is ridgegd.SplitLabelOffset (effectively random). Everything else is as
// in Figure1.
func Figure1Authors() Config {
	c := Figure1()
	c.Title = "ijcnn1, ε = 0.1, α = 2 (authors' code protocol)"
	c.Splits = []ridgegd.SplitKind{ridgegd.SplitRandom, ridgegd.SplitLabelOffset, ridgegd.SplitBias}
	c.Curves = AuthorsCurves()
	c.Bias = 100
	c.Iterations = 40
	c.Protocol = ProtocolAuthors
	c.ClipThreshold = ridgegd.ClipThresholdFrobenius
	return c
}

// AppendixDAuthors is AppendixD under the authors' code's choices
// (Figure1Authors at ε = 10⁻³, random split).
func AppendixDAuthors() Config {
	return appendixD(Figure1Authors(), "ijcnn1, ε = 0.001, α = 2 (authors' code protocol)")
}

// AppendixD is the ijcnn1 panel of the paper's Figure 2 (Appendix D): the
// random split of Figure 1 at ε = 10⁻³.
func AppendixD() Config {
	return appendixD(Figure1(), "ijcnn1, ε = 0.001, α = 2")
}

// appendixD turns a Figure 1 configuration into the Appendix D panel: the
// random split at ε = 10⁻³.
func appendixD(c Config, title string) Config {
	c.Title = title
	c.Splits = []ridgegd.SplitKind{ridgegd.SplitRandom}
	c.Epsilon = 1e-3
	return c
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case len(c.Splits) == 0 || len(c.Curves) == 0:
		return fmt.Errorf("rgmfig: need at least one split and one curve")
	case c.Runs < 1 || c.Iterations < 1:
		return fmt.Errorf("rgmfig: runs and iterations must be ≥ 1, got %d and %d", c.Runs, c.Iterations)
	case !(c.Epsilon > 0) || !(c.Alpha > 1):
		return fmt.Errorf("rgmfig: need ε > 0 and α > 1, got %v and %v", c.Epsilon, c.Alpha)
	}
	return nil
}

// CurveResult holds one curve's runs.
type CurveResult struct {
	Curve Curve `json:"curve"`
	// Gaps[r][t] is f(θ_t) − f* of run r; nil for a run that failed.
	Gaps [][]float64 `json:"-"`
	// Errors[r] is run r's error, "" on success.
	Errors []string `json:"errors,omitempty"`
	// Nodes[r] describes run r's nodes (thresholds, η, PTR, mechanism).
	Nodes [][]ridgegd.NodeReport `json:"nodes"`
	// Succeeded counts the runs that completed. Final* summarize the
	// plateau: the mean gap over the last min(50, T/5) iterations, min /
	// median / max over the successful runs (0 when none succeeded).
	Succeeded   int     `json:"succeeded"`
	FinalMin    float64 `json:"final_min"`
	FinalMedian float64 `json:"final_median"`
	FinalMax    float64 `json:"final_max"`
}

// Panel is one split's curves.
type Panel struct {
	Split  ridgegd.SplitKind `json:"split"`
	Curves []CurveResult     `json:"curves"`
}

// Figure is the result of Run.
type Figure struct {
	Config Config  `json:"config"`
	Panels []Panel `json:"panels"`
}

// SplitRNG returns the random stream that splits the data for a run with the
// given seed (the noise uses ridgegd.Run's own streams from the same seed).
func SplitRNG(seed uint64) *rand.Rand {
	return randstream.FromSeed(seed).Stream("rgm-split", 0)
}

// Run computes every panel, curve and run on data. Runs that fail (e.g. a
// PTR rejection or an unachievable ε for the RGM) are recorded in
// CurveResult.Errors rather than aborting the figure.
func Run(data *ridgegd.Data, cfg Config) (*Figure, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if data == nil {
		return nil, fmt.Errorf("rgmfig: nil data")
	}
	fig := &Figure{Config: cfg, Panels: make([]Panel, len(cfg.Splits))}
	// Node splits, one per (panel, run), shared read-only by the curves.
	splits := make([][][]*ridgegd.Ridge, len(cfg.Splits))
	for p, kind := range cfg.Splits {
		splits[p] = make([][]*ridgegd.Ridge, cfg.Runs)
		for r := 0; r < cfg.Runs; r++ {
			rng := SplitRNG(cfg.Seed + uint64(r))
			nodes, err := ridgegd.Split(data, ridgegd.SplitConfig{Kind: kind, Nodes: cfg.Nodes, Warmup: cfg.Warmup, Bias: cfg.Bias}, cfg.MuReg, rng)
			if err != nil {
				return nil, fmt.Errorf("rgmfig: %s split, run %d: %w", kind, r, err)
			}
			splits[p][r] = nodes
		}
		fig.Panels[p] = Panel{Split: kind, Curves: make([]CurveResult, len(cfg.Curves))}
		for c, cv := range cfg.Curves {
			fig.Panels[p].Curves[c] = CurveResult{Curve: cv, Gaps: make([][]float64, cfg.Runs),
				Errors: make([]string, cfg.Runs), Nodes: make([][]ridgegd.NodeReport, cfg.Runs)}
		}
	}
	type job struct{ p, c, r int }
	jobs := make(chan job)
	workers := max(cfg.Workers, 1)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				cv := cfg.Curves[j.c]
				rc := ridgegd.Config{
					Method: cv.Method, Iterations: cfg.Iterations, Epsilon: cfg.Epsilon, Alpha: cfg.Alpha,
					ClipFactor: cv.ClipFactor, ClipNoise: cfg.ClipNoise, Constants: cv.Constants,
					PTREpsilon: cfg.PTREpsilon, PTRDelta: cfg.PTRDelta,
					ClipThreshold: cfg.ClipThreshold, RGMNoise: cv.RGMNoise,
				}
				res, err := ridgegd.Run(splits[j.p][j.r], rc, cfg.Seed+uint64(j.r))
				out := &fig.Panels[j.p].Curves[j.c]
				if err != nil {
					out.Errors[j.r] = err.Error()
					continue
				}
				out.Gaps[j.r] = res.Gap
				out.Nodes[j.r] = res.Nodes
			}
		}()
	}
	for p := range cfg.Splits {
		for c := range cfg.Curves {
			for r := 0; r < cfg.Runs; r++ {
				jobs <- job{p, c, r}
			}
		}
	}
	close(jobs)
	wg.Wait()
	for p := range fig.Panels {
		for c := range fig.Panels[p].Curves {
			summarize(&fig.Panels[p].Curves[c])
		}
	}
	return fig, nil
}

// summarize fills Succeeded and the Final* fields and drops Errors when
// there are none.
func summarize(cr *CurveResult) {
	var finals []float64
	anyErr := false
	for r, g := range cr.Gaps {
		if cr.Errors[r] != "" {
			anyErr = true
		}
		if g == nil {
			continue
		}
		k := max(1, min(50, (len(g)-1)/5))
		var s float64
		for _, v := range g[len(g)-k:] {
			s += v
		}
		finals = append(finals, s/float64(k))
	}
	if !anyErr {
		cr.Errors = nil
	}
	cr.Succeeded = len(finals)
	if len(finals) == 0 {
		return
	}
	sort.Float64s(finals)
	cr.FinalMin, cr.FinalMax = finals[0], finals[len(finals)-1]
	cr.FinalMedian = finals[len(finals)/2]
	if len(finals)%2 == 0 {
		cr.FinalMedian = (finals[len(finals)/2-1] + finals[len(finals)/2]) / 2
	}
}

// Band returns, per iteration, the min, median and max of the successful
// runs' gaps (nil if none succeeded).
func (cr *CurveResult) Band() (lo, mid, hi []float64) {
	var runs [][]float64
	for _, g := range cr.Gaps {
		if g != nil {
			runs = append(runs, g)
		}
	}
	if len(runs) == 0 {
		return nil, nil, nil
	}
	n := len(runs[0])
	lo, mid, hi = make([]float64, n), make([]float64, n), make([]float64, n)
	v := make([]float64, len(runs))
	for t := 0; t < n; t++ {
		for r, g := range runs {
			v[r] = g[t]
		}
		sort.Float64s(v)
		lo[t], hi[t] = v[0], v[len(v)-1]
		mid[t] = v[len(v)/2]
		if len(v)%2 == 0 {
			mid[t] = (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
	}
	return lo, mid, hi
}
