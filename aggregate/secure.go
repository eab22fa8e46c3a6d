package aggregate

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/privtrain/privtrain/exactnoise"
	"github.com/privtrain/privtrain/internal/vec"
	"github.com/privtrain/privtrain/privacy"
)

// Secure (Config.Secure) is the floating-point-safe release of sum, tsum and
// ptr-tsum. Float noise added to a float aggregate leaks the data through
// the set of representable outputs (Mironov, CCS 2012: a released
// float32 y = s + float32(σ·N) reveals s by which multiples of a power of
// two y can be). The secure release avoids floating point in everything the
// privacy proof covers:
//
//  1. Grid. γ = 2^e with e = ⌊log₂(σR)⌋ − 14, so the noise standard
//     deviation σR spans 2¹⁴ to 2¹⁵ grid steps (the grid error is below 1/16384
//     of the noise per example and coordinate).
//  2. Rows. Each clipped gradient g_i becomes the integer vector
//     n_i = trunc(g_i/γ) (rounded toward zero, exact: g_i/γ is a power-of-two
//     scaling of a float32), so |n_ij| ≤ |g_ij|/γ and ‖n_i‖₂ ≤ ‖g_i‖₂/γ ≤
//     R' := R/γ. The squared norm ‖n_i‖² is computed exactly in integers and
//     checked against ⌊R'²⌋; a row above it (possible only if clipping left
//     ‖g_i‖ slightly above R) is scaled down deterministically until it
//     passes. So every row satisfies ‖n_i‖₂ ≤ R' exactly: the L2
//     sensitivity of an integer sum of rows is R' under add/remove
//     adjacency — no inflation for rounding.
//  3. Sum. Σ n_i over the released rows, in int64 (exact, independent of
//     order and parallelism).
//  4. Noise. Y_j ∼ N_Z(0, σ_Z²) independently (exactnoise, exact rejection
//     sampling) with the integer σ_Z² = ⌈(σR')²⌉ ≥ (σR')², so the step
//     is the discrete Gaussian mechanism with multiplier σ_Z/R' ≥ σ
//     (privacy.DiscreteGaussian, CKS20 Theorem 14), reported with σ_Z/R'
//     rounded down.
//  5. Release. (Σ n_i + Y)·γ converted to float32: a deterministic function
//     of the integer vector, i.e. post-processing.
//
// ptr-tsum additionally: trimming and the safety margin Δ use the exact
// integer norms ‖n_i‖² (Δ compares them with ⌊(τ/γ)²⌋, which decides
// ‖n_i‖ > τ/γ exactly), so Δ has sensitivity 1 and a passed test bounds the
// trimmed sum's local sensitivity by τ/γ (Theorem 5.1 applied to the rows
// n_i). The test adds discrete Laplace noise of scale K·b (exact: any
// finite float64 is a ratio of integers) to the integer K·Δ, K = 2¹⁰ (the
// granularity makes the test's RDP within 0.1% of the continuous Laplace's,
// see privacy.DiscreteLaplace), and passes when K·Δ + Z > T, with T the
// smallest integer for which Pr[Z > T] = e^{−(T+1)/(Kb)}/(1+e^{−1/(Kb)}) ≤ δ₀
// (checked in float64 with a relative margin of 1e-9). The noisy margin
// Δ̂ = (K·Δ + Z)/K is an exact function of that integer. The passed branch's noise is N_Z(0, ⌈σ_Z²(τ/R)²⌉), at
// least τ·σ_Z relative to R' as Theorem 4.3 needs; the step is
// privacy.PTRDiscrete{σ_Z/R', τ/R (both rounded down), b, δ₀, K}.
type secureRelease struct {
	exp    int     // γ = 2^exp
	scale  float64 // 2^−exp
	gamma  float64
	rowMax uint64 // ⌊R'²⌋
	tauMax uint64 // ⌊(τ/γ)²⌋ (ptr-tsum)
	noise  *exactnoise.Gaussian
	pass   *exactnoise.Gaussian // ptr-tsum's passed branch
	lap    exactnoise.Laplace
	thresh int64
	mech   privacy.Mechanism

	sumsq []uint64
	mult  []float64
	total []int64    // Σ of all rows after prepare
	ssw   [][]uint64 // per-worker partial squared norms of the rows
	orw   [][]uint64 // per-worker OR of the rows' |n| (overflow bound)
	seeds [][32]byte
	ybuf  []int64
}

const (
	secureGridBits        = 14
	secureTestGranularity = 1 << 10
)

// newSecure builds the secure release for σ, R (and, when ptr, τ, b, δ₀).
func newSecure(cfg Config, ptr bool) (*secureRelease, error) {
	if !(cfg.Sigma > 0) {
		return nil, fmt.Errorf("secure noise needs σ > 0")
	}
	_, e := math.Frexp(cfg.Sigma * cfg.ClipNorm) // σR ∈ [2^(e−1), 2^e)
	s := &secureRelease{exp: e - 1 - secureGridBits}
	s.scale, s.gamma = math.Ldexp(1, -s.exp), math.Ldexp(1, s.exp)
	if s.exp < -100 || s.exp > 100 {
		return nil, fmt.Errorf("secure noise: σR = %v is outside the supported range", cfg.Sigma*cfg.ClipNorm)
	}
	exact := func(v float64) *big.Float { return new(big.Float).SetPrec(512).SetFloat64(v) }
	rp := exact(cfg.ClipNorm)
	rp.SetMantExp(rp, -s.exp) // R' = R/γ, exact
	var err error
	if s.rowMax, err = floorSquare(rp); err != nil {
		return nil, err
	}
	sz := new(big.Float).SetPrec(512).Mul(exact(cfg.Sigma), rp) // σR', exact
	s2, err := ceilSquare(sz)
	if err != nil {
		return nil, err
	}
	if s.noise, err = exactnoise.NewGaussian(s2); err != nil {
		return nil, err
	}
	sigmaEff := ratioDown(sqrtBig(s2), rp) // σ_Z/R' rounded down
	s.mech = privacy.DiscreteGaussian{Sigma: sigmaEff}
	if !ptr {
		return s, nil
	}
	tp := exact(cfg.Tau)
	tp.SetMantExp(tp, -s.exp) // τ' = τ/γ
	if s.tauMax, err = floorSquare(tp); err != nil {
		return nil, err
	}
	// σ_Z2² = ⌈σ_Z²·(τ/R)²⌉ = ⌈σ_Z²·τ'²/R'²⌉.
	num := new(big.Float).SetPrec(512).Mul(tp, tp)
	num.Mul(num, new(big.Float).SetPrec(512).SetUint64(s2))
	den := new(big.Float).SetPrec(512).Mul(rp, rp)
	q := new(big.Float).SetPrec(512).Quo(num, den)
	s2pass, err := ceilFloat(q)
	if err != nil {
		return nil, err
	}
	if s.pass, err = exactnoise.NewGaussian(max(s2pass, 1)); err != nil {
		return nil, err
	}
	scale := cfg.B * secureTestGranularity // exact: a power-of-two multiple
	if s.lap, err = exactnoise.NewLaplace(scale); err != nil {
		return nil, err
	}
	if s.lap.Scale() != scale {
		return nil, fmt.Errorf("secure noise: PTR scale b = %v is not represented exactly", cfg.B)
	}
	s.thresh = discreteLaplaceThreshold(scale, cfg.Delta0)
	s.mech = privacy.PTRDiscrete{Sigma1: sigmaEff, Tau: ratioDown(exact(cfg.Tau), exact(cfg.ClipNorm)), B: cfg.B, Delta0: cfg.Delta0, K: secureTestGranularity}
	return s, s.mech.Validate()
}

// discreteLaplaceThreshold returns the smallest integer T ≥ 0 with
// Pr[Z > T] = e^{−(T+1)/b}/(1+e^{−1/b}) ≤ δ₀·(1 − 1e-9).
func discreteLaplaceThreshold(b, delta0 float64) int64 {
	logTail := func(t int64) float64 { return -float64(t+1)/b - math.Log1p(math.Exp(-1/b)) }
	target := math.Log(delta0) + math.Log1p(-1e-9)
	t := max(int64(math.Ceil(b*(-target-math.Log1p(math.Exp(-1/b)))))-1, 0)
	for t > 0 && logTail(t-1) <= target {
		t--
	}
	for logTail(t) > target {
		t++
	}
	return t
}

func floorSquare(x *big.Float) (uint64, error) {
	sq := new(big.Float).SetPrec(1024).Mul(x, x)
	v, _ := sq.Int(nil) // truncation = floor for x² ≥ 0
	if !v.IsUint64() || v.Uint64() > 1<<62 {
		return 0, fmt.Errorf("secure noise: grid too fine for the clipping norm")
	}
	return v.Uint64(), nil
}

func ceilSquare(x *big.Float) (uint64, error) {
	return ceilFloat(new(big.Float).SetPrec(1024).Mul(x, x))
}

func ceilFloat(x *big.Float) (uint64, error) {
	v, acc := x.Int(nil)
	if acc == big.Below {
		v.Add(v, big.NewInt(1))
	}
	if !v.IsUint64() || v.Uint64() > 1<<62 {
		return 0, fmt.Errorf("secure noise: variance %v out of range", x)
	}
	return v.Uint64(), nil
}

func sqrtBig(v uint64) *big.Float {
	return new(big.Float).SetPrec(512).Sqrt(new(big.Float).SetPrec(512).SetUint64(v))
}

// ratioDown returns a/b rounded toward zero to float64 (a, b > 0). The
// quotient is computed to 512 bits, far below float64's precision, and the
// result is then nudged down one ulp to cover that error.
func ratioDown(a, b *big.Float) float64 {
	q := new(big.Float).SetPrec(512).Quo(a, b)
	f, _ := q.Float64()
	return math.Nextafter(f, 0)
}

// Mechanism is the step's (not subsampled) mechanism.
func (s *secureRelease) Mechanism() privacy.Mechanism { return s.mech }

// prepare computes every row's exact squared norm on the grid, shrinking
// rows above ⌊R'²⌋ (see secureRelease), and the exact integer sum of all
// rows into s.total. The gradients are read once, in column blocks
// (sumBlocks) whose accumulators stay in cache across the rows; each worker
// owns whole column blocks and keeps per-row partial squared norms, which
// are then added in integers, so nothing depends on the number of workers.
// A row whose norm is too large, or whose values exceed the fast path's
// overflow bound, is subtracted again exactly and redone by the careful
// path (prepareRow).
func (s *secureRelease) prepare(g Grads) error {
	if cap(s.sumsq) < g.M {
		s.sumsq, s.mult = make([]uint64, g.M), make([]float64, g.M)
	}
	s.sumsq, s.mult = s.sumsq[:g.M], s.mult[:g.M]
	if len(s.total) != g.P {
		s.total = make([]int64, g.P)
	}
	block, nb := sumBlocks(g.P)
	workers := 1
	if g.M*g.P >= 1<<14 {
		workers = max(min(runtime.GOMAXPROCS(0), nb), 1)
	}
	if len(s.ssw) < workers || len(s.ssw[0]) < g.M {
		s.ssw, s.orw = make([][]uint64, workers), make([][]uint64, workers)
		for w := range s.ssw {
			s.ssw[w], s.orw[w] = make([]uint64, g.M), make([]uint64, g.M)
		}
	}
	k := float32(s.scale)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			ss, ors := s.ssw[w][:g.M], s.orw[w][:g.M]
			clear(ss)
			clear(ors)
			for b := w; b < nb; b += workers {
				lo, hi := b*block, min((b+1)*block, g.P)
				acc := s.total[lo:hi]
				clear(acc)
				for i := 0; i < g.M; i++ {
					sq, or := addBlock(acc, g.G[i*g.P+lo:i*g.P+hi], k)
					ss[i] += sq
					ors[i] |= or
				}
			}
		}(w)
	}
	wg.Wait()
	// Every |n| < 2^lim gives Σ n² < P·2^(2·lim) < 2⁶⁴: the sums are exact.
	lim := uint(64-bits.Len(uint(g.P))) / 2
	for i := 0; i < g.M; i++ {
		var sq, or uint64
		for w := 0; w < workers; w++ {
			sq += s.ssw[w][i]
			or |= s.orw[w][i]
		}
		s.mult[i] = 1
		if or>>lim == 0 && sq <= s.rowMax {
			s.sumsq[i] = sq
			continue
		}
		s.addRow(s.total, row(g, i), 1, -1)
		if err := s.prepareRow(g, i); err != nil {
			return err
		}
		s.addRow(s.total, row(g, i), s.mult[i], 1)
	}
	return nil
}

// maxSumBlock is the longest column block of prepare: each row adds its
// part of a block in one sequential run, into 16,384 int64 accumulators
// (128 KiB, in L2). Long runs keep the hardware prefetcher streaming: on
// the MNIST CNN's 256 × 26,010 batch, prepare took 5.3 CPU-ms with blocks
// of 4,096 columns, 4.5 with 8,192 and 3.6 with 16,384 (Zen 4, AVX-512).
const maxSumBlock = 16384

// sumBlocks returns prepare's column blocking for rows of p values
// (vec.ColumnBlocks: an even number of blocks when p > maxSumBlock, so
// that two workers get equal shares). The integer sums do not depend on it.
func sumBlocks(p int) (b, nb int) { return vec.ColumnBlocks(p, maxSumBlock) }

// addBlock adds n_j = trunc(r_j·k) to acc_j (exact: k is a power of two,
// so r_j·k is exact in float32 and truncated by the conversion) and returns
// Σ n_j² (wrapping) and the OR of the |n_j|, by which the caller checks
// that the sum did not wrap. vec.AddGrid does the work (SIMD where the
// CPU has it; bit-identical to its Go loop at every level).
func addBlock(acc []int64, r []float32, k float32) (sq, or uint64) {
	return vec.AddGrid(acc, r[:len(acc)], k)
}

// prepareRow sets sumsq[i] and mult[i] for row i by the careful path:
// exact squared norms with overflow checks, shrinking the row until it is
// within ⌊R'²⌋.
func (s *secureRelease) prepareRow(g Grads, i int) error {
	s.mult[i] = 1
	for iter := 0; ; iter++ {
		ss, ok := s.rowSumSq(row(g, i), s.mult[i])
		if !ok || iter > 60 {
			return fmt.Errorf("secure noise: gradient %d cannot be brought within the clipping norm on the grid (norm %v, R = %v)", i, g.Norms[i], math.Sqrt(float64(s.rowMax))*s.gamma)
		}
		if ss <= s.rowMax {
			s.sumsq[i] = ss
			return nil
		}
		s.mult[i] *= math.Sqrt(float64(s.rowMax)/float64(ss)) * (1 - 1.0/(1<<20))
	}
}

// addRow adds sign·trunc(r·mult/γ) to acc.
func (s *secureRelease) addRow(acc []int64, r []float32, mult float64, sign int64) {
	k := s.scale * mult
	acc = acc[:len(r)]
	for j, v := range r {
		acc[j] += sign * int64(float64(v)*k)
	}
}

// rowSumSq returns Σ_j trunc(g_j·mult/γ)² exactly (false on overflow).
// Every |n_j| ≤ 2³¹, so each square is < 2⁶²; the sum is checked for
// overflow every 2 terms' worth of headroom by accumulating in uint64 and
// testing the carry.
func (s *secureRelease) rowSumSq(r []float32, mult float64) (uint64, bool) {
	var sum uint64
	k := s.scale * mult
	for _, v := range r {
		n := int64(float64(v) * k)
		if n > 1<<31 || n < -(1<<31) {
			return 0, false
		}
		var c uint64
		sum, c = bits.Add64(sum, uint64(n*n), 0)
		if c != 0 {
			return 0, false
		}
	}
	return sum, true
}

// release writes (Σ_{all rows} n_i − Σ_{i∈excluded} n_i + Y)·γ into out,
// Y_j ∼ noise, after prepare. The noise of coordinate block b (4096
// coordinates) is drawn from a ChaCha8 stream keyed by 32 bytes of rng,
// taken in block order, so blocks are sampled in parallel and the release
// is a function of rng's stream alone.
func (s *secureRelease) release(g Grads, excluded []int, noise *exactnoise.Gaussian, rng *rand.Rand, out []float32) {
	total := s.total
	for _, i := range excluded {
		s.addRow(total, row(g, i), s.mult[i], -1)
	}
	const block = 4096
	nb := (g.P + block - 1) / block
	if cap(s.seeds) < nb {
		s.seeds = make([][32]byte, nb)
	}
	seeds := s.seeds[:nb]
	for b := range seeds {
		for k := 0; k < 4; k++ {
			binary.LittleEndian.PutUint64(seeds[b][8*k:], rng.Uint64())
		}
	}
	if len(s.ybuf) != g.P {
		s.ybuf = make([]int64, g.P)
	}
	parallelRange(nb, g.P*64, func(b int) {
		lo, hi := b*block, min((b+1)*block, g.P)
		y := s.ybuf[lo:hi]
		noise.Fill(rand.New(rand.NewChaCha8(seeds[b])), y)
		for j := lo; j < hi; j++ {
			out[j] = float32(float64(total[j]+y[j-lo]) * s.gamma)
		}
	})
}

// parallelRange runs f(0..n−1) on GOMAXPROCS goroutines, or inline when
// the work (in elementary operations) is too small to pay for them.
func parallelRange(n, work int, f func(int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 || work < 1<<14 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += workers {
				f(i)
			}
		}(w)
	}
	wg.Wait()
}

// sum releases the secure SUM of all rows.
func (s *secureRelease) sum(g Grads, rng *rand.Rand, out []float32) error {
	if err := s.prepare(g); err != nil {
		return err
	}
	s.release(g, nil, s.noise, rng, out)
	return nil
}

// sortBySumSq fills idx with 0..M−1 ordered by ascending exact squared grid
// norm, ties broken by index.
func (s *secureRelease) sortBySumSq(idx []int) []int {
	idx = idx[:0]
	for i := range s.sumsq {
		idx = append(idx, i)
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(s.sumsq[a], s.sumsq[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return idx
}

// safetyMargin is SafetyMargin on the exact squared grid norms of the rows
// sorted by idx: LS^(k) = ‖n_(m−f+1+k)‖ > τ/γ ⟺ its squared norm > ⌊(τ/γ)²⌋.
func (s *secureRelease) safetyMargin(idx []int, f int) int {
	m := len(idx)
	for k := 0; k < f; k++ {
		pos := m - f + 1 + k
		if pos >= 1 && s.sumsq[idx[pos-1]] > s.tauMax {
			return k
		}
	}
	return f
}

// secureIfAsked returns the secure release of a Gaussian-noise rule (sum,
// tsum) when cfg asks for it, else nil.
func secureIfAsked(cfg Config) (*secureRelease, error) {
	if !cfg.Secure {
		return nil, nil
	}
	return newSecure(cfg, false)
}

// gaussianStep is the mechanism of a Gaussian-noise rule's step: the
// discrete Gaussian of its secure release, the Gaussian with multiplier σ,
// or nil without noise (σ = 0).
func gaussianStep(sec *secureRelease, sigma float64) privacy.Mechanism {
	switch {
	case sec != nil:
		return sec.Mechanism()
	case sigma > 0:
		return privacy.Gaussian{Sigma: sigma}
	}
	return nil
}
