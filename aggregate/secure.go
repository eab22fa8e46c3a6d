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

// secureRelease is the floating-point-safe release of sum, tsum and
// ptr-tsum, their default (Config.FloatNoise opts out). Float noise added
// to a float aggregate leaks the data through the set of representable
// outputs (Mironov, CCS 2012: a released float32 y = s + float32(σ·N)
// reveals s by which multiples of a power of two y can be). The secure release keeps floating point out of everything
// the privacy proof covers, and is an exact function of the output of the
// continuous mechanism the float path claims, so it is accounted exactly
// as that mechanism (same PLD, same RDP: post-processing); docs/secure-release.md
// gives the whole argument.
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
//     order and parallelism). The sum rule takes it inside the trainer's
//     per-example pass, row by row while each row is in cache (ChunkSum's
//     grid mode, securechunks.go); tsum and ptr-tsum, which sort the rows,
//     take it from the matrix (prepare). Both give the same integers.
//  4. Noise. J_j = round(s·X_j), X_j ∼ N(0, 1) independent, drawn exactly
//     with integer operations (exactnoise.RoundedNormal: an exact normal
//     sampler whose fraction is kept as lazily drawn bits, rounded exactly
//     by interval refinement), s = σR' — exactly when σR' has at
//     most 64 significant bits, else the next 64-bit dyadic above
//     (s − σR' < 2⁻⁶³·σR'; a larger scale is the Gaussian mechanism
//     followed by independent extra noise, so still post-processing).
//  5. Release. (Σ n_i + J)·γ converted to float32. Σ n_i + J =
//     round(Σ n_i + s·X) because Σ n_i is an integer: a deterministic
//     function of the continuous Gaussian mechanism's output
//     Σ n_i + N(0, s²I), which has L2 sensitivity R' and multiplier
//     s/R' = σ. The step is privacy.Gaussian{σ}, exactly as the float path.
//
// ptr-tsum additionally: trimming and the safety margin Δ use the exact
// integer norms ‖n_i‖² (Δ compares them with ⌊(τ/γ)²⌋, which decides
// ‖n_i‖ > τ/γ exactly), so Δ has sensitivity 1 and a passed test bounds the
// trimmed sum's local sensitivity by τ' = τ/γ (Theorem 5.1 applied to the
// rows n_i). The test releases only its bit, drawn exactly with
// probability P[Lap(b) > B − Δ] (exactnoise.LaplaceTail), which is the law
// of [Δ + Lap(b) > B]: post-processing of the Laplace mechanism on Δ. B is
// b·log(1/(2δ₀)) rounded up to a dyadic rational with P[Lap(b) > B] ≤ δ₀
// certified exactly (exactnoise.PTRThreshold). The passed branch's noise
// scale is σ·τ' (again rounded up to 64 bits if needed), so each branch is
// post-processing of the Gaussian mechanism Theorem 4.3 composes, and the
// step is PTRMechanism(cfg) = privacy.PTR{σ, τ/R, b, δ₀}, as the float path.
type secureRelease struct {
	exp    int     // γ = 2^exp
	scale  float64 // 2^−exp
	gamma  float64
	rowMax uint64 // ⌊R'²⌋
	tauMax uint64 // ⌊(τ/γ)²⌋ (ptr-tsum)
	noise  *exactnoise.RoundedNormal
	pass   *exactnoise.RoundedNormal // ptr-tsum's passed branch
	b      *big.Rat                  // ptr-tsum's Laplace scale
	thresh *big.Rat                  // ptr-tsum's threshold B
	mech   privacy.Mechanism

	sumsq []uint64
	mult  []float64
	total []int64    // Σ of all rows after prepare
	ssw   [][]uint64 // per-worker partial squared norms of the rows
	orw   [][]uint64 // per-worker OR of the rows' |n| (overflow bound)
	seeds [][32]byte
	ybuf  []int64
}

const secureGridBits = 14

// newSecure builds the secure release for σ, R (and, when ptr, τ, b, δ₀).
func newSecure(cfg PTROptions, ptr bool) (*secureRelease, error) {
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
	sz := new(big.Float).SetPrec(512).Mul(exact(cfg.Sigma), rp) // σR', exact (≤ 106 bits)
	if s.noise, _, err = exactnoise.RoundedNormalAtLeast(sz); err != nil {
		return nil, fmt.Errorf("secure noise: %w", err)
	}
	s.mech = privacy.Gaussian{Sigma: cfg.Sigma}
	if !ptr {
		return s, nil
	}
	tp := exact(cfg.Tau)
	tp.SetMantExp(tp, -s.exp) // τ' = τ/γ
	if s.tauMax, err = floorSquare(tp); err != nil {
		return nil, err
	}
	s2 := new(big.Float).SetPrec(512).Mul(exact(cfg.Sigma), tp) // σ·τ', exact
	if s.pass, _, err = exactnoise.RoundedNormalAtLeast(s2); err != nil {
		return nil, fmt.Errorf("secure noise: passed branch: %w", err)
	}
	if !(cfg.B > 0) || math.IsInf(cfg.B, 0) {
		return nil, fmt.Errorf("secure noise: PTR scale b must be finite and > 0, got %v", cfg.B)
	}
	s.b = new(big.Rat).SetFloat64(cfg.B)
	if s.thresh, err = exactnoise.PTRThreshold(cfg.B, cfg.Delta0); err != nil {
		return nil, fmt.Errorf("secure noise: %w", err)
	}
	m := cfg.Mechanism()
	s.mech = m
	return s, m.Validate()
}

// ptrPasses draws the PTR test's bit for the safety margin delta: true
// with probability exactly P[Lap(b) > B − Δ] (the test passes).
func (s *secureRelease) ptrPasses(delta int, rng *rand.Rand) bool {
	t := new(big.Rat).Sub(s.thresh, new(big.Rat).SetInt64(int64(delta)))
	return exactnoise.LaplaceTail(rng, t, s.b)
}

// threshold returns B as a float64 (rounded to nearest; for reports).
func (s *secureRelease) threshold() float64 {
	f, _ := s.thresh.Float64()
	return f
}

func floorSquare(x *big.Float) (uint64, error) {
	sq := new(big.Float).SetPrec(1024).Mul(x, x)
	v, _ := sq.Int(nil) // truncation = floor for x² ≥ 0
	if !v.IsUint64() || v.Uint64() > 1<<62 {
		return 0, fmt.Errorf("secure noise: grid too fine for the clipping norm")
	}
	return v.Uint64(), nil
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

// rowSumSq returns Σ_j trunc(g_j·mult/γ)² exactly (false on overflow):
// scaledSumSq with s = 1 (fl32(1·v) = v).
func (s *secureRelease) rowSumSq(r []float32, mult float64) (uint64, bool) {
	return s.scaledSumSq(r, 1, mult)
}

// release writes (Σ_{all rows} n_i − Σ_{i∈excluded} n_i + J)·γ into out,
// J_j ∼ noise, after prepare (releaseTotal).
func (s *secureRelease) release(g Grads, excluded []int, noise *exactnoise.RoundedNormal, rng *rand.Rand, out []float32) {
	for _, i := range excluded {
		s.addRow(s.total, row(g, i), s.mult[i], -1)
	}
	s.releaseTotal(g.P, noise, rng, out)
}

// releaseTotal writes (s.total + J)·γ into out (p values), J_j ∼ noise:
// the noise of coordinate block b (4096 coordinates) is drawn from a
// ChaCha8 stream keyed by 32 bytes of rng, taken in block order, so blocks
// are sampled in parallel and the release is a function of rng's stream
// alone.
func (s *secureRelease) releaseTotal(p int, noise *exactnoise.RoundedNormal, rng *rand.Rand, out []float32) {
	total := s.total
	const block = 4096
	nb := (p + block - 1) / block
	if cap(s.seeds) < nb {
		s.seeds = make([][32]byte, nb)
	}
	seeds := s.seeds[:nb]
	for b := range seeds {
		for k := 0; k < 4; k++ {
			binary.LittleEndian.PutUint64(seeds[b][8*k:], rng.Uint64())
		}
	}
	if len(s.ybuf) != p {
		s.ybuf = make([]int64, p)
	}
	parallelRange(nb, p*64, func(b int) {
		lo, hi := b*block, min((b+1)*block, p)
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

// secureUnlessFloat returns the secure release of a Gaussian-noise rule
// (sum, tsum) unless the options opt out (float) or add no noise (σ = 0,
// the exact non-private release), else nil.
func secureUnlessFloat(float bool, sigma, clip float64) (*secureRelease, error) {
	if float || sigma == 0 {
		return nil, nil
	}
	return newSecure(PTROptions{Sigma: sigma, ClipNorm: clip}, false)
}

// gaussianStep is the mechanism of a Gaussian-noise rule's step: the
// Gaussian with multiplier σ (its secure release post-processes that same
// mechanism), or nil without noise (σ = 0).
func gaussianStep(sec *secureRelease, sigma float64) privacy.Mechanism {
	switch {
	case sec != nil:
		return sec.Mechanism()
	case sigma > 0:
		return privacy.Gaussian{Sigma: sigma}
	}
	return nil
}
