package runner

import (
	"github.com/privtrain/privtrain/optim/pdpsgd"
	"github.com/privtrain/privtrain/privacy"
)

// PDPConfig configures the personalized-DP methods (Heo, Seo & Whang,
// "Personalized DP-SGD using Sampling Mechanisms"): pdp-sgd (Algorithm 1),
// and the baselines pdp-dpsgd (DP-SGD at min ε_i), pdp-sampling (one round
// of personalized sampling, appendix B.1) and pdp-adapdp (one model per
// round, output-weighted ensemble, Algorithm 2).
type PDPConfig struct {
	// ThresholdLoss picks τ per round: "fixed" (loss_f with W1, W2, Eq. 6)
	// or "adaptive" (loss_a, Eq. 7).
	ThresholdLoss string  `json:"threshold_loss,omitempty" yaml:"threshold_loss,omitempty"`
	W1            float64 `json:"w1,omitempty" yaml:"w1,omitempty"`
	W2            float64 `json:"w2,omitempty" yaml:"w2,omitempty"`
	// Rounds is k and RoundEpochs n of Algorithm 1: k rounds of n epochs
	// (an epoch is N/batch steps). The single-round methods (pdp-dpsgd,
	// pdp-sampling) run one round of k·n epochs, so every method has the
	// same number of steps. TrainConfig.Steps > 0 instead fixes the total
	// number of steps (split evenly over the rounds).
	Rounds      int     `json:"rounds,omitempty" yaml:"rounds,omitempty"`
	RoundEpochs float64 `json:"round_epochs,omitempty" yaml:"round_epochs,omitempty"`
	// BudgetsFile is a CSV "index,epsilon[,delta]" of per-example budgets
	// (δ defaults to TrainConfig.Delta). Without it, budgets are generated
	// as in appendix C.1: BudgetGroups groups in [BudgetMin, BudgetMax]
	// with counts ∝ c1·e^{BudgetK·ε} + c2 (k = 0: uniform).
	BudgetsFile  string  `json:"budgets_file,omitempty" yaml:"budgets_file,omitempty"`
	BudgetGroups int     `json:"budget_groups,omitempty" yaml:"budget_groups,omitempty"`
	BudgetMin    float64 `json:"budget_min,omitempty" yaml:"budget_min,omitempty"`
	BudgetMax    float64 `json:"budget_max,omitempty" yaml:"budget_max,omitempty"`
	BudgetK      float64 `json:"budget_k,omitempty" yaml:"budget_k,omitempty"`
	// Accounting is "pld" (the default, also for ""): the per-example
	// argument of AccountingRDP (per-step personalized Poisson sampling,
	// each example's steps are Poisson-subsampled Gaussians at its rates
	// q·π_i) on the PLD accountant, whose dominating pairs are proven for
	// exactly that mechanism (pdpsgd.NewLedger with the pld accountant); "rdp" (the same argument on
	// per-example RDP); or "paper" (Theorem 4.2 per round with D_R drawn
	// once per round, Theorem 4.3 across rounds, δ_R = δ_i/k; see
	// optim/pdpsgd.NewPaperLedger for its validity conditions). A resumed
	// run with "" keeps its checkpoint's accounting.
	Accounting string `json:"accounting,omitempty" yaml:"accounting,omitempty"`
	// NoiseGuard (pdp-sgd only; 0: off) ends the run before a round whose
	// noise per expected participant σ_R/(q·Σπ_R) is more than NoiseGuard
	// times the first round's (optim/pdpsgd.NoiseGuard). Skipping a round
	// only stops spending. The pdp-* presets set 4 for pdp-sgd.
	NoiseGuard float64 `json:"noise_guard,omitempty" yaml:"noise_guard,omitempty"`
	// AdaPDPRounds (pdp-adapdp only) is "threshold" (also ""): each round
	// runs until its spend reaches τ_T, Algorithm 2's loop, bounded by the
	// budgets and never past them; the configured length is ignored. Or
	// "steps": each round stops at the configured round length even if its
	// spend is below τ_T (the earlier, truncated variant; smoke tests).
	AdaPDPRounds string `json:"adapdp_rounds,omitempty" yaml:"adapdp_rounds,omitempty"`
	// SamplingDraw (pdp-sampling only) is "per-step" (also ""): every step
	// samples example i at rate q·π_i; or "once": Definition B.1, D_s drawn
	// once and DP-SGD on D_s at the public rate batch/Σπ_i, accounted by
	// Theorem 4.2 (needs Accounting "paper"). See pdp_job.go.
	SamplingDraw string `json:"sampling_draw,omitempty" yaml:"sampling_draw,omitempty"`
}

// maxBudgetGroups bounds --budget-groups before the dataset size is known:
// the largest training set privtrain loads has fewer examples (ijcnn1's
// 141,691 rows), and groups beyond N are refused once N is known.
const maxBudgetGroups = 150000

// PDPPresets returns the paper's settings (appendix C.2: lr 0.05, batch 64,
// initial σ 1.3 — AdaPDP's fixed σ —, clip 1.0, the same for all three
// datasets; the Table 5 CNN for MNIST and Fashion-MNIST, the Table 4 CNN for
// SVHN; budgets in [0.5, 1] with k = 0; w1 = 0.7, w2 = 0.3 for loss_f and
// 0.2, 0.8 for AdaPDP). The paper does not give k and n; the presets use 3
// rounds of 2 epochs (R_max ≤ 10 in the paper).
func PDPPresets() map[string]func(*TrainConfig) {
	preset := func(dataset, model string) func(*TrainConfig) {
		return func(c *TrainConfig) {
			c.Dataset, c.Model = dataset, model
			if !c.pdp() {
				c.Method = "pdp-sgd"
			}
			c.LR, c.BatchSize, c.Sigma, c.ClipNorm, c.Delta = 0.05, 64, 1.3, 1, 1e-5
			c.Conversion = "bbg"
			// Settings of other methods (DefaultConfig's) do not apply.
			c.TargetEpsilon, c.Corruption, c.CorruptionRatio, c.DynamicF = 0, "", 0, false
			c.Epochs, c.Steps = 0, 0
			c.PDP = PDPConfig{ThresholdLoss: "fixed", W1: 0.7, W2: 0.3, Rounds: 3, RoundEpochs: 2,
				BudgetGroups: 20, BudgetMin: 0.5, BudgetMax: 1}
			if c.method().pdp.ensemble {
				c.PDP.W1, c.PDP.W2 = 0.2, 0.8
				c.PDP.AdaPDPRounds = adaPDPThreshold // Algorithm 2 (named, so cells of the truncated rounds keep other keys)
			}
			if c.method().pdp.noiseGuard {
				c.PDP.NoiseGuard = defaultPDPNoiseGuard
			}
		}
	}
	return map[string]func(*TrainConfig){
		"pdp-mnist":         preset("mnist", "pdp-cnn-mnist"),
		"pdp-fashion-mnist": preset("fashion-mnist", "pdp-cnn-mnist"),
		"pdp-svhn":          preset("svhn", "pdp-cnn-svhn"),
	}
}

// accounting returns the configured accounting ("" means pld: every PDP
// method's step is a Poisson-subsampled Gaussian, whose PLD is proven).
func (c *PDPConfig) accounting() pdpsgd.Accounting {
	if c.Accounting == "" {
		return pdpsgd.DefaultAccounting()
	}
	return pdpsgd.Accounting(c.Accounting)
}

// pdpLoss returns the configured threshold loss.
func (c *PDPConfig) loss() pdpsgd.Loss {
	return pdpsgd.Loss{Adaptive: c.ThresholdLoss == "adaptive", W1: c.W1, W2: c.W2}
}

// validatePDP checks the settings every personalized-DP method uses (the
// method's own are Method.Validate's); a method-specific setting given to a
// method that does not use it (m.Flags) is refused.
func (c *TrainConfig) validatePDP(m Method) error {
	if err := c.validatePDPRun(); err != nil {
		return err
	}
	p := &c.PDP
	switch {
	case p.ThresholdLoss != "fixed" && p.ThresholdLoss != "adaptive":
		return invalid("threshold loss must be fixed or adaptive, got %q", p.ThresholdLoss)
	case p.Accounting != "" && pdpsgd.Accounting(p.Accounting).Validate() != nil:
		return invalid("%v", pdpsgd.Accounting(p.Accounting).Validate())
	case p.AdaPDPRounds != "" && !c.uses("adapdp-rounds"):
		return invalid("adapdp rounds apply to pdp-adapdp only and must be %s or %s, got %q for %s", adaPDPThreshold, adaPDPSteps, p.AdaPDPRounds, c.Method)
	case p.SamplingDraw != "" && !c.uses("sampling-draw"):
		return invalid("sampling draw applies to pdp-sampling only and must be %s or %s, got %q for %s", samplingPerStep, samplingOnce, p.SamplingDraw, c.Method)
	case p.NoiseGuard != 0 && !c.uses("noise-guard"):
		return invalid("the noise guard applies to pdp-sgd only (its rounds continue one model), got %v for %s (set --noise-guard 0)", p.NoiseGuard, c.Method)
	}
	if acc := p.accounting(); acc != pdpsgd.AccountingPaper {
		// The ledger's accountant refuses options it would ignore (an
		// interval on RDP, conversion mironov on PLD).
		if _, err := privacy.NewAccountant(string(acc), privacy.AccountantConfig{Conversion: privacy.Conversion(c.Conversion), Interval: c.PLDInterval}); err != nil {
			return invalid("pdp accounting %s: %v", acc, err)
		}
	}
	if err := (pdpsgd.NoiseGuard{Factor: p.NoiseGuard}).Validate(); err != nil {
		return invalid("%v", err)
	}
	if err := p.loss().Validate(); err != nil {
		return invalid("%v", err)
	}
	return p.validateBudgetGroups()
}

// validatePDPRun checks a personalized-DP run's sampling, learning rate,
// noise settings and length, and refuses the SGD family's target ε and
// corruptions.
func (c *TrainConfig) validatePDPRun() error {
	if c.Dataset == "" || c.Model == "" {
		return invalid("dataset and model are required")
	}
	if err := c.validateBatchLR(); err != nil {
		return err
	}
	switch {
	case !(c.ClipNorm > 0) || !finite(c.ClipNorm):
		return invalid("clipping norm R must be finite and > 0 for %s, got %v", c.Method, c.ClipNorm)
	case !(c.Delta > 0 && c.Delta < 1):
		return invalid("δ must be in (0, 1), got %v", c.Delta)
	case c.Conversion != "" && c.Conversion != "bbg" && c.Conversion != "mironov":
		return invalid("conversion must be bbg or mironov, got %q", c.Conversion)
	}
	return c.validatePDPLength()
}

// validatePDPLength checks the rounds and their length, and refuses the SGD
// family's target ε and corruptions.
func (c *TrainConfig) validatePDPLength() error {
	p := &c.PDP
	switch {
	case c.TargetEpsilon != 0:
		return invalid("%s spends the per-example budgets (--budgets, --budget-*), not a target ε (set --target-epsilon 0 or use --preset pdp-mnist)", c.Method)
	case c.Corruption != "" && c.Corruption != "none" || c.CorruptionRatio != 0:
		return invalid("%s does not support corruptions (set --corruption none --corruption-ratio 0 or use --preset pdp-mnist)", c.Method)
	case p.Rounds < 1:
		return invalid("rounds must be ≥ 1, got %d", p.Rounds)
	case c.Steps < 0:
		return invalid("steps must be ≥ 0, got %d", c.Steps)
	case p.RoundEpochs < 0 || !finite(p.RoundEpochs):
		return invalid("epochs per round must be finite and ≥ 0, got %v", p.RoundEpochs)
	case c.Steps == 0 && (!(p.RoundEpochs > 0) || !finite(p.RoundEpochs)):
		return invalid("epochs per round must be finite and > 0 (or set steps), got %v", p.RoundEpochs)
	}
	return nil
}

// validateBudgetGroups checks generated budget groups on a stand-in size
// (the real one is known after loading, and GroupCounts bounds the groups
// by it); a budgets file is checked when read.
func (p *PDPConfig) validateBudgetGroups() error {
	if p.BudgetsFile != "" {
		return nil
	}
	if p.BudgetGroups > maxBudgetGroups {
		return invalid("%d budget groups: at most %d (and at most one per example)", p.BudgetGroups, maxBudgetGroups)
	}
	if _, _, err := (pdpsgd.GroupSpec{Groups: p.BudgetGroups, Min: p.BudgetMin, Max: p.BudgetMax, K: p.BudgetK}).GroupCounts(max(p.BudgetGroups, 1)); err != nil {
		return invalid("%v", err)
	}
	return nil
}

// defaultPDPNoiseGuard is the pdp-* presets' noise guard for pdp-sgd: skip a
// round whose noise per expected participant is more than 4× the first
// round's. Measured at the paper's length (MNIST and Fashion-MNIST, 2
// rounds, docs/pdp-evidence.md): loss_f's second rounds are at 1.5–2× and
// change accuracy by under a point either way; loss_a's are at 12× (RDP)
// and 35× (PLD) and cost 4–32 points.
const defaultPDPNoiseGuard = 4

// noiseGuard reports whether pdp-sgd's noise guard skips the planned round
// (and so ends the run), logging the decision to metrics.jsonl.
func (j *pdpJob) noiseGuard(metrics *runLogs, plan pdpsgd.Round) (bool, error) {
	charged := j.st.Ledger.Rounds()
	if !j.cfg.method().pdp.noiseGuard || len(charged) == 0 {
		return false, nil
	}
	skip, why := pdpsgd.NoiseGuard{Factor: j.cfg.PDP.NoiseGuard}.Skip(charged[0], plan)
	if !skip {
		return false, nil
	}
	j.st.Skipped = why
	return true, metrics.public.Write(map[string]any{"step": j.st.NextStep, "round": plan.Index + 1, "skipped": "noise-guard",
		"tau": plan.Tau, "sigma": plan.Sigma, "participants": plan.Participants, "noise_ratio": plan.NoiseRatio(),
		"first_noise_ratio": charged[0].NoiseRatio(), "noise_guard": j.cfg.PDP.NoiseGuard})
}
