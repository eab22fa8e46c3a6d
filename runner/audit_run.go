package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/model"
	"github.com/privtrain/privtrain/optim"
	"github.com/privtrain/privtrain/privacy/audit"
)

// ErrRunAuditOptions is wrapped by every error caused by invalid run-audit
// options or an unsupported method.
var ErrRunAuditOptions = errors.New("invalid run audit")

// RunAuditOptions configures a one-run privacy audit of a training run.
type RunAuditOptions struct {
	// Canaries is m, the number of gradient-space canaries (default 1000);
	// each is included independently with probability ½.
	Canaries int
	// Norm is the canaries' gradient norm as a multiple of the clip norm R
	// (default 1: the largest gradient the run admits).
	Norm float64
	// Guesses are the guess counts tried (default m/50, m/20, m/10, m/5,
	// m/2, m); each is tested at a Bonferroni share of 1 − Confidence.
	Guesses []int
	// Confidence is the probability that the reported bound holds
	// (default 0.95).
	Confidence float64
	// Progress receives a progress bar (nil: none).
	Progress io.Writer
}

// RunAuditResult is the outcome of a one-run audit.
type RunAuditResult struct {
	Method  string  `json:"method"`
	Dataset string  `json:"dataset"`
	Model   string  `json:"model"`
	Steps   int     `json:"steps"`
	Q       float64 `json:"sampling_rate"`
	Sigma   float64 `json:"sigma"`
	// ClaimedEpsilon is the run accountant's ε at Delta.
	ClaimedEpsilon float64 `json:"claimed_epsilon"`
	// SecureNoise, FloatNoise and Noise state the audited release as a
	// training run's summary does (Summary.Noise).
	SecureNoise bool   `json:"secure_noise,omitempty"`
	FloatNoise  bool   `json:"float_noise,omitempty"`
	Noise       string `json:"noise,omitempty"`
	// Exceeds is true when EmpiricalEpsilon is above ClaimedEpsilon: the run
	// leaks more than its accountant says (at the stated confidence).
	Exceeds bool `json:"exceeds_claim"`
	// Accountant names the accountant of ClaimedEpsilon ("rdp" or "pld").
	Accountant string  `json:"accountant,omitempty"`
	Delta      float64 `json:"delta"`
	// EmpiricalEpsilon is the larger of the two audits' bounds and Case the
	// audit that gave it; both audits share 1 − Confidence (half each), so
	// the maximum holds with probability ≥ Confidence.
	EmpiricalEpsilon float64 `json:"empirical_epsilon"`
	Case             string  `json:"case"`
	Confidence       float64 `json:"confidence"`
	// Samples is the number of canaries m.
	Samples int `json:"samples"`
	// FinalModel scores canary i by θ₀[j_i] − θ_T[j_i] (black box: the
	// initial and final models). WhiteBox sees every released noisy sum;
	// see whiteBoxScores. Any score gives a valid bound; scores only differ
	// in power.
	FinalModel audit.OneRunResult `json:"final_model"`
	WhiteBox   audit.OneRunResult `json:"white_box"`
	// PTRTests and PTRPassed count the PTR tests and the passed ones.
	PTRTests     int     `json:"ptr_tests,omitempty"`
	PTRPassed    int     `json:"ptr_passed,omitempty"`
	TestAccuracy float64 `json:"test_accuracy"`
	CanaryRows   int     `json:"canary_rows"`
	WallSeconds  float64 `json:"wall_seconds"`
}

// AuditRun trains the private run cfg (no run directory is written) with
// Dirac gradient canaries and audits it in one run (Steinke, Nasr &
// Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS 2023):
// canary i is R·Norm·e_{j_i} on a distinct random coordinate j_i, included
// with probability ½, and then Poisson-sampled at the run's rate like every
// example; after training the auditor ranks the canaries by score, guesses
// the top ones included and the bottom ones excluded, and converts the
// number of correct guesses into an ε lower bound at the run's δ
// (privacy/audit.OneRun).
func AuditRun(ctx context.Context, cfg TrainConfig, opt RunAuditOptions) (*RunAuditResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.Private() {
		return nil, fmt.Errorf("%w: method %q is not supported (want a private SGD method: dpsgd, tsgd-gaussian, tsgd-ptr)", ErrRunAuditOptions, cfg.Method)
	}
	if opt.Canaries == 0 {
		opt.Canaries = 1000
	}
	if opt.Norm == 0 {
		opt.Norm = 1
	}
	if opt.Confidence == 0 {
		opt.Confidence = 0.95
	}
	m := opt.Canaries
	if len(opt.Guesses) == 0 {
		for _, d := range []int{50, 20, 10, 5, 2, 1} {
			if k := m / d; k >= 1 && (len(opt.Guesses) == 0 || opt.Guesses[len(opt.Guesses)-1] != k) {
				opt.Guesses = append(opt.Guesses, k)
			}
		}
	}
	if err := checkRunAudit(opt); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRunAuditOptions, err)
	}
	cfg.Out = "" // no run directory: the noise key stays in memory
	j, err := buildJob(cfg, nil)
	if err != nil {
		return nil, err
	}
	p := j.model.NumParams()
	if m > p {
		return nil, fmt.Errorf("%w: %d canaries need distinct coordinates, the model has only %d parameters", ErrRunAuditOptions, m, p)
	}
	if j.until == math.MaxInt {
		return nil, fmt.Errorf("%w: the run has no length: set --steps, --epochs or --target-epsilon", ErrRunAuditOptions)
	}
	return auditJob(ctx, j, cfg, opt)
}

// checkRunAudit validates the options (defaults applied).
func checkRunAudit(opt RunAuditOptions) error {
	m := opt.Canaries
	switch {
	case m < 2:
		return fmt.Errorf("need at least 2 canaries, got %d", m)
	case !(opt.Norm > 0) || math.IsInf(opt.Norm, 0):
		return fmt.Errorf("canary norm must be finite and > 0, got %v", opt.Norm)
	case !(opt.Confidence > 0 && opt.Confidence < 1):
		return fmt.Errorf("confidence must be in (0, 1), got %v", opt.Confidence)
	}
	for _, k := range opt.Guesses {
		if k < 1 || k > m {
			return fmt.Errorf("guess count %d is not in [1, %d]", k, m)
		}
	}
	return nil
}

// auditJob trains the built job j with canaries and audits it.
func auditJob(ctx context.Context, j *sgdJob, cfg TrainConfig, opt RunAuditOptions) (*RunAuditResult, error) {
	m, p := opt.Canaries, j.model.NumParams()
	rng := rand.New(rand.NewPCG(optim.DeriveSeed(cfg.Seed, "audit-canaries"), 1))
	coords, err := quietCoordinates(j, m, rng)
	if err != nil {
		return nil, err
	}
	included := make([]bool, m)
	for i := range included {
		included[i] = rng.IntN(2) == 1
	}
	q := j.expected / float64(j.train.N)
	can := &optim.DiracCanaries{Coords: coords, Included: included, Norm: opt.Norm * cfg.ClipNorm, Q: q,
		Seed: optim.DeriveSeed(cfg.Seed, "audit-canary-sampling")}
	if err := can.Validate(p); err != nil {
		return nil, err
	}
	j.trainer.SetCanaries(can)

	res := &RunAuditResult{Method: cfg.Method, Dataset: cfg.Dataset, Model: cfg.Model, Q: q, Sigma: cfg.Sigma,
		Delta: cfg.Delta, Confidence: opt.Confidence, Samples: m}
	theta0 := j.model.Params()
	prev := theta0
	var released [][]float32 // released noisy sums at the canary coordinates, SUM steps only
	// The canary's contribution to a released sum after clipping, and the
	// noise standard deviation of a released SUM.
	shift := math.Min(opt.Norm, 1) * cfg.ClipNorm
	noise := cfg.Sigma * cfg.ClipNorm
	var bar interface{ Add(int) error }
	if opt.Progress != nil {
		b := newStepBar(opt.Progress, "audit "+cfg.Method, j.until, j.expected)
		defer b.Finish()
		bar = b
	}
	begin := time.Now()
	step := 0
	for ; step < j.until; step++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("run audit interrupted at step %d: %w", step, err)
		}
		if cfg.TargetEpsilon > 0 {
			ok, err := j.trainer.NextStepFits(cfg.TargetEpsilon)
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
		}
		sr, err := j.trainer.Step(step)
		if err != nil {
			return nil, err
		}
		branch := ptrOutcome(sr)
		if branch != aggregate.NoPTRTest {
			res.PTRTests++
			if branch == aggregate.PTRPassed {
				res.PTRPassed++
			}
		}
		cur := j.model.Params()
		lr := sr.LR
		if branch != aggregate.PTRPassed {
			// The released noisy sum is (θ_t − θ_{t+1})·E[batch]/lr.
			scale := j.expected / lr
			x := make([]float32, m)
			for i, c := range coords {
				x[i] = float32(float64(prev[c]-cur[c]) * scale)
			}
			released = append(released, x)
		}
		prev = cur
		rows, err := can.StepRows(step, p)
		if err != nil {
			return nil, err
		}
		res.CanaryRows += len(rows)
		if bar != nil {
			bar.Add(1)
		}
	}
	res.Steps = step
	res.WallSeconds = time.Since(begin).Seconds()
	black := make([]float64, m)
	for i, c := range coords {
		black[i] = float64(theta0[c] - prev[c])
	}
	white := whiteBoxScores(released, q, shift, noise)
	beta := (1 - opt.Confidence) / 2
	if res.FinalModel, err = audit.OneRun(black, included, opt.Guesses, cfg.Delta, beta); err != nil {
		return nil, err
	}
	if res.WhiteBox, err = audit.OneRun(white, included, opt.Guesses, cfg.Delta, beta); err != nil {
		return nil, err
	}
	res.EmpiricalEpsilon, res.Case = res.FinalModel.Epsilon, "final-model"
	if res.WhiteBox.Epsilon > res.EmpiricalEpsilon {
		res.EmpiricalEpsilon, res.Case = res.WhiteBox.Epsilon, "white-box"
	}
	if j.acct.Steps() > 0 {
		r, err := j.acct.EpsilonFor(cfg.Delta)
		if err != nil {
			return nil, err
		}
		res.ClaimedEpsilon, res.Accountant = r.Epsilon, r.Accountant
	}
	res.Exceeds = res.EmpiricalEpsilon > res.ClaimedEpsilon
	var s Summary
	s.setNoise(cfg)
	res.SecureNoise, res.FloatNoise, res.Noise = s.SecureNoise, s.FloatNoise, s.Noise
	if res.TestAccuracy, err = Accuracy(j.model, j.test.X, j.test.Labels, j.test.Dim()); err != nil {
		return nil, err
	}
	return res, nil
}

// logMix returns log(1 − q + q·e^z) without overflow.
func logMix(q, z float64) float64 {
	if z > 0 {
		return z + math.Log(q+(1-q)*math.Exp(-z))
	}
	return math.Log1p(q * math.Expm1(z))
}

// quietProbe is the number of training examples whose gradients at the
// initial model choose the canary coordinates.
const quietProbe = 256

// quietCoordinates picks the m coordinates where the clipped per-example
// gradients of quietProbe random training examples at the initial model
// have the smallest mean square (ties in random order): there the data's
// own gradient interferes least with the canaries (for logistic regression
// on MNIST, e.g., the weights of always-black border pixels get none). The
// choice looks at the data and the initial model but never at the canaries'
// inclusion bits, which is all the one-run audit's validity needs.
func quietCoordinates(j *sgdJob, m int, rng *rand.Rand) ([]int, error) {
	p, d := j.model.NumParams(), j.train.Dim()
	n := min(quietProbe, j.train.N)
	idx := rng.Perm(j.train.N)[:n]
	b := model.Batch{X: make([]float32, n*d), Labels: make([]int, n), M: n}
	if err := j.train.Gather(idx, b.X, b.Labels, nil); err != nil {
		return nil, fmt.Errorf("run audit: canary coordinates: %w", err)
	}
	g := make([]float32, n*p)
	if err := j.model.PerExampleGrads(b, g, make([]float32, n)); err != nil {
		return nil, fmt.Errorf("run audit: canary coordinates: %w", err)
	}
	power := make([]float64, p)
	for i := 0; i < n; i++ {
		row := g[i*p : (i+1)*p]
		var n2 float64
		for _, v := range row {
			n2 += float64(v) * float64(v)
		}
		scale := 1.0
		if nrm := math.Sqrt(n2); nrm > j.cfg.ClipNorm {
			scale = j.cfg.ClipNorm / nrm
		}
		for k, v := range row {
			power[k] += (scale * float64(v)) * (scale * float64(v))
		}
	}
	order := rng.Perm(p) // random tie-breaking
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(power[a], power[b]) })
	return order[:m], nil
}

// detrendWindow is the half-width (in released steps) of the running median
// that estimates the data's own gradient at a canary coordinate.
const detrendWindow = 10

// whiteBoxScores scores each canary from the released noisy sums x_t at its
// coordinate (released[t][i], steps that released SUM only: the trimmed
// branch drops canaries, whose norm is the largest, so its steps carry no
// signal about them). The data's own gradient at the coordinate drifts
// slowly, so it is estimated by the running median d_t of x over ±10 steps
// (a canary joins a step with probability q only, so it barely moves the
// median); the score is Σ_t log(1 − q + q·exp((x_t − d_t − c/2)·c/s²)), the
// log-likelihood ratio of "included" (x − d ~ (1−q)·N(0, s²) + q·N(c, s²))
// against "excluded" (N(0, s²)), with c the clipped canary norm and s = σR.
func whiteBoxScores(released [][]float32, q, c, s float64) []float64 {
	if len(released) == 0 {
		return nil
	}
	m := len(released[0])
	scores := make([]float64, m)
	win := make([]float64, 0, 2*detrendWindow+1)
	for i := 0; i < m; i++ {
		for t := range released {
			win = win[:0]
			for u := max(0, t-detrendWindow); u <= min(len(released)-1, t+detrendWindow); u++ {
				win = append(win, float64(released[u][i]))
			}
			slices.Sort(win)
			d := win[len(win)/2]
			if len(win)%2 == 0 {
				d = (win[len(win)/2-1] + d) / 2
			}
			x := float64(released[t][i]) - d
			scores[i] += logMix(q, (x-c/2)*c/(s*s))
		}
	}
	return scores
}
