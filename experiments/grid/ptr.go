package grid

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/runner"
)

// PTRTable describes rows of Table 1 of the PTR paper (Wang et al.,
// NeurIPS 2022): every method under every corruption setting, budget ε
// (δ = 1e-5) and seed, each run trained until its budget is spent with the
// preset's hyper-parameters (appendix B.1.3).
type PTRTable struct {
	Preset  string // ptr-mnist, ptr-emnist or ptr-cifar10
	DataDir string
	// DataChecksums names a sha256sum manifest for files other than the
	// official ones (CIFAR-10, EMNIST; see datasets.LoadWithChecksums).
	DataChecksums string
	Epsilons      []float64
	Methods       []string // tsgd-ptr, tsgd-gaussian, dpsgd
	Corruptions   []runner.Corruption
	Seeds         []uint64
	// DPSGDSigma is the noise multiplier of the dpsgd baseline (0: the
	// preset's Gaussian σ).
	DPSGDSigma float64
	// Steps > 0 caps every run at that many steps (smoke tests, CI).
	Steps int
	// Accountant is "pld", "rdp" or "" (the runner's default: pld where
	// the step has a proven PLD, which DP-SGD, TSGD+Gaussian and, since its
	// envelope pair, TSGD+PTR have, docs/ptr-pld.md; the runner refuses pld
	// for a step without one).
	Accountant string
	// FloatNoise opts out of the secure (floating-point-safe) release, the
	// default (runner.TrainConfig.FloatNoise): float cells have the keys
	// float cells had before secure noise became the default, so their
	// finished runs are reused as float cells only (see Key).
	FloatNoise bool
}

// PTRPaperCorruptions are the seven corruption settings of Table 1.
func PTRPaperCorruptions() []runner.Corruption {
	return []runner.Corruption{
		{Kind: "none", Ratio: 0},
		{Kind: "label-flip", Ratio: 0.1}, {Kind: "label-flip", Ratio: 0.2},
		{Kind: "feature", Ratio: 0.1}, {Kind: "feature", Ratio: 0.2},
		{Kind: "gradient-noise", Ratio: 0.1}, {Kind: "gradient-noise", Ratio: 0.2},
	}
}

// ptrPaper holds Table 1 of the PTR paper (test accuracy in %, mean of 5
// seeds): dataset → ε → corruption kind and ratio → {TSGD+Gaussian,
// TSGD+PTR}.
var ptrPaper = map[string]map[float64]map[runner.Corruption][2]float64{
	"ptr-mnist": {
		3: {cr("none", 0): {87.53, 91.43}, cr("label-flip", 0.1): {90.15, 93.29}, cr("label-flip", 0.2): {91.33, 92.704},
			cr("feature", 0.1): {89.47, 92.28}, cr("feature", 0.2): {91.71, 92.29},
			cr("gradient-noise", 0.1): {90.27, 91.7}, cr("gradient-noise", 0.2): {91.13, 91.45}},
		5: {cr("none", 0): {81.31, 92.8}, cr("label-flip", 0.1): {89.15, 94.608}, cr("label-flip", 0.2): {92.47, 94.084},
			cr("feature", 0.1): {86.53, 93.388}, cr("feature", 0.2): {86.99, 92.864},
			cr("gradient-noise", 0.1): {88.41, 91.68}, cr("gradient-noise", 0.2): {88.70, 90.31}},
	},
	"ptr-cifar10": {
		7: {cr("none", 0): {57.94, 58.92}, cr("label-flip", 0.1): {55.48, 56.262}, cr("label-flip", 0.2): {49.69, 50.946},
			cr("feature", 0.1): {55.70, 56.628}, cr("feature", 0.2): {55.13, 55.526},
			cr("gradient-noise", 0.1): {55.81, 57.29}, cr("gradient-noise", 0.2): {54.45, 56.31}},
		10: {cr("none", 0): {58.82, 60.13}, cr("label-flip", 0.1): {57.42, 58.218}, cr("label-flip", 0.2): {52.95, 53.106},
			cr("feature", 0.1): {57.36, 58.678}, cr("feature", 0.2): {56.93, 57.336},
			cr("gradient-noise", 0.1): {57.21, 58.96}, cr("gradient-noise", 0.2): {56.11, 57.48}},
	},
	"ptr-emnist": {
		2: {cr("none", 0): {72.94, 76.44}, cr("label-flip", 0.1): {72.60, 75.66}, cr("label-flip", 0.2): {70.03, 72.62},
			cr("feature", 0.1): {69.60, 74.01}, cr("feature", 0.2): {70.04, 74.76},
			cr("gradient-noise", 0.1): {71.75, 76.19}, cr("gradient-noise", 0.2): {70.76, 74.65}},
		2.5: {cr("none", 0): {79.15, 81.02}, cr("label-flip", 0.1): {79.38, 80.63}, cr("label-flip", 0.2): {77.48, 79.19},
			cr("feature", 0.1): {77.80, 81.04}, cr("feature", 0.2): {78.99, 80.74},
			cr("gradient-noise", 0.1): {77.32, 77.73}, cr("gradient-noise", 0.2): {76.68, 77.17}},
	},
}

func cr(kind string, ratio float64) runner.Corruption {
	return runner.Corruption{Kind: kind, Ratio: ratio}
}

// PTRPaperAccuracy returns Table 1's accuracy (%) for a preset, ε,
// corruption and method, or NaN when the paper has no such cell (DP-SGD,
// other budgets).
func PTRPaperAccuracy(preset string, eps float64, c runner.Corruption, method string) float64 {
	col := map[string]int{"tsgd-gaussian": 0, "tsgd-ptr": 1}
	k, ok := col[method]
	if !ok {
		return math.NaN()
	}
	v, ok := ptrPaper[preset][eps][c]
	if !ok {
		return math.NaN()
	}
	return v[k]
}

// ptrResources are the scheduler hints per preset and method, from runs on
// 2 cores (docs/grid.md, "Wall time per cell"): TSGD+PTR at ε = 5 on MNIST
// is the longest TSGD cell; DP-SGD at σ = 1.1 runs 21,353 (ε = 3) and
// 52,665 (ε = 5) steps on the PLD accountant, but its steps are the cheapest.
// Times are three times the measured ones or more; cells resume, so a task
// that hits its limit continues when resubmitted.
func ptrResources(preset, method string, steps int) Resources {
	r := Resources{CPUs: 2, MemMB: 3072, Time: 2 * time.Hour}
	switch method {
	case "tsgd-gaussian":
		r.Time = time.Hour
	case "dpsgd":
		r.Time = 3 * time.Hour
	}
	if preset == "ptr-cifar10" || preset == "ptr-emnist" {
		r.MemMB, r.Time = 6144, 4*r.Time
	}
	if steps > 0 {
		r.Time = 30 * time.Minute
	}
	return r
}

// Grid expands the table into cells, ordered by ε, corruption, method and
// seed.
func (t PTRTable) Grid() (*Grid, error) {
	if len(t.Epsilons) == 0 || len(t.Methods) == 0 || len(t.Corruptions) == 0 || len(t.Seeds) == 0 {
		return nil, errors.New("ptr-table: epsilons, methods, corruptions and seeds must be non-empty")
	}
	if t.Steps < 0 {
		return nil, fmt.Errorf("ptr-table: steps must be ≥ 0, got %d", t.Steps)
	}
	if err := checkSize("ptr-table", len(t.Epsilons), len(t.Corruptions), len(t.Methods), len(t.Seeds)); err != nil {
		return nil, err
	}
	for _, m := range t.Methods {
		if m != "tsgd-ptr" && m != "tsgd-gaussian" && m != "dpsgd" {
			return nil, fmt.Errorf("ptr-table: unknown method %q (want tsgd-ptr, tsgd-gaussian or dpsgd)", m)
		}
	}
	if t.Accountant != "" {
		if err := privacy.CheckAccountantName(t.Accountant); err != nil {
			return nil, fmt.Errorf("ptr-table: %w", err)
		}
		// TSGD+PTR's step is the Poisson-subsampled PTR mechanism (the
		// secure release is accounted as the continuous mechanism it
		// post-processes, docs/secure-release.md), here at representative
		// valid parameters: whether an accountant accepts it depends on its
		// type only.
		if slices.Contains(t.Methods, "tsgd-ptr") {
			step := privacy.PoissonSubsampled{Base: privacy.PTR{Sigma1: 1, Tau: 0.5, B: 1, Delta0: 1e-5}, Q: 0.01, Bound: privacy.SubsampleAuto}
			if err := privacy.CheckAccountant(t.Accountant, step); err != nil {
				return nil, fmt.Errorf("ptr-table: TSGD+PTR: %w; drop tsgd-ptr from --methods or use --accountant rdp", err)
			}
		}
	}
	if t.DPSGDSigma != 0 && !(t.DPSGDSigma > 0 && !math.IsInf(t.DPSGDSigma, 1)) {
		return nil, fmt.Errorf("ptr-table: the dpsgd σ must be finite and > 0 (0: the preset's), got %v", t.DPSGDSigma)
	}
	g := &Grid{Name: "ptr-table", Columns: []string{"dataset", "ε", "corruption", "CR", "method"}}
	for _, eps := range t.Epsilons {
		for _, c := range t.Corruptions {
			for _, m := range t.Methods {
				for _, seed := range t.Seeds {
					cfg := runner.DefaultConfig()
					cfg.Method = m
					if err := runner.ApplyPreset(&cfg, t.Preset); err != nil {
						return nil, err
					}
					if m == "dpsgd" && t.DPSGDSigma > 0 {
						cfg.Sigma = t.DPSGDSigma
					}
					cfg.DataDir, cfg.DataChecksums, cfg.Seed, cfg.TargetEpsilon = t.DataDir, t.DataChecksums, seed, eps
					cfg.Corruption, cfg.CorruptionRatio = c.Kind, c.Ratio
					cfg.DynamicF = m == "tsgd-ptr"
					cfg.Steps = t.Steps
					cfg.FloatNoise = t.FloatNoise
					cfg.Accountant = t.Accountant
					if m == "tsgd-ptr" && cfg.Accountant == "" {
						// TSGD+PTR's default accountant became the PLD
						// (docs/ptr-pld.md); cells of earlier grids left
						// it empty and ran on RDP. Naming it keeps their
						// keys apart, so an RDP cell is never reused as
						// a PLD one.
						cfg.Accountant = "pld"
					}
					cfg.Out = ""
					method := m
					if m == "dpsgd" {
						method = fmt.Sprintf("dpsgd σ=%g", cfg.Sigma)
					}
					if t.Accountant != "" {
						method += " (" + t.Accountant + ")"
					}
					if cfg.FloatNoise {
						method += " [float noise]"
					}
					g.Cells = append(g.Cells, Cell{
						Row:       []string{cfg.Dataset, strconv.FormatFloat(eps, 'g', -1, 64), c.Kind, strconv.FormatFloat(c.Ratio, 'g', -1, 64), method},
						Seed:      seed,
						Config:    cfg,
						Paper:     PTRPaperAccuracy(t.Preset, eps, c, m),
						Resources: ptrResources(t.Preset, m, t.Steps),
						Class:     m,
					})
				}
			}
		}
	}
	return g, g.Validate()
}
