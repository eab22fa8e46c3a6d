package grid

import (
	"fmt"
	"math"
	"time"
)

// measuredCell is the measured cost of one kind of cell: its median (PTR)
// or mean (PDP) wall seconds and the steps it ran (wall 0: only the steps
// were measured).
type measuredCell struct {
	dataset, class, accountant string
	sigma, epsilon, epochs     float64 // the settings that fix the steps (0: not part of it)
	steps                      int
	wall                       float64
}

// costSource names where measuredCells come from.
const costSource = "docs/grid.md (full grids of 2026-11-23: shared 2-core machine, two cells at a time) and docs/ptr-pld.md (TSGD+PTR steps under PLD)"

// measuredCells are the full grids of docs/grid.md: PTR Table 1 on MNIST
// ("Wall time per cell (measured)": median wall per cell, steps to the
// budget from each cell's accountant at δ = 1e-5, q = 256/60000) and PDP
// Table 1 at 25 epochs (the table's "wall s/run", mean over 3 seeds). The
// TSGD+PTR steps under PLD, the default since PTR's PLD, are the largest n
// with ε(n) ≤ ε by `trainer account epsilon --accountant pld --mech ptr
// --sigma1 1.1 --tau 0.5 --b 1 --delta0 1e-8 --q 0.004266666666666667
// --delta 1e-5 --steps n` (8,126 at ε = 3, 20,504 at ε = 5 since the proven
// FFT); their walls are the medians of docs/ptr-pld.md §8's grids (ε = 3:
// 35 cells; ε = 5: 21 cells, which ran 20,505 steps under the code before
// the proven FFT), two cells at a time on the 2-core machine.
var measuredCells = []measuredCell{
	{"mnist", "tsgd-ptr", "pld", 1.1, 3, 0, 8126, 437.4},
	{"mnist", "tsgd-ptr", "pld", 1.1, 5, 0, 20504, 853.3},
	{"mnist", "tsgd-ptr", "rdp", 1.1, 3, 0, 4136, 4.5 * 60},
	{"mnist", "tsgd-ptr", "rdp", 1.1, 5, 0, 15208, 13.3 * 60},
	{"mnist", "tsgd-gaussian", "pld", 0.7, 3, 0, 2545, 2.6 * 60},
	{"mnist", "tsgd-gaussian", "pld", 0.7, 5, 0, 8269, 8.2 * 60},
	{"mnist", "tsgd-gaussian", "rdp", 0.7, 3, 0, 1114, 2.1 * 60},
	{"mnist", "dpsgd", "pld", 1.1, 3, 0, 21353, 6.2 * 60},
	{"mnist", "dpsgd", "pld", 1.1, 5, 0, 52665, 16.9 * 60},

	{"mnist", "pdp-dpsgd", "pld", 0, 0, 25, 23438, 295},
	{"mnist", "pdp-sampling", "pld", 0, 0, 25, 23438, 306},
	{"mnist", "pdp-adapdp", "pld", 0, 0, 25, 23438, 182},
	{"mnist", "pdp-sgd-fixed", "pld", 0, 0, 25, 23438, 492},
	{"mnist", "pdp-sgd-adaptive", "pld", 0, 0, 25, 11719, 548},
	{"mnist", "pdp-dpsgd", "rdp", 0, 0, 25, 23438, 299},
	{"mnist", "pdp-sampling", "rdp", 0, 0, 25, 23438, 275},
	{"mnist", "pdp-adapdp", "rdp", 0, 0, 25, 23438, 190},
	{"mnist", "pdp-sgd-fixed", "rdp", 0, 0, 25, 23438, 224},
	{"mnist", "pdp-sgd-adaptive", "rdp", 0, 0, 25, 11719, 416},
	{"fashion-mnist", "pdp-dpsgd", "pld", 0, 0, 25, 23438, 264},
	{"fashion-mnist", "pdp-sampling", "pld", 0, 0, 25, 23438, 206},
	{"fashion-mnist", "pdp-adapdp", "pld", 0, 0, 25, 23438, 177},
	{"fashion-mnist", "pdp-sgd-fixed", "pld", 0, 0, 25, 23438, 145},
	{"fashion-mnist", "pdp-sgd-adaptive", "pld", 0, 0, 25, 11719, 116},
	{"fashion-mnist", "pdp-dpsgd", "rdp", 0, 0, 25, 23438, 473},
	{"fashion-mnist", "pdp-sampling", "rdp", 0, 0, 25, 23438, 457},
	{"fashion-mnist", "pdp-adapdp", "rdp", 0, 0, 25, 23438, 208},
	{"fashion-mnist", "pdp-sgd-fixed", "rdp", 0, 0, 25, 23438, 154},
	{"fashion-mnist", "pdp-sgd-adaptive", "rdp", 0, 0, 25, 11719, 72},
}

// adaPDPThresholdRounds is the number of rounds adaPDPThresholdCells ran.
const adaPDPThresholdRounds = 2

// adaPDPThresholdCells are pdp-adapdp's steps with its rounds run to τ_T,
// by accounting and conversion ("rdp-mironov": the paper's), in the setting
// of the pdp presets (60,000 examples, 20 budget groups in [0.5, 1],
// δ 1e-5, q 64/60000, σ 1.3). They come from the accountant alone
// (docs/pdp-evidence.md, "AdaPDP steps per round";
// TestAdaPDPRoundsReachThreshold; PLD: 66,032 + 10,739 since the proven
// FFT, 12 steps fewer than the page's trained cell); wall seconds only
// where a cell was trained (MNIST, seed 1, same page, a loaded machine).
var adaPDPThresholdCells = func() []measuredCell {
	var cells []measuredCell
	for _, d := range []string{"mnist", "fashion-mnist"} {
		for _, m := range []struct {
			accountant string
			steps      int
			wall       float64
		}{{"pld", 76771, 847}, {"rdp", 65368, 0}, {"rdp-mironov", 43526, 177}, {"paper", 52042, 0}, {"paper-mironov", 32739, 0}} {
			if d != "mnist" {
				m.wall = 0
			}
			cells = append(cells, measuredCell{dataset: d, class: "pdp-adapdp", accountant: m.accountant, steps: m.steps, wall: m.wall})
		}
	}
	return cells
}()

// costClass maps a class to the class whose per-step cost it shares:
// pdp-ceiling is pdp-dpsgd with one budget group (same model and length,
// pdp.go); pdp-sampling-once is pdp-sampling with a one-time draw.
func costClass(class string) string {
	switch class {
	case "pdp-ceiling":
		return "pdp-dpsgd"
	case "pdp-sampling-once":
		return "pdp-sampling"
	}
	return class
}

// mechanismClass is what fixes the steps to a budget: TSGD+Gaussian and
// DP-SGD compose the same subsampled Gaussian, so at one σ they take the
// same steps.
func mechanismClass(class string) string {
	if class == "dpsgd" || class == "tsgd-gaussian" {
		return "gaussian"
	}
	return class
}

// CellEstimate is the estimated wall time of one cell and where it comes
// from.
type CellEstimate struct {
	// Seconds is the estimated wall time (0 for a finished cell); NaN
	// when nothing measured applies.
	Seconds float64
	// Steps is the cell's number of steps (estimated; 0 when unknown).
	Steps int
	// Source says how Seconds was obtained.
	Source string
}

// Estimate estimates cell i's wall time as steps × seconds per step.
// The steps are the cell's fixed length (--steps, or epochs scaled from a
// measured cell of the same kind), for a budget-stopped cell the steps
// a measured cell with the same mechanism, σ, accountant and ε ran, and
// for pdp-adapdp with rounds run to τ_T the steps its accountant plans. Seconds
// per step come from the finished cells of this grid under out with the
// same dataset and class (measured on this machine) or else from
// measuredCells (costSource). A finished cell costs 0. Data loading and
// accountant set-up are not counted (seconds per cell).
func (g *Grid) Estimate(out string, i int) (CellEstimate, error) {
	dir, err := g.Dir(out, i)
	if err != nil {
		return CellEstimate{}, err
	}
	if s, err := readSummary(dir); err == nil {
		return CellEstimate{Seconds: 0, Steps: s.Steps, Source: "finished"}, nil
	}
	c := g.Cells[i]
	cfg := c.Config
	class := costClass(c.Class)
	acc := cfg.Accountant
	if cfg.PDP.Accounting != "" {
		acc = cfg.PDP.Accounting
	}
	if acc == "" {
		acc = "pld" // the default of every grid method (each has a proven PLD)
	}
	est := CellEstimate{Seconds: math.NaN()}
	var ref *measuredCell
	switch {
	case cfg.Steps > 0:
		est.Steps = cfg.Steps
	case class == "pdp-adapdp" && cfg.PDP.AdaPDPRounds != "steps":
		key := acc
		if cfg.Conversion == "mironov" && acc != "pld" {
			key += "-mironov"
		}
		for k, m := range adaPDPThresholdCells {
			if m.dataset == cfg.Dataset && m.accountant == key && cfg.PDP.Rounds == adaPDPThresholdRounds {
				est.Steps, ref = m.steps, &adaPDPThresholdCells[k]
			}
		}
	case cfg.TargetEpsilon > 0:
		for k, m := range measuredCells {
			if m.dataset == cfg.Dataset && mechanismClass(m.class) == mechanismClass(class) && m.accountant == acc && m.sigma == cfg.Sigma && m.epsilon == cfg.TargetEpsilon {
				est.Steps, ref = m.steps, &measuredCells[k]
				if m.class == class {
					break
				}
			}
		}
	default:
		epochs := cfg.Epochs
		if cfg.PDP.Rounds > 0 && cfg.PDP.RoundEpochs > 0 {
			epochs = float64(cfg.PDP.Rounds) * cfg.PDP.RoundEpochs
		}
		for k, m := range measuredCells {
			if m.dataset == cfg.Dataset && m.class == class && m.accountant == acc && m.epochs > 0 {
				est.Steps, ref = int(math.Round(float64(m.steps)*epochs/m.epochs)), &measuredCells[k]
			}
		}
	}
	if est.Steps == 0 {
		est.Source = "no measured cell with these settings"
		return est, nil
	}
	// Seconds per step measured here (finished cells of this grid).
	var secs, steps float64
	for j, o := range g.Cells {
		if j == i || o.Config.Dataset != cfg.Dataset || costClass(o.Class) != class {
			continue
		}
		d, err := g.Dir(out, j)
		if err != nil {
			return est, err
		}
		if s, err := readSummary(d); err == nil && s.Steps > 0 && s.WallSeconds > 0 {
			secs, steps = secs+s.WallSeconds, steps+float64(s.Steps)
		}
	}
	if steps > 0 {
		est.Seconds, est.Source = float64(est.Steps)*secs/steps, "rate of this grid's finished cells"
		return est, nil
	}
	if ref != nil && ref.class == class && ref.steps == est.Steps && ref.wall > 0 {
		est.Seconds, est.Source = ref.wall, "measured cell"
		if class != c.Class {
			est.Source = "measured " + class + " cell"
		}
		return est, nil
	}
	for _, m := range measuredCells {
		if m.dataset == cfg.Dataset && m.class == class && m.wall > 0 {
			secs, steps = secs+m.wall, steps+float64(m.steps)
		}
	}
	if steps == 0 {
		est.Source = fmt.Sprintf("no measured %s cell on %s", class, cfg.Dataset)
		return est, nil
	}
	est.Seconds, est.Source = float64(est.Steps)*secs/steps, "measured "+class+" rate"
	return est, nil
}

// formatDuration renders seconds as "1 h 20 min", "7 min" or "40 s".
func formatDuration(s float64) string {
	d := time.Duration(s * float64(time.Second)).Round(time.Second)
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%d h %02d min", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%d min", int(math.Round(d.Minutes())))
	}
	return fmt.Sprintf("%d s", int(d.Seconds()))
}
