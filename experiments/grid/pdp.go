package grid

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/privtrain/privtrain/runner"
)

// PDPTable describes rows of Table 1 of the personalized DP-SGD paper (Heo,
// Seo & Whang): every method on every dataset with budgets ε_i in [0.5, 1]
// (k = 0, δ = 1e-5) and the paper's settings (pdp-* presets), for each
// accounting and seed.
type PDPTable struct {
	Presets []string // pdp-mnist, pdp-fashion-mnist, pdp-svhn
	DataDir string
	// Methods are pdp-dpsgd, pdp-sampling, pdp-adapdp, pdp-sgd-fixed and
	// pdp-sgd-adaptive (pdp-sgd with the loss_f or loss_a threshold), and
	// the reference pdp-ceiling (PDPReferenceMethods).
	Methods []string
	// Accountings are the PDP accountings (pld, rdp, paper), each
	// optionally with the paper's RDP-to-DP conversion as "<acc>-mironov"
	// (rdp-mironov: the paper's accounting, ε = ρ + log(1/δ)/(α − 1);
	// without the suffix the presets' bbg conversion). A cell's TrainConfig
	// names its accounting explicitly, so the keys of rdp and paper cells
	// are those they had before pld existed.
	Accountings []string
	Seeds       []uint64
	// Epochs is the run length of every method (the paper's Table 2
	// iteration counts are ≈ 25 epochs at batch 64); the multi-round
	// methods (pdp-sgd-*, pdp-adapdp) split it over Rounds rounds.
	Epochs float64
	Rounds int
	// Steps > 0 fixes every run's total number of steps instead (smoke
	// tests, CI).
	Steps int
	// FloatNoise opts out of the secure release, the default (see
	// PTRTable.FloatNoise): float cells keep the keys of the cells run
	// before secure noise became the default.
	FloatNoise bool
}

// PDPMethods are the five methods of the paper's Table 1.
func PDPMethods() []string {
	return []string{"pdp-dpsgd", "pdp-sampling", "pdp-adapdp", "pdp-sgd-fixed", "pdp-sgd-adaptive"}
}

// PDPReferenceMethods are reference rows beside the paper's methods:
// pdp-ceiling is DP-SGD (pdp-dpsgd) with every example's budget at the
// largest ε_i of the preset (one budget group at BudgetMax), the same model
// and length as pdp-dpsgd. No valid (Φ, Δ)-PDP run of the same setup whose
// examples hold budgets ≤ max ε_i is expected to beat it by more than the
// noise between seeds: it spends the largest budget on everyone.
func PDPReferenceMethods() []string { return []string{"pdp-ceiling"} }

// PDPVariantMethods are named variants of the paper's methods, not in the
// default table: pdp-sampling-once is pdp-sampling with Definition B.1's
// one-time draw of D_s (DP-SGD at rate batch/Σπ_i, Theorem 4.2), which only
// paper accounting ("paper", "paper-mironov") accounts.
func PDPVariantMethods() []string { return []string{"pdp-sampling-once"} }

// pdpPaper is Table 1 of the PDP paper at k = 0 (test accuracy in %). Its
// Sampling column is the reference of both sampling rows: pdp-sampling-once
// is its Definition B.1 as written, pdp-sampling the per-step variant.
var pdpPaper = map[string]map[string]float64{
	"pdp-mnist": {"pdp-dpsgd": 90.42, "pdp-sampling": 92.50, "pdp-sampling-once": 92.50, "pdp-adapdp": 92.78,
		"pdp-sgd-fixed": 95.19, "pdp-sgd-adaptive": 95.05},
	"pdp-fashion-mnist": {"pdp-dpsgd": 75.20, "pdp-sampling": 77.42, "pdp-sampling-once": 77.42, "pdp-adapdp": 77.58,
		"pdp-sgd-fixed": 79.46, "pdp-sgd-adaptive": 79.81},
}

// PDPPaperAccuracy returns the paper's Table 1 accuracy (%, k = 0) or NaN.
func PDPPaperAccuracy(preset, method string) float64 {
	if v, ok := pdpPaper[preset][method]; ok {
		return v
	}
	return math.NaN()
}

// Grid expands the table into cells, ordered by dataset, accounting, method
// and seed.
func (t PDPTable) Grid() (*Grid, error) {
	if len(t.Presets) == 0 || len(t.Methods) == 0 || len(t.Accountings) == 0 || len(t.Seeds) == 0 {
		return nil, errors.New("pdp-table: presets, methods, accountings and seeds must be non-empty")
	}
	if t.Steps < 0 || t.Steps == 0 && !(t.Epochs > 0) || t.Rounds < 1 {
		return nil, fmt.Errorf("pdp-table: need epochs > 0 (or steps > 0) and rounds ≥ 1, got epochs %v, steps %d, rounds %d", t.Epochs, t.Steps, t.Rounds)
	}
	if err := checkSize("pdp-table", len(t.Presets), len(t.Accountings), len(t.Methods), len(t.Seeds)); err != nil {
		return nil, err
	}
	g := &Grid{Name: "pdp-table", Columns: []string{"dataset", "accounting", "method"}}
	for _, p := range t.Presets {
		for _, acc := range t.Accountings {
			for _, m := range t.Methods {
				method, loss, ok := strings.Cut(m, "-sgd-")
				ceiling, once := m == "pdp-ceiling", m == "pdp-sampling-once"
				switch {
				case ok:
					method = "pdp-sgd"
				case ceiling:
					method = "pdp-dpsgd"
				case once:
					method = "pdp-sampling"
				default:
					method = m
				}
				if !ok && !ceiling && !once && !contains(PDPMethods(), m) {
					known := append(append(PDPMethods(), PDPReferenceMethods()...), PDPVariantMethods()...)
					return nil, fmt.Errorf("pdp-table: unknown method %q (known: %s)", m, strings.Join(known, ", "))
				}
				accounting, mironov := strings.CutSuffix(acc, "-mironov")
				for _, seed := range t.Seeds {
					cfg := runner.DefaultConfig()
					cfg.Method = method
					if err := runner.ApplyPreset(&cfg, p); err != nil {
						return nil, err
					}
					if ok {
						cfg.PDP.ThresholdLoss = loss
					}
					cfg.PDP.Accounting = accounting
					if mironov {
						cfg.Conversion = "mironov"
					}
					if ceiling {
						cfg.PDP.BudgetGroups, cfg.PDP.BudgetMin, cfg.PDP.BudgetK = 1, cfg.PDP.BudgetMax, 0
					}
					if once {
						cfg.PDP.SamplingDraw = "once"
					}
					cfg.PDP.Rounds, cfg.PDP.RoundEpochs = 1, t.Epochs
					if method == "pdp-sgd" || method == "pdp-adapdp" {
						cfg.PDP.Rounds, cfg.PDP.RoundEpochs = t.Rounds, t.Epochs/float64(t.Rounds)
					}
					if t.Steps > 0 {
						cfg.Steps, cfg.PDP.RoundEpochs = t.Steps, 0
						if method == "pdp-adapdp" {
							// Smoke runs: rounds cut at the steps, not run to τ_T.
							cfg.PDP.AdaPDPRounds = "steps"
						}
					}
					cfg.DataDir, cfg.Seed, cfg.Out = t.DataDir, seed, ""
					cfg.FloatNoise = t.FloatNoise
					row := m
					if t.FloatNoise {
						row += " [float noise]"
					}
					r := Resources{CPUs: 2, MemMB: 3072, Time: time.Hour}
					if p == "pdp-svhn" {
						r.MemMB, r.Time = 8192, 6*time.Hour
					}
					g.Cells = append(g.Cells, Cell{
						Row: []string{cfg.Dataset, acc, row}, Seed: seed, Config: cfg,
						Paper: PDPPaperAccuracy(p, m), Resources: r, Class: m,
					})
				}
			}
		}
	}
	return g, g.Validate()
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
